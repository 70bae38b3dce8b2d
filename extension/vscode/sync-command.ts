// Sync Branch with Main: the dry run first (what would be rebased, dropped, still in conflict),
// then, once confirmed, the sync. From the palette, a request's menu and the review page.
import * as vscode from 'vscode';
import type { ChangeRequest } from '../../contract/api/change-control';
import { overwrittenByChanges } from '../core/merge-confirmation';
import { syncConfirmation } from '../core/sync-plan';
import type { ReviewCommandDeps } from './review-commands';

/** What Sync Branch needs of the commands' shared helpers (as the review commands get them). */
type SyncDeps = Pick<ReviewCommandDeps, 'reporter' | 'target' | 'inView' | 'afterChange'>;

const title = (cr: ChangeRequest) => cr.title || cr.branch_name;

export function syncHandlers(deps: SyncDeps) {
  return {
    'changeControl.syncBranch': async (arg: unknown) => {
      const t = await deps.target(arg, 'sync', 'Change request whose branch to sync with main');
      if (!t) return;
      const { c, cr } = t;
      if (cr.branch === null || cr.branch_deleted) {
        void vscode.window.showWarningMessage(`Cannot sync "${title(cr)}": its branch is deleted.`);
        return;
      }
      const branchId = cr.branch;
      await deps.reporter.guarded(`Syncing ${cr.branch_name} with main`, async () => {
        // The values main changed under the branch (the merge's conflicts now), and the dry run.
        const [changes, dryRun] = await deps.inView(() =>
          Promise.all([c.listChanges(branchId), c.syncBranch(branchId, false)]),
        );
        const ask = syncConfirmation(cr.branch_name, dryRun, overwrittenByChanges(changes));
        if (!ask.confirm) {
          void vscode.window.showInformationMessage(`${ask.message} ${ask.detail}`);
          return;
        }
        const ok = await vscode.window.showWarningMessage(
          ask.message,
          { modal: true, detail: ask.detail },
          ask.confirm,
        );
        if (ok !== ask.confirm) return;
        await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `Syncing ${cr.branch_name}…` },
          () => c.syncBranch(branchId, true),
        );
        void vscode.window.showInformationMessage(`Branch ${cr.branch_name} synced with main.`);
        await deps.afterChange(cr.id);
      });
    },
  };
}
