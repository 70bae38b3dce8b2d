// Changed objects as documents of the `change-control` scheme (paths in core/change-documents.ts):
// a FileSystemProvider serving each side of a change as YAML, read-only, and a request's
// description as Markdown, writable (saving it PATCHes the request); and a FileDecorationProvider
// colouring each changed object as VS Code colours files in git (added, modified, deleted,
// conflicted).
import * as vscode from 'vscode';
import { asApiError, presentError } from '../core/api-error';
import {
  CHANGE_DECORATION,
  changeDocument,
  changeKind,
  descriptionDocument,
  DOCUMENT_SCHEME,
  objectKey,
  parseDocumentAddress,
  serializeState,
  sideState,
  type ChangeSide,
  type DocumentRef,
} from '../core/change-documents';
import type { ChangeDiff } from '../../contract/api/branching';
import type { DataPart, RequestDataCache } from '../core/request-data';
import { isBranchPath } from '../core/branch-documents';
import type { BranchDocuments } from './branch-documents';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function changeUri(
  changeRequestId: number,
  side: ChangeSide,
  change: Pick<ChangeDiff, 'object_type' | 'object_id' | 'object_repr'>,
): vscode.Uri {
  return vscode.Uri.from({ scheme: DOCUMENT_SCHEME, ...changeDocument(changeRequestId, side, change) });
}

export function descriptionUri(changeRequestId: number, title: string): vscode.Uri {
  return vscode.Uri.from({ scheme: DOCUMENT_SCHEME, ...descriptionDocument(changeRequestId, title) });
}

export function refOf(uri: vscode.Uri): DocumentRef | null {
  return uri.scheme === DOCUMENT_SCHEME ? parseDocumentAddress({ path: uri.path, query: uri.query }) : null;
}

export interface DocumentDeps {
  cache: RequestDataCache;
  connection: Connection;
  log: vscode.LogOutputChannel;
  /** A description was saved: refresh what shows the request. */
  onDescriptionSaved(changeRequestId: number): void;
  /** The branches' objects (`/branches/…`), served by their own provider under this scheme. */
  branches?: BranchDocuments;
}

/** Whether a document of the scheme is a branch's object (branch-documents.ts serves those). */
const isBranchDocument = (uri: vscode.Uri) => isBranchPath(uri.path);

