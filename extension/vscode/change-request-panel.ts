// One change request's webview panel: its page (Content-Security-Policy, nonce), the snapshot
// it shows (sent as deltas after the first), the messages it sends checked before acting, and
// the writes it asks for. Loaded when the first panel opens or is restored (change-request-
// panels.ts): activation does without it and the schemas it parses with.
import * as vscode from 'vscode';
import type { ChangeRequest } from '../../contract/api/change-control';
import { presentError } from '../core/api-error';
import { postingBlockedReason } from '../core/connection-state';
import type { CommandId } from '../core/commands';
import { isOpenableLink } from '../core/links';
import { describeOperation, performWrite } from '../core/operations';
import { loadSnapshot } from '../core/snapshot';
import { parseWebviewMessage } from '../core/webview-messages';
import { makeNonce, panelHtml } from '../core/webview-html';
import type { HostToWebview, Operation, PanelAction } from '../../contract/webview/protocol';
import { SnapshotEncoder } from '../../contract/webview/delta';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

const COMMAND_OF_ACTION = {
  submit: 'changeControl.submit',
  return_to_draft: 'changeControl.returnToDraft',
  abandon: 'changeControl.abandon',
  reopen: 'changeControl.reopen',
  run_checks: 'changeControl.runChecks',
  merge: 'changeControl.merge',
  override: 'changeControl.override',
  sync: 'changeControl.syncBranch',
} as const satisfies Record<PanelAction, CommandId>;

export interface PanelDeps {
  extensionUri: vscode.Uri;
  connection: Connection;
  log: vscode.LogOutputChannel;
  /** A panel came to the front: its request becomes the selected one (Checks view). */
  onFocus(cr: ChangeRequest): void;
  /** Something changed on the service: refresh the lists. */
  onChanged(): void;
  /** The page's Refresh: everything shown is read again (the views, the checks, every panel). */
  onRefreshAll?(): Promise<void>;
}

export class ChangeRequestPanel extends DisposableBase {
  private ready = false;
  private queue: HostToWebview[] = [];
  private loading: Promise<void> | undefined;
  private loadAgain = false;
  private last: ChangeRequest | undefined;
  /** Sends a refresh as what changed since the snapshot the webview holds. */
  private readonly encoder = new SnapshotEncoder();

  /** Opened by a click in a tree and not used since: the next such click shows its request here. */
  preview = false;

