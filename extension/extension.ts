// The extension's entry point: builds the parts and wires them together. The service's logic is
// in core/ (no VS Code there); vscode/ holds the thin adapters.
import * as vscode from 'vscode';
import { ChangeRequestStore } from './core/change-request-store';
import { ChangeRequestPanels } from './vscode/change-request-panels';
import { registerCommands } from './vscode/commands';
import { Connection } from './vscode/connection';
import { ErrorReporter } from './vscode/errors';
import { ReviewNotifier } from './vscode/review-notifier';
import { ReviewCountStatus } from './vscode/status-bar';
import { ChangeControlViews } from './vscode/views';

let connection: Connection | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Change Control', { log: true });
  context.subscriptions.push(log);
  log.info(`activating Change Control ${context.extension.packageJSON.version ?? ''}`);

  connection = new Connection(context, log);
  const store = new ChangeRequestStore();
  const reporter = new ErrorReporter({ log });
  const views = new ChangeControlViews(connection, store);
  const conn = connection;

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
  });
  const refreshAll = async () => {
    await Promise.all([refreshLists(), panels.refresh(), views.loadChecks()]);
  };

  context.subscriptions.push(
    connection,
    views,
    panels,
    new ReviewCountStatus(conn, store),
    new ReviewNotifier(conn, context.globalState, log, () => void refreshLists(), (id) => panels.open(id)),
    ...registerCommands({ connection: conn, store, views, panels, reporter, log, refreshAll }),
    conn.onDidChange((state) => {
      if (state.phase === 'connected') void refreshAll();
      else if (state.phase === 'signedOut' || state.phase === 'failed') store.clear();
    }),
  );
  void conn.connect();
}

/** Stops the bundled service (VS Code waits for the returned promise). */
export async function deactivate(): Promise<void> {
  await connection?.stopService();
}
