// The extension's entry point: builds the parts and wires them together. The service's logic is
// in core/ (no VS Code there); vscode/ holds the thin adapters.
import './zod-setup';
import * as vscode from 'vscode';
import { ChangeRequestStore } from './core/change-request-store';
import type { RefreshPlan } from './core/live-stream';
import { DATA_PARTS, RequestDataCache, type DataPart } from './core/request-data';
import { BranchPreviews } from './vscode/branch-previews';
import { BranchDocuments } from './vscode/branch-documents';
import { BranchSearch } from './vscode/branch-search';
import { BranchObjectsView } from './vscode/branch-objects-view';
import { ChangeDecorations, ChangeDocuments, refOf } from './vscode/change-documents';
import { ChangeRequestPanels } from './vscode/change-request-panels';
import { ChangedObjectsView } from './vscode/changed-objects-view';
import { ConflictMarks } from './vscode/conflict-marks';
import { registerCommands } from './vscode/commands';
import { ReviewComments } from './vscode/comments';
import { Connection } from './vscode/connection';
import { ErrorReporter } from './vscode/errors';
import { LiveUpdates } from './vscode/live';
import { ReviewDrafts } from './vscode/review-drafts';
import { ReviewNotifier } from './vscode/review-notifier';
import { PendingReviewStatus, ReviewCountStatus } from './vscode/status-bar';
import { UserState } from './vscode/user-state';
import { ChangeControlViews } from './vscode/views';

let connection: Connection | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Change Control', { log: true });
  context.subscriptions.push(log);
  log.info(
    `activating Change Control ${context.extension.packageJSON.version ?? ''}${vscode.env.remoteName ? ` (remote: ${vscode.env.remoteName})` : ''}`,
  );

  connection = new Connection(context, log);
  const conn = connection;
  const store = new ChangeRequestStore();
  const reporter = new ErrorReporter({ log });
  const views = new ChangeControlViews(conn, store);
  const cache = new RequestDataCache(() => conn.client);
  const userState = new UserState(conn, context.globalState);

  let identity: string | null = null;
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
  const changedObjects = new ChangedObjectsView({
    cache,
    connection: conn,
    userState,
    comments,
    log,
    memento: context.workspaceState,
  });
  const previews = new BranchPreviews(conn);
  const reviewDrafts = new ReviewDrafts();

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
    new BranchSearch({ documents: branchDocuments, log }),
    branchObjects,
    previews,
    reviewDrafts,
    new ChangeDecorations(cache),
    new ConflictMarks(cache),
    comments,
    changedObjects,
    userState,
    new ReviewCountStatus(conn, store),
    new PendingReviewStatus(userState, () => comments.activeRequest()),
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
      reviewDrafts,
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
      if (state.phase === 'connected') {
        // Back after being offline, or signed in as someone else: what is shown is read again.
        const who = `${state.serviceUrl} ${state.user.id}`;
        if (identity !== null && identity !== who) {
          store.clear();
          cache.clear();
        }
        identity = who;
        void refreshAll();
      } else if (state.phase !== 'offline') {
        // Offline, what was loaded is kept (hidden) until the service answers again.
        identity = null;
        store.clear();
        cache.clear();
      }
      panels.connectionChanged();
    }),
  );
  void conn.connect();
}

/** Stops the bundled service (VS Code waits for the returned promise). */
export async function deactivate(): Promise<void> {
  await connection?.stopService();
}
