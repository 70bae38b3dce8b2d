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
  text: Uint8Array;
  mtime: number;
  done(text: string | undefined): void;
}

export class ReviewDrafts extends DisposableBase implements vscode.FileSystemProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.FileChangeEvent[]>());
  readonly onDidChangeFile = this.changed.event;
  private readonly drafts = new Map<string, Draft>();
  private count = 0;

  constructor() {
    super();
    this._register(vscode.workspace.registerFileSystemProvider(REVIEW_SCHEME, this, { isCaseSensitive: true }));
    // Closing the tab unsaved cancels.
    this._register(
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const input = tab.input;
          if (input instanceof vscode.TabInputText) this.finish(input.uri, undefined);
        }
      }),
    );
    this._register(vscode.workspace.onDidCloseTextDocument((doc) => this.finish(doc.uri, undefined)));
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
        text: encoder.encode(template),
        mtime: Date.now(),
        done: resolve,
      });
      void (async () => {
        const doc = await vscode.workspace.openTextDocument(uri);
        const editor = await vscode.window.showTextDocument(doc, { preview: false });
        const end = doc.lineAt(doc.lineCount - 1).range.end;
        editor.selection = new vscode.Selection(end, end);
      })().catch(() => this.finish(uri, undefined));
    });
  }

  private finish(uri: vscode.Uri, text: string | undefined): void {
    const key = uri.toString();
    const draft = this.drafts.get(key);
    if (!draft) return;
    this.drafts.delete(key);
    draft.done(text);
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
    const text = reviewDraftText(decoder.decode(content));
    const problem = reviewDraftProblem(draft.decision, text);
    if (problem) throw vscode.FileSystemError.NoPermissions(problem);
    draft.text = content;
    draft.mtime = Date.now();
    this.finish(uri, text);
    // Sent: the tab closes once saved (what was written goes with the review).
    setTimeout(() => {
      for (const group of vscode.window.tabGroups.all)
        for (const tab of group.tabs)
          if (tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === uri.toString())
            void vscode.window.tabGroups.close(tab);
    }, 50);
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
