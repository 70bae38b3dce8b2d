// The review comment written in an editor tab of its own (Request Changes needs more than one
// line): a Markdown document of the `change-control-review` scheme, kept in memory; saving it
// sends the review (its text as the comment), closing it unsaved cancels. core/review-draft.ts
// says what is sent and when it may be.
import * as vscode from 'vscode';
import type { ReviewDecision } from '../../contract/api/change-control';
import { documentLabel } from '../core/change-documents';
import { REVIEW_SCHEME, reviewDraftProblem, reviewDraftTemplate, reviewDraftText } from '../core/review-draft';
import { DECISION_VIEW } from '../../contract/labels';
import { DisposableBase } from './disposable';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Draft {
  decision: ReviewDecision;
  template: string;
  text: Uint8Array;
  mtime: number;
  /** Resolves the compose() call (once: sent, or closed unsaved). */
  done(text: string | undefined): void;
  sent: boolean;
}

export class ReviewDrafts extends DisposableBase implements vscode.FileSystemProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.FileChangeEvent[]>());
  readonly onDidChangeFile = this.changed.event;
  private readonly drafts = new Map<string, Draft>();
  private count = 0;

  constructor() {
    super();
    this._register(vscode.workspace.registerFileSystemProvider(REVIEW_SCHEME, this, { isCaseSensitive: true }));
    // Closing the tab unsaved cancels; a sent draft is forgotten once its tab is gone.
    this._register(
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const input = tab.input;
          if (input instanceof vscode.TabInputText) this.finish(input.uri, undefined, true);
        }
      }),
    );
    this._register(vscode.workspace.onDidCloseTextDocument((doc) => this.finish(doc.uri, undefined, true)));
    // Saved (and so sent): its tab closes, now that the document is no longer dirty.
    this._register(
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (!this.drafts.get(doc.uri.toString())?.sent) return;
        for (const group of vscode.window.tabGroups.all)
          for (const tab of group.tabs)
            if (tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === doc.uri.toString())
              void vscode.window.tabGroups.close(tab);
      }),
    );
  }

  /** Opens an editor for the review's comment; resolves with the text once saved, undefined when closed unsaved. */
  compose(decision: ReviewDecision, title: string): Promise<string | undefined> {
    this.count += 1;
    const uri = vscode.Uri.from({
      scheme: REVIEW_SCHEME,
      path: `/${documentLabel(`${DECISION_VIEW[decision].label} on ${title}`, 'Review')}.md`,
      query: `n=${this.count}`,
    });
    return new Promise((resolve) => {
      const template = reviewDraftTemplate(decision, title);
      this.drafts.set(uri.toString(), {
        decision,
        template,
        text: encoder.encode(template),
        mtime: Date.now(),
        done: resolve,
        sent: false,
      });
      void (async () => {
        const doc = await vscode.workspace.openTextDocument(uri);
        // The caret after the guide from the start: what is typed goes below it.
        const end = doc.lineAt(doc.lineCount - 1).range.end;
        await vscode.window.showTextDocument(doc, { preview: false, selection: new vscode.Range(end, end) });
      })().catch(() => this.finish(uri, undefined, true));
    });
  }

  /** Resolves the draft's compose() (a second call does nothing); `forget` drops it (its tab is gone). */
  private finish(uri: vscode.Uri, text: string | undefined, forget = false): void {
    const key = uri.toString();
    const draft = this.drafts.get(key);
    if (!draft) return;
    if (forget) this.drafts.delete(key);
    if (draft.sent) return;
    draft.sent = text !== undefined;
    draft.done(text);
    if (text === undefined) this.drafts.delete(key);
  }

  private draftOf(uri: vscode.Uri): Draft {
    const draft = this.drafts.get(uri.toString());
    if (!draft) throw vscode.FileSystemError.FileNotFound(uri);
    return draft;
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const draft = this.draftOf(uri);
    return { type: vscode.FileType.File, ctime: 0, mtime: draft.mtime, size: draft.text.byteLength };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    return this.draftOf(uri).text;
  }

  /** Saving sends: the text (without its guide) when it may be sent, else the save fails saying why. */
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const draft = this.draftOf(uri);
    draft.text = content;
    draft.mtime = Date.now();
    if (draft.sent) return;
    const text = reviewDraftText(decoder.decode(content), draft.template);
    const problem = reviewDraftProblem(draft.decision, text);
    if (problem) throw vscode.FileSystemError.NoPermissions(problem);
    this.finish(uri, text);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}
