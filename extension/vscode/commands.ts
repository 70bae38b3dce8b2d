// Every command of the table in core/commands.ts, registered from one handler map typed by
// CommandId. From the palette a command asks for its change request with a QuickPick of the
// requests the service allows it on; from a tree or the webview it receives the request.
import * as vscode from 'vscode';
import type { CallerAction, ChangeRequest } from '../../contract/api/change-control';
import type { Branch, MergeConflict } from '../../contract/api/branching';
import type { ApiClient } from '../core/api-client';
import { availability, LIFECYCLE_OF, mergeBlockedReason } from '../core/availability';
import type { ChangeRequestStore } from '../core/change-request-store';
import { COMMANDS, VIEWS, type CommandId } from '../core/commands';
import { indexById } from '../core/grouping';
import { mergeConfirmation, overwrittenByChanges, overwrittenByRefusal } from '../core/merge-confirmation';
import { DECISION_VIEW, STATUS_VIEW } from '../../contract/labels';
import { performWrite } from '../core/operations';
import { branchAlert, branchPanelPlacement } from '../core/panel-placement';
import { checkRunSummary, searchPlaceholder } from '../core/messages';
import { branchPicks, changeRequestPicks, whyNoneAllowed, withLiveMergeState, type PickItem } from '../core/pick-items';
import type { RequestDataCache } from '../core/request-data';
import { normalizeBaseUrl, SETTING_KEYS } from '../core/settings';
import { CHANGE_REQUEST_TYPE } from '../core/review-notifications';
import { changeRequestIdOf, type TreeNode } from '../core/tree-items';
import { isOpenableLink } from '../core/links';
import type { BranchPreviews } from './branch-previews';
import type { ChangeRequestPanels } from './change-request-panels';
import type { ChangedObjectsView } from './changed-objects-view';
import type { ReviewComments } from './comments';
import type { Connection } from './connection';
import type { ErrorReporter } from './errors';
import { askDecision, reviewHandlers } from './review-commands';
import type { ReviewDrafts } from './review-drafts';
import { authoringHandlers } from './authoring-commands';
import { syncHandlers } from './sync-command';
import type { BranchDocuments } from './branch-documents';
import type { BranchObjectsView } from './branch-objects-view';
import type { UserState } from './user-state';
import type { ChangeControlViews } from './views';

export interface CommandDeps {
  connection: Connection;
  store: ChangeRequestStore;
  views: ChangeControlViews;
  panels: ChangeRequestPanels;
  reporter: ErrorReporter;
  log: vscode.LogOutputChannel;
  cache: RequestDataCache;
  comments: ReviewComments;
  changedObjects: ChangedObjectsView;
  userState: UserState;
  /** The review comments written in an editor tab. */
  reviewDrafts: ReviewDrafts;
  /** Branch previews (read-only Markdown documents). */
  previews: BranchPreviews;
  /** A branch's objects as documents, and the Branch Objects view. */
  branchDocuments: BranchDocuments;
  branchObjects: BranchObjectsView;
  /** Reloads the lists, the checks, the open panels and what the editor shows of requests. */
  refreshAll(): Promise<void>;
}

type Handler = (...args: unknown[]) => unknown;

type Move = 'submit' | 'return_to_draft' | 'abandon' | 'reopen';

const MOVE_WORDS = {
  submit: { doing: 'Submitting', done: 'submitted for review', verb: 'submit' },
  return_to_draft: { doing: 'Returning to draft', done: 'returned to draft', verb: 'return to draft' },
  abandon: { doing: 'Abandoning', done: 'abandoned', verb: 'abandon' },
  reopen: { doing: 'Reopening', done: 'reopened as a draft', verb: 'reopen' },
} as const satisfies Record<Move, { doing: string; done: string; verb: string }>;

