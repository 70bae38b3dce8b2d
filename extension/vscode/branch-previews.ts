// What would govern a branch, as a read-only Markdown document of the `change-control-preview`
// scheme (core/preview.ts writes the text), shown rendered in Markdown's preview: opened from the
// palette, read afresh each time it is opened, and readable again after a reload (then read from
// the service on demand).
import * as vscode from 'vscode';
import { presentError } from '../core/api-error';
import { branchOfPreviewPath, previewDocumentPath, previewMarkdown, PREVIEW_SCHEME } from '../core/preview';
import type { ApiClient } from '../core/api-client';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

export class BranchPreviews extends DisposableBase implements vscode.TextDocumentContentProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;
  /** The text last read per branch. */
  private readonly texts = new Map<number, string>();

  constructor(private readonly connection: Connection) {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, this));
  }

  /** Reads the branch's preview from the service and shows it (the open document, if any, is updated). */
  async show(client: ApiClient, branch: { id: number; name: string }): Promise<void> {
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: previewDocumentPath(branch.id, branch.name) });
    this.texts.set(branch.id, previewMarkdown(await client.previewBranch(branch.id)));
    this.changed.fire(uri);
    // Rendered (Markdown's own preview), not its source: a reader meets no escapes. Without
    // VS Code's Markdown extension, the text.
    try {
      await vscode.commands.executeCommand('markdown.showPreview', uri);
    } catch {
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc, { preview: true });
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const branchId = branchOfPreviewPath(uri.path);
    if (branchId === null) return '';
    const known = this.texts.get(branchId);
    if (known !== undefined) return known;
    // A document restored with the window: read it once connected.
    const client = await this.connection.settledClient();
    if (!client)
      return 'Not connected to the Change Control service: sign in, then run Preview Policies for Branch again.\n';
    try {
      const text = previewMarkdown(await client.previewBranch(branchId));
      this.texts.set(branchId, text);
      return text;
    } catch (e) {
      return `${presentError('Reading the preview', e, { retryable: false }).message}\n`;
    }
  }
}
