// The extension's entry point: builds the parts and wires them together. The service's logic is
// in core/ (no VS Code there); vscode/ holds the thin adapters.
import './zod-setup';
import * as vscode from 'vscode';
import { ChangeRequestStore } from './core/change-request-store';
import { CONTEXT_KEYS } from './core/commands';
import type { RefreshPlan } from './core/live-stream';
import { DATA_PARTS, RequestDataCache, type DataPart } from './core/request-data';
import { BranchPreviews } from './vscode/branch-previews';
import { BranchDocuments } from './vscode/branch-documents';
import { BranchObjectsView } from './vscode/branch-objects-view';
import { ChangeDecorations, ChangeDocuments, refOf } from './vscode/change-documents';
import { ChangeRequestPanels } from './vscode/change-request-panels';
import { ChangedObjectsView } from './vscode/changed-objects-view';
import { registerCommands } from './vscode/commands';
import { ReviewComments } from './vscode/comments';
import { Connection } from './vscode/connection';
import { ErrorReporter } from './vscode/errors';
import { LiveUpdates } from './vscode/live';
import { ReviewNotifier } from './vscode/review-notifier';
import { ReviewCountStatus } from './vscode/status-bar';
import { UserState } from './vscode/user-state';
import { ChangeControlViews } from './vscode/views';

let connection: Connection | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Change Control', { log: true });
  context.subscriptions.push(log);
  log.info(`activating Change Control ${context.extension.packageJSON.version ?? ''}`);

  connection = new Connection(context, log);
  const conn = connection;
  const store = new ChangeRequestStore();
  const reporter = new ErrorReporter({ log });
  const views = new ChangeControlViews(conn, store);
  const cache = new RequestDataCache(() => conn.client);
  const userState = new UserState(conn, context.globalState);

  const refreshLists = async () => {
    const client = conn.client;
    const user = conn.user;
    if (client && user) await store.refresh(client, user.id);
  };
  const panels = new ChangeRequestPanels({
    extensionUri: context.extensionUri,
    connection: conn,
    log,
    onFocus: (cr) => views.select(cr),
    onChanged: () => void refreshLists(),
    onRefreshAll: () => refreshAll(),
  });
  const reloadData = (id: number, parts: Iterable<DataPart>) =>
    cache.reload(id, parts).catch((e) => log.warn(`reloading change request #${id}: ${(e as Error).message}`));
  const branchDocuments = new BranchDocuments({ connection: conn, log });
  const branchObjects = new BranchObjectsView({ connection: conn, documents: branchDocuments, log });
  const refreshAll = async () => {
    branchObjects.reload();
    branchDocuments.refreshOpen();
    await Promise.all([
      refreshLists(),
      panels.refresh(),
      views.loadChecks(),
      ...cache.tracked().map((id) => reloadData(id, DATA_PARTS)),
    ]);
  };
  const documents = new ChangeDocuments({
    cache,
    connection: conn,
    log,
    onDescriptionSaved: (id) => void Promise.all([refreshLists(), panels.refresh(id)]),
    branches: branchDocuments,
  });
  const comments = new ReviewComments({ cache, connection: conn, userState, reporter, log });
  const changedObjects = new ChangedObjectsView({ cache, connection: conn, userState, comments, log });
  const previews = new BranchPreviews(conn);

  const notifier = new ReviewNotifier(
    conn,
    context.globalState,
    log,
    () => void refreshLists(),
    (id) => panels.open(id),
  );
  /** What the stream says changed, reloaded where it is shown. */
  const apply = (plan: RefreshPlan) => {
    // A freeze began or ended: every request it applies to moved, whatever is shown.
    if (plan.everything) {
      void refreshAll();
      notifier.checkNow();
      return;
    }
    if (plan.lists) {
      void refreshLists();
      // A request changed state: a notification for the caller may have come with it.
      notifier.checkNow();
    }
    for (const [id, parts] of plan.requests) {
      void panels.refresh(id);
      const selected = views.selectedChangeRequest()?.id === id;
      if (selected && (parts.has('checks') || parts.has('request'))) void views.loadChecks();
      const dataParts = DATA_PARTS.filter((p) => parts.has(p));
      if (dataParts.length) void reloadData(id, dataParts);
      // A write in the request's branch: its open objects are read again, and the view if it shows it.
      const branch = cache.get(id)?.changeRequest.branch_name ?? store.byId(id)?.branch_name;
      if (parts.has('changes') && branch) {
        branchDocuments.refreshOpen(branch);
        if (branchObjects.branch === branch) branchObjects.reload();
      }
    }
  };

  context.subscriptions.push(
    connection,
    views,
    panels,
    branchDocuments,
    documents,
    branchObjects,
    previews,
    new ChangeDecorations(cache),
    comments,
    changedObjects,
    userState,
    new ReviewCountStatus(conn, store),
    notifier,
    new LiveUpdates(conn, { apply, reloadAll: () => void refreshAll() }, log),
    ...registerCommands({
      connection: conn,
      store,
      views,
      panels,
      reporter,
      log,
      refreshAll,
      cache,
      comments,
      changedObjects,
      userState,
      previews,
      branchDocuments,
      branchObjects,
    }),
    views.onDidSelect((cr) => {
      changedObjects.show(cr.id);
      // Stop following requests nothing shows any more (no document open, not selected).
      const open = new Set(vscode.workspace.textDocuments.map((d) => refOf(d.uri)?.changeRequestId));
      for (const id of cache.tracked()) if (id !== cr.id && !open.has(id)) cache.forget(id);
    }),
    conn.onDidChange((state) => {
      if (state.phase === 'connected') void refreshAll();
      else {
        store.clear();
        cache.clear();
      }
      void vscode.commands.executeCommand(
        'setContext',
        CONTEXT_KEYS.serviceFailed,
        state.phase === 'failed' && state.bundled && state.serviceUrl === null,
      );
    }),
  );
  void conn.connect();
}

/** Stops the bundled service (VS Code waits for the returned promise). */
export async function deactivate(): Promise<void> {
  await connection?.stopService();
}