  constructor(
    readonly panel: vscode.WebviewPanel,
    public changeRequestId: number,
    private readonly deps: PanelDeps,
    private readonly onDispose: () => void,
  ) {
    super();
    const dist = vscode.Uri.joinPath(deps.extensionUri, 'dist');
    panel.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist] };
    panel.webview.html = panelHtml({
      cspSource: panel.webview.cspSource,
      scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
      nonce: makeNonce(),
      title: panel.title,
    });
    this._register(panel.webview.onDidReceiveMessage((raw) => void this.onMessage(raw)));
    this._register(
      panel.onDidChangeViewState((e) => {
        if (e.webviewPanel.active && this.last) this.deps.onFocus(this.last);
      }),
    );
    this._register(
      panel.onDidDispose(() => {
        this.onDispose();
        this.dispose();
      }),
    );
  }

  /** Shows another request in this panel (a preview tab reused): its page is loaded afresh. */
  retarget(changeRequestId: number): void {
    if (changeRequestId === this.changeRequestId) return;
    this.changeRequestId = changeRequestId;
    this.last = undefined;
    this.encoder.reset();
    void this.refresh();
  }

  private post(message: HostToWebview): void {
    if (!this.ready) {
      this.queue.push(message);
      return;
    }
    void this.panel.webview.postMessage(message);
  }

  /**
   * Loads the snapshot and sends it. One load at a time: a refresh asked for while one runs
   * (an event from the live stream, say) loads once more after it, so that nothing is missed.
   */
  refresh(): Promise<void> {
    if (this.loading) {
      this.loadAgain = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.loadAgain = false;
        await this.load();
      } while (this.loadAgain && !this.isDisposed);
    })().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Tells the page whether it can post now (offline: its forms show why not, its text is kept). */
  connectionChanged(): void {
    this.post({ type: 'connection', blocked: postingBlockedReason(this.deps.connection.state) });
  }

  private async load(): Promise<void> {
    const client = this.deps.connection.client;
    const me = this.deps.connection.user;
    // Offline, the page keeps what it shows (its banner says why nothing posts); it reloads once back.
    if ((!client || !me) && this.deps.connection.state.phase === 'offline' && this.last) return;
    if (!client || !me) {
      this.post({
        type: 'loadFailed',
        changeRequestId: this.changeRequestId,
        message: 'Not connected to the Change Control service. Sign in, then refresh.',
      });
      return;
    }
    this.post({ type: 'loading', changeRequestId: this.changeRequestId });
    try {
      const snapshot = await loadSnapshot(client, this.changeRequestId, me);
      this.last = snapshot.changeRequest;
      this.panel.title = snapshot.changeRequest.title || snapshot.changeRequest.branch_name;
      if (this.panel.active) this.deps.onFocus(snapshot.changeRequest);
      this.post(this.encoder.encode(snapshot));
    } catch (e) {
      const message = presentError('Loading the change request', e).message;
      this.deps.log.error(message);
      this.post({ type: 'loadFailed', changeRequestId: this.changeRequestId, message });
    }
  }

  private async onMessage(raw: unknown): Promise<void> {
    const message = parseWebviewMessage(raw);
    if (!message) {
      this.deps.log.warn('ignored a malformed message from the change request webview');
      return;
    }
    switch (message.type) {
      case 'ready':
        // A new webview (or one that lost track of the snapshots): it gets a whole snapshot next.
        this.ready = true;
        this.encoder.reset();
        this.connectionChanged();
        for (const m of this.queue.splice(0))
          if (m.type !== 'snapshot' && m.type !== 'snapshotDelta') void this.panel.webview.postMessage(m);
        await this.refresh();
        return;
      case 'refresh':
        // Refresh means everything shown: the trees and the Checks view too, not only this page.
        await (this.deps.onRefreshAll ? this.deps.onRefreshAll() : this.refresh());
        return;
      case 'interacted':
        this.preview = false;
        return;
      case 'openLink':
        if (isOpenableLink(message.url)) await vscode.env.openExternal(vscode.Uri.parse(message.url, true));
        else this.deps.log.warn(`refused to open a link from the webview: ${message.url.slice(0, 200)}`);
        return;
      case 'openDiff':
        await this.runEditorCommand(
          'changeControl.openChangeDiff',
          'Opening the change in the diff editor',
          this.changeRequestId,
          message.changeDiff,
        );
        return;
      case 'openAllChanges':
        await this.runEditorCommand('changeControl.openAllChanges', 'Opening all changes', this.changeRequestId);
        return;
      case 'compareWithMain':
        await this.runEditorCommand(
          'changeControl.compareWithMain',
          'Comparing the object with main',
          this.changeRequestId,
          message.changeDiff,
        );
        return;
      default:
        await this.operate(message);
    }
  }

  /** Runs a command of the editor integration; says so when it fails (or the extension has no such command). */
  private async runEditorCommand(command: string, what: string, ...args: unknown[]): Promise<void> {
    try {
      await vscode.commands.executeCommand(command, ...args);
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      const message = `${what} failed: ${reason}`;
      this.deps.log.error(message);
      void vscode.window.showErrorMessage(message, 'Show Logs').then((pick) => {
        if (pick === 'Show Logs') this.deps.log.show();
      });
    }
  }

  private async operate(op: Operation): Promise<void> {
    this.preview = false;
    if (op.type === 'panelAction') {
      await vscode.commands.executeCommand(COMMAND_OF_ACTION[op.action], this.changeRequestId);
      this.post({ type: 'operationDone', opId: op.opId });
      await this.refresh();
      return;
    }
    const client = this.deps.connection.client;
    if (!client) {
      this.post({ type: 'operationFailed', opId: op.opId, message: 'Not connected to the Change Control service.' });
      return;
    }
    if (op.type === 'deleteComment') {
      const ok = await vscode.window.showWarningMessage(
        'Delete this comment?',
        { modal: true, detail: 'It is removed for everyone.' },
        'Delete',
      );
      if (ok !== 'Delete') {
        this.post({ type: 'operationFailed', opId: op.opId, message: 'Not deleted.' });
        return;
      }
    }
    try {
      await performWrite(client, this.changeRequestId, op);
      this.post({ type: 'operationDone', opId: op.opId });
      this.deps.onChanged();
    } catch (e) {
      const presented = presentError(describeOperation(op), e, { retryable: false });
      this.deps.log.warn(presented.message);
      this.post({ type: 'operationFailed', opId: op.opId, message: presented.message });
    }
    await this.refresh();
  }
}
