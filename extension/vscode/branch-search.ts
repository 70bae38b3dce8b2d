// Quick open (Go to File) and Search (Find in Files) over a branch opened as a workspace folder
// (`change-control:/branches/<branch>`). VS Code asks a file search and a text search provider of
// the folder's scheme; both are proposed APIs, lent only to an extension the editor grants them
// (`--enable-proposed-api change-control.change-control`). Where it does not, nothing is
// registered and Go to Object… is the way to find an object. What is asked and matched is in
// core/branch-search.ts.
import * as vscode from 'vscode';
import type { BranchObjectTypeAccess } from '../../contract/api/branching';
import type { ApiObject } from '../core/branch-objects-client';
import {
  findDocuments,
  registerIfLent,
  searchScopeOf,
  searchText,
  type ListObjects,
  type ObjectPage,
  type SearchScope,
} from '../core/branch-search';
import { DOCUMENT_SCHEME } from '../core/change-documents';
import { branchUri, type BranchDocuments } from './branch-documents';
import { DisposableBase } from './disposable';

export interface BranchSearchDeps {
  documents: BranchDocuments;
  log: vscode.LogOutputChannel;
}

export class BranchSearch extends DisposableBase {
  /** Whether quick open and Search list the branch's documents (the editor granted the proposals). */
  readonly fileSearch: boolean;
  readonly textSearch: boolean;

  constructor(private readonly deps: BranchSearchDeps) {
    super();
    const file = registerIfLent(() =>
      vscode.workspace.registerFileSearchProvider2?.(DOCUMENT_SCHEME, {
        provideFileSearchResults: (pattern, options, token) => this.files(pattern, options, token),
      }),
    );
    // The results of a text search are built with the API's own class: without it, no provider.
    const text =
      typeof vscode.TextSearchMatch2 === 'function'
        ? registerIfLent(() =>
            vscode.workspace.registerTextSearchProvider2?.(DOCUMENT_SCHEME, {
              provideTextSearchResults: (query, options, progress, token) => this.text(query, options, progress, token),
            }),
          )
        : { refused: 'the editor has no such API' };
    if ('lent' in file) this._register(file.lent);
    if ('lent' in text) this._register(text.lent);
    this.fileSearch = 'lent' in file;
    this.textSearch = 'lent' in text;
    if (this.fileSearch && this.textSearch)
      deps.log.info("quick open and Search list branch folders' object documents (the editor grants the search APIs)");
    else
      deps.log.info(
        `quick open and Search do not list branch folders' object documents; Go to Object… finds them (file search: ${
          'refused' in file ? file.refused : 'yes'
        }; text search: ${'refused' in text ? text.refused : 'yes'})`,
      );
  }

  /** The branch of a folder, what the user may see in it, and a reader of its objects in name order. */
  private async reader(
    folder: vscode.Uri,
  ): Promise<{ scope: SearchScope; types: BranchObjectTypeAccess[]; list: ListObjects<ApiObject> } | null> {
    const scope = searchScopeOf({ path: folder.path, query: folder.query });
    if (!scope) return null;
    const ctx = await this.deps.documents.context(scope.branch);
    if (!ctx) return null;
    const objects = await this.deps.documents.objectsClient();
    const list = async (
      type: BranchObjectTypeAccess,
      query: { q?: string; limit: number },
    ): Promise<ObjectPage<ApiObject>> => {
      try {
        return await objects.listObjects(ctx, type, { q: query.q, ordering: 'name', limit: query.limit });
      } catch (e) {
        this.deps.log.warn(`searching the ${type.display} objects of ${scope.branch}: ${(e as Error).message}`);
        return { count: 0, results: [] };
      }
    };
    return { scope, types: ctx.access.object_types, list };
  }

  private async files(
    pattern: string,
    options: vscode.FileSearchProviderOptions,
    token: vscode.CancellationToken,
  ): Promise<vscode.Uri[]> {
    const out: vscode.Uri[] = [];
    for (const { folder } of options.folderOptions) {
      const left = options.maxResults - out.length;
      if (token.isCancellationRequested || left <= 0) break;
      const reader = await this.reader(folder);
      if (!reader) continue;
      const { found } = await findDocuments(
        reader.scope,
        reader.types,
        pattern,
        left,
        reader.list,
        () => token.isCancellationRequested,
      );
      for (const { object, address } of found) {
        const uri = branchUri(address);
        this.deps.documents.remember(uri, object.id);
        out.push(uri);
      }
    }
    return out;
  }

  private async text(
    query: vscode.TextSearchQuery2,
    options: vscode.TextSearchProviderOptions,
    progress: vscode.Progress<vscode.TextSearchResult2>,
    token: vscode.CancellationToken,
  ): Promise<vscode.TextSearchComplete2> {
    let left = options.maxResults;
    let limitHit = false;
    for (const { folder } of options.folderOptions) {
      if (token.isCancellationRequested || left <= 0) break;
      const reader = await this.reader(folder);
      if (!reader) continue;
      const result = await searchText(
        reader.scope,
        reader.types,
        query,
        { maxResults: left, charsPerLine: options.previewOptions?.charsPerLine },
        reader.list,
        ({ object, address, matches }) => {
          const uri = branchUri(address);
          this.deps.documents.remember(uri, object.id);
          left -= matches.length;
          for (const m of matches)
            progress.report(
              new vscode.TextSearchMatch2(
                uri,
                [
                  {
                    sourceRange: new vscode.Range(m.start.line, m.start.character, m.end.line, m.end.character),
                    previewRange: new vscode.Range(
                      m.previewStart.line,
                      m.previewStart.character,
                      m.previewEnd.line,
                      m.previewEnd.character,
                    ),
                  },
                ],
                m.preview,
              ),
            );
        },
        () => token.isCancellationRequested,
      );
      limitHit ||= result.limitHit;
    }
    return { limitHit };
  }
}