export class ChangeDocuments extends DisposableBase implements vscode.FileSystemProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.FileChangeEvent[]>());
  readonly onDidChangeFile = this.changed.event;
  /** Per request: the description as last read or saved, and the time it last differed (its mtime). */
  private readonly descriptions = new Map<number, { text: string; mtime: number }>();

  constructor(private readonly deps: DocumentDeps) {
    super();
    this._register(vscode.workspace.registerFileSystemProvider(DOCUMENT_SCHEME, this, { isCaseSensitive: true }));
    this._register(deps.cache.onDidChange((id, parts) => this.onData(id, parts)));
    if (deps.branches) this._register(deps.branches.onDidChangeFile((events) => this.changed.fire(events)));
    // Signed out, open documents keep what they show; once connected again, they read it afresh.
    this._register(
      deps.connection.onDidChange((state) => {
        if (state.phase !== 'connected') return;
        const events = vscode.workspace.textDocuments
          .filter((d) => refOf(d.uri))
          .map((d) => ({ type: vscode.FileChangeType.Changed, uri: d.uri }));
        if (events.length) this.changed.fire(events);
      }),
    );
  }

  /** Tells open documents of a request that they changed (VS Code reads them again). */
  private onData(changeRequestId: number, parts: ReadonlySet<DataPart>): void {
    if (!parts.has('changes') && !parts.has('request')) return;
    if (!this.deps.connection.client) return;
    const events: vscode.FileChangeEvent[] = [];
    for (const doc of vscode.workspace.textDocuments) {
      const ref = refOf(doc.uri);
      if (!ref || ref.changeRequestId !== changeRequestId) continue;
      if (ref.kind === 'change' ? parts.has('changes') : parts.has('request'))
        events.push({ type: vscode.FileChangeType.Changed, uri: doc.uri });
    }
    if (events.length) this.changed.fire(events);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  private unavailable(e: unknown): vscode.FileSystemError {
    const message = presentError('Reading the change request', e, { retryable: false }).message;
    return asApiError(e).kind === 'notFound'
      ? vscode.FileSystemError.FileNotFound(message)
      : vscode.FileSystemError.Unavailable(message);
  }

  private async changeOf(uri: vscode.Uri, ref: Extract<DocumentRef, { kind: 'change' }>) {
    // Documents restored with the window are read before the connection is made.
    if (!(await this.deps.connection.settledClient()))
      throw vscode.FileSystemError.Unavailable(
        'Not connected to the Change Control service: sign in, then reopen this change.',
      );
    let data;
    try {
      data = await this.deps.cache.ensure(ref.changeRequestId);
    } catch (e) {
      throw this.unavailable(e);
    }
    const change = data.byObject.get(objectKey({ object_type: ref.objectType, object_id: ref.objectId }));
    if (!change) throw vscode.FileSystemError.FileNotFound(uri);
    return { change, version: data.changesVersion };
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    if (this.deps.branches && isBranchDocument(uri)) return this.deps.branches.stat(uri);
    const ref = refOf(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    if (ref.kind === 'description') {
      const known = this.descriptions.get(ref.changeRequestId) ?? (await this.readDescription(ref.changeRequestId));
      return { type: vscode.FileType.File, ctime: 0, mtime: known.mtime, size: encoder.encode(known.text).byteLength };
    }
    const { change, version } = await this.changeOf(uri, ref);
    return {
      type: vscode.FileType.File,
      ctime: 0,
      mtime: version,
      size: encoder.encode(serializeState(sideState(change, ref.side))).byteLength,
      permissions: vscode.FilePermission.Readonly,
    };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    if (this.deps.branches && isBranchDocument(uri)) return this.deps.branches.readFile(uri);
    const ref = refOf(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    if (ref.kind === 'description') return encoder.encode((await this.readDescription(ref.changeRequestId)).text);
    const { change } = await this.changeOf(uri, ref);
    return encoder.encode(serializeState(sideState(change, ref.side)));
  }

  private async readDescription(changeRequestId: number): Promise<{ text: string; mtime: number }> {
    const client = await this.deps.connection.settledClient();
    if (!client) throw vscode.FileSystemError.Unavailable('Not connected to the Change Control service.');
    let text: string;
    try {
      text = (await client.getChangeRequest(changeRequestId)).description;
    } catch (e) {
      throw this.unavailable(e);
    }
    return this.rememberDescription(changeRequestId, text);
  }

  private rememberDescription(changeRequestId: number, text: string): { text: string; mtime: number } {
    const known = this.descriptions.get(changeRequestId);
    if (known && known.text === text) return known;
    const fresh = { text, mtime: Math.max(Date.now(), (known?.mtime ?? 0) + 1) };
    this.descriptions.set(changeRequestId, fresh);
    return fresh;
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    if (this.deps.branches && isBranchDocument(uri)) return this.deps.branches.writeFile(uri, content);
    const ref = refOf(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    if (ref.kind !== 'description')
      throw vscode.FileSystemError.NoPermissions('A changed object is read-only here: change it in its branch.');
    const client = this.deps.connection.client;
    if (!client) throw vscode.FileSystemError.Unavailable('Not connected to the Change Control service.');
    const text = decoder.decode(content);
    try {
      const updated = await client.updateChangeRequest(ref.changeRequestId, { description: text });
      this.rememberDescription(ref.changeRequestId, updated.description);
      this.deps.cache.putRequest(updated);
      this.deps.log.info(`saved the description of change request #${ref.changeRequestId}`);
    } catch (e) {
      const presented = presentError('Saving the description', e, { retryable: false });
      this.deps.log.warn(presented.message);
      throw asApiError(e).kind === 'forbidden'
        ? vscode.FileSystemError.NoPermissions(presented.message)
        : vscode.FileSystemError.Unavailable(presented.message);
    }
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    this.deps.onDescriptionSaved(ref.changeRequestId);
  }

  readDirectory(uri: vscode.Uri): [string, vscode.FileType][] | Promise<[string, vscode.FileType][]> {
    if (this.deps.branches && isBranchDocument(uri)) return this.deps.branches.readDirectory(uri);
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void | Promise<void> {
    if (this.deps.branches && isBranchDocument(uri)) return this.deps.branches.delete(uri);
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}

/** Colours changed objects (documents and Changed Objects rows) as VS Code colours files in git. */
export class ChangeDecorations extends DisposableBase implements vscode.FileDecorationProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri[] | undefined>());
  readonly onDidChangeFileDecorations = this.changed.event;

  constructor(private readonly cache: RequestDataCache) {
    super();
    this._register(vscode.window.registerFileDecorationProvider(this));
    this._register(
      cache.onDidChange((_id, parts) => {
        if (parts.has('changes')) this.changed.fire(undefined);
      }),
    );
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    const ref = refOf(uri);
    if (ref?.kind !== 'change') return undefined;
    const change = this.cache
      .get(ref.changeRequestId)
      ?.byObject.get(objectKey({ object_type: ref.objectType, object_id: ref.objectId }));
    if (!change) return undefined;
    const look = CHANGE_DECORATION[changeKind(change)];
    return { badge: look.badge, tooltip: look.tooltip, color: new vscode.ThemeColor(look.color), propagate: false };
  }
}
