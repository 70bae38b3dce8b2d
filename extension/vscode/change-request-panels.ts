// Webview panels of change requests: one per request, restored after a reload by a serializer
// from the state the webview saved. The host loads the data and performs the writes; the webview
// only renders and asks. A panel itself (change-request-panel.ts) is loaded when the first opens.
import * as vscode from 'vscode';
import { CHANGE_REQUEST_PANEL } from '../core/commands';
import type { ChangeRequestPanel, PanelDeps } from './change-request-panel';
import { DisposableBase } from './disposable';

// Loaded at first use, when a panel opens or is restored: activation does without the panel host
// and the schemas its messages are checked with.
const panelHost = () => require('./change-request-panel') as typeof import('./change-request-panel');
const webviewMessages = () => require('../core/webview-messages') as typeof import('../core/webview-messages');

export class ChangeRequestPanels extends DisposableBase implements vscode.WebviewPanelSerializer {
  private readonly panels = new Map<number, ChangeRequestPanel>();

  constructor(private readonly deps: PanelDeps) {
    super();
    this._register(vscode.window.registerWebviewPanelSerializer(CHANGE_REQUEST_PANEL, this));
    this._register({ dispose: () => [...this.panels.values()].forEach((p) => p.panel.dispose()) });
  }

  /**
   * Opens (or reveals) the panel of a change request, in the active editor group or beside it.
   * `preview` (a click in a tree): the preview tab, a panel opened so and not used since, shows
   * this request instead of a new tab opening, as VS Code's preview editors do; otherwise the
   * panel is a tab of its own.
   */
  open(changeRequestId: number, title?: string, opts: { beside?: boolean; preview?: boolean } = {}): void {
    const column = opts.beside ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
    const existing = this.panels.get(changeRequestId);
    if (existing) {
      if (!opts.preview) existing.preview = false;
      existing.panel.reveal(opts.beside ? column : undefined, opts.preview);
      void existing.refresh();
      return;
    }
    const reusable = opts.preview ? [...this.panels.values()].find((p) => p.preview) : undefined;
    if (reusable) {
      this.panels.delete(reusable.changeRequestId);
      this.panels.set(changeRequestId, reusable);
      reusable.panel.title = title ?? `Change request #${changeRequestId}`;
      reusable.retarget(changeRequestId);
      reusable.panel.reveal(undefined, true);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      CHANGE_REQUEST_PANEL,
      title ?? `Change request #${changeRequestId}`,
      column,
      {
        enableScripts: true,
        enableFindWidget: true,
        localResourceRoots: [vscode.Uri.joinPath(this.deps.extensionUri, 'dist')],
      },
    );
    this.track(panel, changeRequestId).preview = opts.preview === true;
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const id = webviewMessages().restoredChangeRequestId(state);
    if (id === null || this.panels.has(id)) {
      panel.dispose();
      return;
    }
    this.track(panel, id);
  }

  private track(panel: vscode.WebviewPanel, id: number): ChangeRequestPanel {
    const { ChangeRequestPanel } = panelHost();
    const wrapper: ChangeRequestPanel = new ChangeRequestPanel(panel, id, this.deps, () => {
      // The panel may show another request by now (a reused preview tab).
      if (this.panels.get(wrapper.changeRequestId) === wrapper) this.panels.delete(wrapper.changeRequestId);
    });
    this.panels.set(id, wrapper);
    return wrapper;
  }

  /** The connection moved: each page says whether it can post (offline, reconnecting…). */
  connectionChanged(): void {
    for (const p of this.panels.values()) p.connectionChanged();
  }

  /** Reloads the panel of this request (or every panel). */
  async refresh(changeRequestId?: number): Promise<void> {
    const targets =
      changeRequestId === undefined
        ? [...this.panels.values()]
        : [this.panels.get(changeRequestId)].filter((p) => p !== undefined);
    await Promise.all(targets.map((p) => p.refresh()));
  }
}