const title = (cr: ChangeRequest) => cr.title || cr.branch_name;

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { connection, store, views, panels, reporter, log } = deps;

  function client(): ApiClient | null {
    const c = connection.client;
    if (!c) {
      void vscode.window
        .showInformationMessage('Sign in to the Change Control service first.', 'Sign In')
        .then((choice) => {
          if (choice) void vscode.commands.executeCommand('changeControl.signIn');
        });
    }
    return c;
  }

  function inView<T>(work: () => Promise<T>): Thenable<T> {
    return vscode.window.withProgress({ location: { viewId: VIEWS.changeRequests.id } }, work);
  }

  async function afterChange(changeRequestId: number): Promise<void> {
    await Promise.all([
      deps.refreshAll(),
      panels.refresh(changeRequestId),
      deps.cache.reload(changeRequestId, ['request']),
    ]);
  }

  /** A change request chosen in a QuickPick among those the service allows `action` on. */
  async function pick(action: CallerAction | undefined, placeHolder: string): Promise<number | undefined> {
    const c = client();
    if (!c) return undefined;
    // Fresh lists: a pipeline or another person may have moved a request since the last refresh.
    const user = connection.user;
    if (user) await inView(() => store.refresh(c, user.id));
    if (store.state.error && !store.state.loaded) {
      reporter.report('Loading change requests', store.state.error);
      return undefined;
    }
    let all = [...indexById(store.state.lists).values()];
    // Merge says why each blocked request cannot merge: the live reason, not the list's.
    if (action === 'merge') all = await inView(() => withLiveMergeState(c, all));
    const items = changeRequestPicks(all, action);
    if (items.length === 0) {
      if (!action) {
        void vscode.window.showInformationMessage('There are no change requests.');
        return undefined;
      }
      // Say why: the service's reason for each open request (one request: in the message itself).
      const what = COMMANDS.find((c) => 'action' in c && c.action === action)?.title ?? action;
      const why = whyNoneAllowed(all, action, what);
      if (why.rows.length <= 1) {
        void vscode.window.showInformationMessage(why.message);
        return undefined;
      }
      const open = await vscode.window.showQuickPick(why.rows, {
        title: why.message,
        placeHolder: 'Choose one to open it',
        matchOnDetail: true,
      });
      if (open) panels.open(open.value.id, title(open.value));
      return undefined;
    }
    const chosen = await vscode.window.showQuickPick(items, {
      placeHolder,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    return chosen?.value.id;
  }

  /** The fresh change request a command acts on, when the service allows `action` on it. */
  async function target(
    arg: unknown,
    action: CallerAction | undefined,
    placeHolder: string,
  ): Promise<{ c: ApiClient; cr: ChangeRequest } | undefined> {
    const c = client();
    if (!c) return undefined;
    const id = changeRequestIdOf(arg) ?? (await pick(action, placeHolder));
    if (id === undefined) return undefined;
    let cr: ChangeRequest;
    try {
      cr = await inView(() => c.getChangeRequest(id));
    } catch (e) {
      reporter.report(`Loading change request #${id}`, e);
      return undefined;
    }
    if (action && action !== 'merge') {
      const a = availability(cr, action);
      if (!a.allowed) {
        void vscode.window.showWarningMessage(`Cannot ${action.replace(/_/g, ' ')} "${title(cr)}": ${a.reason}`);
        return undefined;
      }
    }
    return { c, cr };
  }

  /**
   * An open branch: the one a view passed (`branchArg`, its id) or one chosen in a QuickPick,
   * with the change requests read beside it; undefined when there is none or the pick is dismissed.
   */
  async function pickOpenBranch(
    c: ApiClient,
    branchArg: unknown,
    placeHolder: string,
  ): Promise<{ chosen: PickItem<Branch>; requests: ChangeRequest[] } | undefined> {
    const [branches, requests] = await inView(() => Promise.all([c.listBranches(), c.listChangeRequests()]));
    const open = branches.filter((b) => b.status !== 'merged' && b.status !== 'archived');
    if (open.length === 0) {
      void vscode.window.showInformationMessage('There are no open branches.');
      return undefined;
    }
    const picks = branchPicks(open, requests);
    const given = typeof branchArg === 'number' ? picks.find((p) => p.value.id === branchArg) : undefined;
    const chosen = given ?? (await vscode.window.showQuickPick(picks, { placeHolder, matchOnDetail: true }));
    return chosen ? { chosen, requests } : undefined;
  }

  async function move(arg: unknown, action: Move): Promise<void> {
    const words = MOVE_WORDS[action];
    const t = await target(arg, action, `Change request to ${words.verb}`);
    if (!t) return;
    const { c, cr } = t;
    if (action === 'abandon') {
      const ok = await vscode.window.showWarningMessage(
        `Abandon "${title(cr)}"?`,
        { modal: true, detail: 'The change request closes. Someone allowed to may reopen it later, as a draft.' },
        'Abandon',
      );
      if (ok !== 'Abandon') return;
    } else if (action === 'return_to_draft') {
      const detail =
        cr.status === 'approved'
          ? 'It is approved: returning it to draft closes the merge gate. Reviews are kept; resubmitting picks up where it left off.'
          : 'Reviewers are no longer asked. Reviews are kept; resubmitting picks up where it left off.';
      const ok = await vscode.window.showWarningMessage(
        `Return "${title(cr)}" to draft?`,
        { modal: true, detail },
        'Return to Draft',
      );
      if (ok !== 'Return to Draft') return;
    }
    await reporter.guarded(`${words.doing} "${title(cr)}"`, async () => {
      const updated = await inView(() => c.lifecycle(cr.id, LIFECYCLE_OF[action]!));
      void vscode.window.showInformationMessage(
        `"${title(updated)}" ${words.done} (now ${STATUS_VIEW[updated.status].label}).`,
      );
      await afterChange(cr.id);
    });
  }

  const handlers: Record<CommandId, Handler> = {
    ...reviewHandlers({ ...deps, client, pick, target, inView, afterChange }),
    ...authoringHandlers({ ...deps, documents: deps.branchDocuments, client, target, inView, afterChange }),
    ...syncHandlers({ reporter, target, inView, afterChange }),

    'changeControl.openChangeRequest': async (arg, how) => {
      const id = changeRequestIdOf(arg) ?? (await pick(undefined, 'Change request to open'));
      if (id === undefined) return;
      const known = store.byId(id);
      // A tree click ('preview') reuses the preview tab; the palette and menus open a tab of their own.
      panels.open(id, known ? title(known) : undefined, { preview: how === 'preview' });
      if (known) views.select(known);
    },

    'changeControl.openChangeRequestForBranch': async (branchArg: unknown) => {
      const c = client();
      if (!c) return;
      await reporter.guarded('Opening a change request for a branch', async () => {
        // The service's branch_page_placement says where the request shows (panel-placement.ts).
        const settings = c.getSettings().catch((e) => {
          log.warn(`reading the plugin settings (the panel opens beside): ${(e as Error).message}`);
          return null;
        });
        const picked = await pickOpenBranch(c, branchArg, 'Branch');
        if (!picked) return;
        const { chosen, requests } = picked;
        const placement = branchPanelPlacement((await settings)?.branch_page_placement);
        const show = (cr: ChangeRequest) => {
          panels.open(cr.id, title(cr), { beside: placement.beside });
          if (!placement.alert) return;
          const alert = branchAlert(chosen.value.name, cr);
          if (alert.severity === 'warning') void vscode.window.showWarningMessage(alert.message);
          else void vscode.window.showInformationMessage(alert.message);
        };
        const existing = requests.find((r) => r.branch === chosen.value.id);
        if (existing) {
          show(await c.getChangeRequest(existing.id));
          return;
        }
        const newTitle = await vscode.window.showInputBox({
          title: `Open a change request for ${chosen.value.name}`,
          prompt: 'Title',
          value: chosen.value.name,
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() ? undefined : 'A title, please'),
        });
        if (newTitle === undefined) return;
        const ref = await vscode.window.showInputBox({
          title: `Open a change request for ${chosen.value.name}`,
          prompt: 'External reference (ticket or change number), optional',
          ignoreFocusOut: true,
        });
        if (ref === undefined) return;
        const created = await inView(() =>
          c.createChangeRequest({ branch: chosen.value.id, title: newTitle.trim(), ref: ref.trim() || undefined }),
        );
        void vscode.window.showInformationMessage(`Change request "${title(created)}" opened as a draft.`);
        show(created);
        await deps.refreshAll();
      });
    },

    'changeControl.submit': (arg) => move(arg, 'submit'),
    'changeControl.returnToDraft': (arg) => move(arg, 'return_to_draft'),
    'changeControl.abandon': (arg) => move(arg, 'abandon'),
    'changeControl.reopen': (arg) => move(arg, 'reopen'),

    'changeControl.review': async (arg) => {
      const t = await target(arg, 'review', 'Change request to review');
      if (!t) return;
      const { c, cr } = t;
      const chosen = await askDecision(title(cr), { compose: (d, t) => deps.reviewDrafts.compose(d, t) });
      if (!chosen) return;
      const { decision, comment } = chosen;
      await reporter.guarded(`Reviewing "${title(cr)}"`, async () => {
        const me = connection.user;
        const mine = me ? (await c.listReviews(cr.id)).find((r) => r.reviewer.id === me.id) : undefined;
        await inView(() =>
          performWrite(c, cr.id, {
            type: 'submitReview',
            opId: 'palette',
            decision,
            comment,
            reviewId: mine?.id ?? null,
          }),
        );
        void vscode.window.showInformationMessage(
          `Your review (${DECISION_VIEW[decision].label}) is recorded on "${title(cr)}".`,
        );
        await afterChange(cr.id);
      });
    },

    'changeControl.runChecks': async (arg) => {
      const t = await target(arg, 'run_checks', 'Change request whose checks to re-run');
      if (!t) return;
      await reporter.guarded(`Re-running the checks of "${title(t.cr)}"`, async () => {
        await inView(() => t.c.runChecks(t.cr.id));
        const checks = await t.c.listChecks(t.cr.id);
        void vscode.window.showInformationMessage(checkRunSummary(title(t.cr), checks));
        views.select(t.cr);
        await afterChange(t.cr.id);
      });
    },

    'changeControl.merge': async (arg) => {
      const t = await target(arg, 'merge', 'Change request to merge');
      if (!t) return;
      const { c, cr } = t;
      if (!availability(cr, 'merge').allowed) {
        void vscode.window.showWarningMessage(`Cannot merge "${title(cr)}": ${mergeBlockedReason(cr)}`);
        return;
      }
      if (cr.branch === null || cr.branch_deleted) {
        void vscode.window.showWarningMessage(`Cannot merge "${title(cr)}": its branch is deleted.`);
        return;
      }
      const branchId = cr.branch;
      // What the merge overwrites on main, from the branch's changes as they are now.
      const changes = await inView(() => c.listChanges(branchId));
      let ask = mergeConfirmation(title(cr), cr.branch_name, overwrittenByChanges(changes));
      for (let round = 0; round < 3; round += 1) {
        const ok = await vscode.window.showWarningMessage(
          ask.message,
          { modal: true, detail: ask.detail },
          ask.confirm,
        );
        if (ok !== ask.confirm) return;
        try {
          await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: `Merging ${cr.branch_name}…` },
            () => c.mergeBranch(branchId, { acknowledgeConflicts: ask.acknowledges }),
          );
        } catch (e) {
          // Main moved since: the service names what the merge would overwrite now; ask again.
          if (e instanceof Error && e.name === 'MergeConflictError' && 'conflicts' in e) {
            log.info(`merging ${cr.branch_name}: the service names conflicts to acknowledge`);
            ask = mergeConfirmation(
              title(cr),
              cr.branch_name,
              overwrittenByRefusal((e as { conflicts: MergeConflict[] }).conflicts),
              { refusal: e.message },
            );
            continue;
          }
          reporter.report(`Merging "${title(cr)}"`, e);
          return;
        }
        void vscode.window.showInformationMessage(`Branch ${cr.branch_name} merged.`);
        await afterChange(cr.id);
        return;
      }
      void vscode.window.showWarningMessage(
        `"${title(cr)}" was not merged: main kept changing while you confirmed. Try again.`,
      );
    },

    'changeControl.override': async (arg) => {
      const t = await target(arg, 'override', 'Change request to override');
      if (!t) return;
      const { c, cr } = t;
      if (!availability(cr, 'override').allowed) {
        void vscode.window.showWarningMessage(
          `Cannot override "${title(cr)}": ${availability(cr, 'override').reason ?? 'not allowed.'}`,
        );
        return;
      }
      const reason = await vscode.window.showInputBox({
        title: `Override the merge gate of "${title(cr)}"`,
        prompt: `It is blocked: ${mergeBlockedReason(cr)} Say why it must merge anyway; the reason, your name and what you overrode are recorded on the request.`,
        placeHolder: 'Reason (required)',
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? null : 'An override needs a reason.'),
      });
      if (!reason?.trim()) return;
      const ok = await vscode.window.showWarningMessage(
        `Override and merge "${title(cr)}"?`,
        {
          modal: true,
          detail: `Branch ${cr.branch_name} is merged into main although the gate refuses it. Reason: ${reason.trim()}`,
        },
        'Override and Merge',
      );
      if (ok !== 'Override and Merge') return;
      await reporter.guarded(`Overriding "${title(cr)}"`, async () => {
        await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `Merging ${cr.branch_name} past the gate…` },
          () => c.overrideChangeRequest(cr.id, reason.trim()),
        );
        void vscode.window.showInformationMessage(
          `Branch ${cr.branch_name} merged; the override is recorded on the request.`,
        );
        await afterChange(cr.id);
      });
    },

    'changeControl.previewBranch': async (branchArg: unknown) => {
      const c = client();
      if (!c) return;
      await reporter.guarded('Previewing the policies for a branch', async () => {
        const chosen = (await pickOpenBranch(c, branchArg, 'Branch to preview'))?.chosen;
        if (!chosen) return;
        await inView(() => deps.previews.show(c, chosen.value));
      });
    },

    'changeControl.refresh': async () => {
      if (connection.state.phase !== 'connected') {
        await connection.connect();
        return;
      }
      await inView(() => deps.refreshAll());
      if (store.state.error)
        reporter.report('Loading change requests', store.state.error, () =>
          vscode.commands.executeCommand('changeControl.refresh'),
        );
    },

    'changeControl.search': async () => {
      const c = client();
      if (!c) return;
      const q = await vscode.window.showInputBox({
        title: 'Change Control: Search',
        prompt: 'Search change requests, reviews, comments, checks and policies',
        ignoreFocusOut: true,
      });
      if (!q?.trim()) return;
      await reporter.guarded('Searching', async () => {
        const { results, truncated } = await inView(() => c.search(q.trim()));
        if (results.length === 0) {
          void vscode.window.showInformationMessage(`Nothing found for "${q.trim()}".`);
          return;
        }
        const chosen = await vscode.window.showQuickPick(
          results.map((r) => ({
            label: r.display,
            description: r.object_type.replace(/^change_control\./, ''),
            detail: `${r.field}: ${r.value}`,
            value: r,
          })),
          { placeHolder: searchPlaceholder(q.trim(), results.length, truncated), matchOnDetail: true },
        );
        if (!chosen) return;
        const r = chosen.value;
        const id = r.object_type === CHANGE_REQUEST_TYPE ? r.id : await c.changeRequestOf(r.url).catch(() => null);
        if (id === null) {
          void vscode.window.showInformationMessage(`"${r.display}" is not part of a change request.`);
          return;
        }
        panels.open(id);
      });
    },

    'changeControl.signIn': async () => {
      if (await connection.signIn()) await deps.refreshAll();
    },

    'changeControl.signOut': async () => {
      await connection.signOut();
      store.clear();
    },

    'changeControl.showLogs': () => log.show(),

    'changeControl.useRemoteServer': async () => {
      const current = connection.settings().connection;
      const raw = await vscode.window.showInputBox({
        title: 'Change Control: Use a Remote Server',
        prompt: 'URL of the Change Control service, e.g. https://cc.example.net',
        value: current.mode === 'remote' ? current.url : 'https://',
        ignoreFocusOut: true,
        validateInput: (v) => {
          const n = normalizeBaseUrl(v);
          return 'error' in n ? n.error : undefined;
        },
      });
      if (raw === undefined) return;
      const n = normalizeBaseUrl(raw);
      if ('error' in n) return;
      await vscode.workspace
        .getConfiguration()
        .update(SETTING_KEYS.serverUrl, n.url, vscode.ConfigurationTarget.Global);
      log.info(`${SETTING_KEYS.serverUrl} set to ${n.url}`);
      await connection.stopService();
      if (await connection.signIn()) await deps.refreshAll();
    },

    'changeControl.openSettings': async (query: unknown) => {
      // The server URL and the Node.js path are machine settings: in a remote window (and in a
      // browser served by a server) they are the remote's, shown under its tab only.
      const q = typeof query === 'string' && /^changeControl(\.[A-Za-z.]+)?$/.test(query) ? query : 'changeControl';
      if (vscode.env.remoteName !== undefined) {
        try {
          await vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query: q });
          return;
        } catch (e) {
          log.warn(`opening the remote's settings: ${(e as Error).message}`);
        }
      }
      await vscode.commands.executeCommand('workbench.action.openSettings', q);
    },

    'changeControl.openCheckDetails': async (arg) => {
      const node = arg as Partial<TreeNode> | undefined;
      const url =
        typeof arg === 'string' ? arg : node?.kind === 'check' && node.check ? node.check.details_url : undefined;
      if (!url || !isOpenableLink(url)) {
        void vscode.window.showWarningMessage('This check has no details link.');
        return;
      }
      await vscode.env.openExternal(vscode.Uri.parse(url, true));
    },
  };

  return COMMANDS.map((spec) =>
    vscode.commands.registerCommand(spec.id, async (...args: unknown[]) => {
      try {
        await handlers[spec.id](...args);
      } catch (e) {
        reporter.report(spec.title, e);
      }
    }),
  );
}
