// The commands of reviewing in the editor (diffs, Next/Previous Change, comment threads, the
// pending review) and of an author's first steps (Create Branch, Edit Title, Edit Description),
// as part of the handler map that extension/vscode/commands.ts registers.
import * as vscode from 'vscode';
import type { ChangeDiff } from '../../contract/api/branching';
import type { ChangeRequest, ReviewDecision } from '../../contract/api/change-control';
import type { ApiClient } from '../core/api-client';
import { availability } from '../core/availability';
import { REVIEW_CONTAINER } from '../core/commands';
import { diffSides, diffTitle, singleSide, threadSide } from '../core/change-documents';
import { treeOrder } from '../core/changed-objects';
import type { CallerAction } from '../../contract/api/change-control';
import { approvalsPhrase, CHANGE_ACTION_LABEL, DECISION_VIEW } from '../../contract/labels';
import { discardReview, PendingReviewError, postPendingReview, startReview } from '../core/pending-review';
import { DECISION_PICKS, type PickItem } from '../core/pick-items';
import type { RequestDataCache } from '../core/request-data';
import { changeRequestIdOf } from '../core/tree-items';
import { changeUri, descriptionUri } from './change-documents';
import type { ChangedObjectsView } from './changed-objects-view';
import { ReviewComment, type ReviewComments } from './comments';
import type { Connection } from './connection';
import type { ErrorReporter } from './errors';
import type { ReviewDrafts } from './review-drafts';
import type { UserState } from './user-state';
import type { ChangeControlViews } from './views';

type Handler = (...args: unknown[]) => unknown;

export interface ReviewCommandDeps {
  connection: Connection;
  cache: RequestDataCache;
  comments: ReviewComments;
  changedObjects: ChangedObjectsView;
  userState: UserState;
  views: ChangeControlViews;
  reviewDrafts: ReviewDrafts;
  reporter: ErrorReporter;
  log: vscode.LogOutputChannel;
  /** From commands.ts: the signed-in client (or a prompt to sign in), a request picked or given, progress in the view, refresh after a change. */
  client(): ApiClient | null;
  pick(action: CallerAction | undefined, placeHolder: string): Promise<number | undefined>;
  target(
    arg: unknown,
    action: CallerAction | undefined,
    placeHolder: string,
  ): Promise<{ c: ApiClient; cr: ChangeRequest } | undefined>;
  inView<T>(work: () => Promise<T>): Thenable<T>;
  afterChange(changeRequestId: number): Promise<void>;
}

const title = (cr: ChangeRequest) => cr.title || cr.branch_name;

function isCommentReply(arg: unknown): arg is vscode.CommentReply {
  return !!arg && typeof arg === 'object' && 'thread' in arg && 'text' in arg;
}

/** A QuickPick with nothing chosen in advance: Enter alone picks nothing. */
export function pickWithoutDefault<T>(
  items: PickItem<T>[],
  opts: { title: string; placeholder: string },
): Promise<PickItem<T> | undefined> {
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick<PickItem<T> & vscode.QuickPickItem>();
    qp.items = items;
    qp.title = opts.title;
    qp.placeholder = opts.placeholder;
    qp.ignoreFocusOut = true;
    let done = false;
    qp.onDidAccept(() => {
      const chosen = qp.selectedItems[0] ?? qp.activeItems[0];
      if (!chosen) return;
      done = true;
      resolve(chosen);
      qp.hide();
    });
    qp.onDidHide(() => {
      if (!done) resolve(undefined);
      qp.dispose();
    });
    qp.show();
    qp.activeItems = [];
  });
}

/**
 * The decision and its comment for a review; undefined when cancelled. Request changes is
 * written in an editor tab (`compose`: several lines, Markdown); the others in an input box.
 */
export async function askDecision(
  crTitle: string,
  opts: { drafts?: number; compose?: (decision: ReviewDecision, title: string) => Promise<string | undefined> } = {},
): Promise<{ decision: ReviewDecision; comment: string } | undefined> {
  const decision = await pickWithoutDefault(DECISION_PICKS, {
    title: `Review "${crTitle}"${opts.drafts ? ` (${opts.drafts} pending comment${opts.drafts === 1 ? '' : 's'})` : ''}`,
    placeholder: 'Your decision (choose one)',
  });
  if (!decision) return undefined;
  if (decision.value === 'reject' && opts.compose) {
    vscode.window.setStatusBarMessage('Write what must change, then save (Ctrl+S) to send the review.', 10_000);
    const text = await opts.compose('reject', crTitle);
    return text === undefined ? undefined : { decision: 'reject', comment: text };
  }
  const comment = await vscode.window.showInputBox({
    title: `${DECISION_VIEW[decision.value].label}: "${crTitle}"`,
    prompt: decision.value === 'reject' ? 'What must change (Markdown, required)' : 'Comment (Markdown, optional)',
    ignoreFocusOut: true,
    validateInput: (v) => (decision.value === 'reject' && !v.trim() ? 'Requesting changes needs a comment' : undefined),
  });
  if (comment === undefined) return undefined;
  return { decision: decision.value, comment };
}

export function reviewHandlers(deps: ReviewCommandDeps) {
  const { cache, comments, changedObjects, userState, views, reporter, log } = deps;

  /**
   * Opens one change in the diff editor (baseline ↔ branch, or main now ↔ after the merge). A
   * created or deleted object has only one side: it opens alone, titled with what happened (a
   * diff against an empty side would show a deleted empty line).
   */
  async function openDiff(
    changeRequestId: number,
    change: ChangeDiff,
    mode: 'change' | 'main' = 'change',
  ): Promise<void> {
    // Changed Objects (a container of its own) shows where this change is among the others.
    if (!changedObjects.view.visible)
      await vscode.commands.executeCommand(`workbench.view.extension.${REVIEW_CONTAINER}`);
    const single = mode === 'change' ? singleSide(change) : null;
    if (single) {
      await vscode.commands.executeCommand(
        'vscode.open',
        changeUri(changeRequestId, single, change),
        { preview: true },
        diffTitle(change, mode),
      );
    } else {
      const [left, right] = diffSides(mode);
      await vscode.commands.executeCommand(
        'vscode.diff',
        changeUri(changeRequestId, left, change),
        changeUri(changeRequestId, right, change),
        diffTitle(change, mode),
        { preview: true },
      );
    }
    changedObjects.show(changeRequestId);
    changedObjects.setCurrent(changeRequestId, change.id);
  }

  async function requestData(changeRequestId: number) {
    const data = await deps.inView(() => cache.ensure(changeRequestId));
    views.select(data.changeRequest);
    changedObjects.show(changeRequestId);
    return data;
  }

  async function findChange(changeRequestId: number, changeId: number): Promise<ChangeDiff | undefined> {
    let data = await requestData(changeRequestId);
    let change = data.changes.find((c) => c.id === changeId);
    if (!change) {
      data = (await cache.reload(changeRequestId, ['changes'])) ?? data;
      change = data.changes.find((c) => c.id === changeId);
    }
    return change;
  }

  /** The request a review command is about: given, the active editor's, or picked. */
  async function reviewTarget(arg: unknown, placeHolder: string): Promise<number | undefined> {
    const given = changeRequestIdOf(arg);
    if (given !== undefined) return given;
    const pending = Object.keys(userState.pendingReviews()).map(Number);
    const active = comments.activeRequest();
    if (active !== undefined && pending.includes(active)) return active;
    if (pending.length === 1) return pending[0];
    if (pending.length > 1) {
      const rows = await Promise.all(
        pending.map(async (id) => ({ id, data: await cache.ensure(id).catch(() => undefined) })),
      );
      const chosen = await vscode.window.showQuickPick(
        rows.map(({ id, data }) => ({
          label: data ? title(data.changeRequest) : `Change request #${id}`,
          description: `${userState.pendingReview(id)?.drafts.length ?? 0} pending comments`,
          id,
        })),
        { placeHolder },
      );
      return chosen?.id;
    }
    return deps.pick('review', placeHolder);
  }

  /** Marks the change of a Changed Objects row, or the active editor's, viewed or not. */
  async function markViewed(arg: unknown, viewed: boolean): Promise<void> {
    const node = arg as { kind?: string; change?: ChangeDiff } | undefined;
    const target =
      node?.kind === 'change' && node.change && changedObjects.changeRequestId !== undefined
        ? { changeRequestId: changedObjects.changeRequestId, change: node.change }
        : changedObjects.activeChange();
    if (!target) {
      void vscode.window.showInformationMessage('Open a changed object first: its editor is what is marked.');
      return;
    }
    await changedObjects.setViewed(target.changeRequestId, target.change, viewed);
  }

  const handlers = {
    'changeControl.openChangeDiff': async (arg: unknown, changeArg: unknown) => {
      let changeRequestId = changeRequestIdOf(arg);
      if (changeRequestId === undefined)
        changeRequestId = await deps.pick(undefined, 'Change request whose change to open');
      if (changeRequestId === undefined) return;
      let change: ChangeDiff | undefined;
      if (typeof changeArg === 'number') {
        change = await findChange(changeRequestId, changeArg);
        if (!change) {
          void vscode.window.showWarningMessage(`Change #${changeArg} is no longer among the changes of this request.`);
          return;
        }
      } else {
        const data = await requestData(changeRequestId);
        if (data.changes.length === 0) {
          void vscode.window.showInformationMessage(`"${title(data.changeRequest)}" has no changes.`);
          return;
        }
        const chosen = await vscode.window.showQuickPick(
          treeOrder(data.changes).map((c) => ({
            label: c.object_repr,
            description: `${c.object_type} · ${CHANGE_ACTION_LABEL[c.action]}${c.conflicts?.length ? ' · conflicts' : ''}`,
            change: c,
          })),
          { placeHolder: 'Change to open', matchOnDescription: true },
        );
        change = chosen?.change;
      }
      if (change) await openDiff(changeRequestId, change);
    },

    'changeControl.openAllChanges': async (arg: unknown) => {
      const changeRequestId =
        changeRequestIdOf(arg) ??
        changedObjects.changeRequestId ??
        (await deps.pick(undefined, 'Change request whose changes to open'));
      if (changeRequestId === undefined) return;
      const data = await requestData(changeRequestId);
      if (data.changes.length === 0) {
        void vscode.window.showInformationMessage(`"${title(data.changeRequest)}" has no changes.`);
        return;
      }
      // A create has no baseline, a delete no branch side: the editor shows them as added and deleted.
      const resources = treeOrder(data.changes).map((c) => [
        changeUri(changeRequestId, threadSide(c, null), c),
        c.action === 'create' ? undefined : changeUri(changeRequestId, 'original', c),
        c.action === 'delete' ? undefined : changeUri(changeRequestId, 'modified', c),
      ]);
      await vscode.commands.executeCommand('vscode.changes', `Changes of "${title(data.changeRequest)}"`, resources);
    },

    'changeControl.compareWithMain': async (arg: unknown, changeArg: unknown) => {
      const node = arg as { kind?: string; change?: ChangeDiff } | undefined;
      const changeRequestId = node?.kind === 'change' ? changedObjects.changeRequestId : changeRequestIdOf(arg);
      if (changeRequestId === undefined) return;
      // An object a check names (the Checks view's mergeable rows) stands for its change.
      const objectRef = changeArg as { object_type?: unknown; object_id?: unknown } | undefined;
      const change =
        node?.kind === 'change' && node.change
          ? await findChange(changeRequestId, node.change.id)
          : typeof changeArg === 'number'
            ? await findChange(changeRequestId, changeArg)
            : objectRef && typeof objectRef.object_type === 'string' && typeof objectRef.object_id === 'number'
              ? (await requestData(changeRequestId)).changes.find(
                  (c) => c.object_type === objectRef.object_type && c.object_id === objectRef.object_id,
                )
              : undefined;
      if (!change) return;
      if (!change.current) {
        void vscode.window.showInformationMessage(`${change.object_repr} is not on main now.`);
        return;
      }
      await openDiff(changeRequestId, change, 'main');
    },

    'changeControl.nextChange': async () => {
      const next = changedObjects.adjacent(1);
      if ('none' in next) void vscode.window.showInformationMessage(next.none);
      else await openDiff(next.changeRequestId, next.change);
    },

    'changeControl.previousChange': async () => {
      const previous = changedObjects.adjacent(-1);
      if ('none' in previous) void vscode.window.showInformationMessage(previous.none);
      else await openDiff(previous.changeRequestId, previous.change);
    },

    'changeControl.markViewed': async (arg: unknown) => {
      await markViewed(arg, true);
    },

    'changeControl.markNotViewed': async (arg: unknown) => {
      await markViewed(arg, false);
    },

    'changeControl.addComment': async (reply: unknown) => {
      if (isCommentReply(reply)) await comments.addComment(reply);
    },

    'changeControl.addReviewComment': async (reply: unknown) => {
      if (isCommentReply(reply)) await comments.addReviewComment(reply);
    },

    'changeControl.startReview': async (arg: unknown) => {
      if (isCommentReply(arg)) {
        await comments.startReview(arg);
        return;
      }
      const t = await deps.target(arg, 'review', 'Change request to review');
      if (!t) return;
      await userState.updatePending(t.cr.id, (all) => startReview(all, t.cr.id, new Date()));
      await cache.ensure(t.cr.id).catch(() => undefined);
      changedObjects.show(t.cr.id);
      const choice = await vscode.window.showInformationMessage(
        `Review of "${title(t.cr)}" started: comments you add now stay pending, visible only to you, until you run Submit Review.`,
        'Open All Changes',
      );
      if (choice) await vscode.commands.executeCommand('changeControl.openAllChanges', t.cr.id);
    },

    'changeControl.submitReview': async (arg: unknown) => {
      const c = deps.client();
      if (!c) return;
      const changeRequestId = await reviewTarget(arg, 'Change request whose review to submit');
      if (changeRequestId === undefined) return;
      const cr = await deps.inView(() => c.getChangeRequest(changeRequestId));
      const pending = userState.pendingReview(cr.id);
      const drafts = pending?.drafts.length ?? 0;
      const canReview = availability(cr, 'review');
      let decision: { decision: ReviewDecision; comment: string } | null | undefined;
      if (canReview.allowed) {
        decision = await askDecision(title(cr), { drafts, compose: (d, t) => deps.reviewDrafts.compose(d, t) });
      } else if (drafts > 0) {
        const ok = await vscode.window.showWarningMessage(
          `You cannot review "${title(cr)}": ${canReview.reason}`,
          { modal: true, detail: `Post your ${drafts} pending comment${drafts === 1 ? '' : 's'} without a review?` },
          'Post Comments',
        );
        decision = ok ? null : undefined;
      } else {
        void vscode.window.showWarningMessage(`Cannot review "${title(cr)}": ${canReview.reason}`);
        return;
      }
      if (decision === undefined) return;
      if (!pending) await userState.updatePending(cr.id, (all) => startReview(all, cr.id, new Date()));
      const me = deps.connection.user;
      const mine = me && decision ? (await c.listReviews(cr.id)).find((r) => r.reviewer.id === me.id) : undefined;
      try {
        const result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `Submitting your review of "${title(cr)}"…` },
          () =>
            postPendingReview(
              c,
              {
                load: () => userState.pendingReview(cr.id),
                save: (r) =>
                  userState.updatePending(cr.id, (all) => (r ? { ...all, [cr.id]: r } : discardReview(all, cr.id))),
              },
              cr.id,
              decision ? { ...decision, reviewId: mine?.id ?? null } : null,
            ),
        );
        const posted = result.posted.length
          ? ` with ${result.posted.length} comment${result.posted.length === 1 ? '' : 's'}`
          : '';
        let gate = '';
        if (decision?.decision === 'approve') {
          const evaluation = await c.getEvaluation(cr.id).catch(() => null);
          const rules = evaluation?.policies.flatMap((p) => p.rules) ?? [];
          if (rules.length)
            gate = ` (${rules.map((r) => `${r.name}: ${approvalsPhrase(r.approvals, r.min_reviews)}`).join('; ')})`;
        }
        void vscode.window.showInformationMessage(
          decision
            ? `Your review (${DECISION_VIEW[decision.decision].label}) is submitted on "${title(cr)}"${posted}${gate}.`
            : `Your comments are posted on "${title(cr)}"${posted}.`,
        );
      } catch (e) {
        if (e instanceof PendingReviewError) {
          log.warn(`submitting the review of #${cr.id}: ${e.message}`);
          const what = `Submitting your review (${e.posted} posted, ${e.remaining} comment${e.remaining === 1 ? '' : 's'} still pending${e.remaining === 0 && decision ? ', and the decision' : ''})`;
          reporter.report(what, e.reason, () => vscode.commands.executeCommand('changeControl.submitReview', cr.id));
        } else throw e;
      } finally {
        await Promise.all([deps.afterChange(cr.id), cache.reload(cr.id, ['comments', 'request'])]);
      }
    },

    'changeControl.discardReview': async (arg: unknown) => {
      const changeRequestId = changeRequestIdOf(arg) ?? (await reviewTarget(undefined, 'Pending review to discard'));
      if (changeRequestId === undefined) return;
      const pending = userState.pendingReview(changeRequestId);
      if (!pending) {
        void vscode.window.showInformationMessage('There is no pending review on this change request.');
        return;
      }
      const n = pending.drafts.length;
      const ok = await vscode.window.showWarningMessage(
        'Discard your pending review?',
        {
          modal: true,
          detail: n
            ? `Its ${n} pending comment${n === 1 ? ' is' : 's are'} dropped; nothing was posted.`
            : 'Nothing was posted.',
        },
        'Discard',
      );
      if (ok !== 'Discard') return;
      await userState.updatePending(changeRequestId, (all) => discardReview(all, changeRequestId));
    },

    'changeControl.editComment': (comment: unknown) => {
      if (comment instanceof ReviewComment) comments.startEdit(comment);
    },
    'changeControl.cancelEditComment': (comment: unknown) => {
      if (comment instanceof ReviewComment) comments.cancelEdit(comment);
    },
    'changeControl.saveComment': async (comment: unknown) => {
      if (comment instanceof ReviewComment) await comments.saveEdit(comment);
    },
    'changeControl.deleteComment': async (comment: unknown) => {
      if (comment instanceof ReviewComment) await comments.delete(comment);
    },
    'changeControl.resolveThread': async (arg: unknown) => {
      const thread = comments.threadOf(arg);
      if (thread) await comments.setResolved(thread, true);
    },
    'changeControl.reopenThread': async (arg: unknown) => {
      const thread = comments.threadOf(arg);
      if (thread) await comments.setResolved(thread, false);
    },

    'changeControl.createBranch': async () => {
      const c = deps.client();
      if (!c) return;
      const name = await vscode.window.showInputBox({
        title: 'Change Control: Create Branch',
        prompt: 'Name of the new branch',
        ignoreFocusOut: true,
        validateInput: (v) =>
          !v.trim() ? 'A name, please' : v.trim().length > 100 ? 'At most 100 characters' : undefined,
      });
      if (name === undefined) return;
      const description = await vscode.window.showInputBox({
        title: `Create branch ${name.trim()}`,
        prompt: 'Description (optional)',
        ignoreFocusOut: true,
      });
      if (description === undefined) return;
      const branch = await deps.inView(() =>
        c.createBranch({ name: name.trim(), description: description.trim() || undefined }),
      );
      log.info(`branch ${branch.name} created (id ${branch.id}, schema ${branch.schema_id})`);
      views.branchesChanged();
      const choice = await vscode.window.showInformationMessage(
        `Branch "${branch.name}" created. Edit its objects in the Branch Objects view (saving writes into the branch), then open its change request.`,
        'Show Branch Objects',
        'Open Change Request',
      );
      if (choice === 'Show Branch Objects')
        await vscode.commands.executeCommand('changeControl.showBranchObjects', branch.name);
      else if (choice) await vscode.commands.executeCommand('changeControl.openChangeRequestForBranch', branch.id);
    },

    'changeControl.editTitle': async (arg: unknown) => {
      const t = await deps.target(arg, 'edit', 'Change request to rename');
      if (!t) return;
      const value = await vscode.window.showInputBox({
        title: `Edit the title of "${title(t.cr)}"`,
        value: t.cr.title,
        prompt: 'Title',
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim().length > 200 ? 'At most 200 characters' : undefined),
      });
      if (value === undefined || value.trim() === t.cr.title) return;
      const updated = await deps.inView(() => t.c.updateChangeRequest(t.cr.id, { title: value.trim() }));
      cache.putRequest(updated);
      void vscode.window.showInformationMessage(`Renamed to "${title(updated)}".`);
      await deps.afterChange(t.cr.id);
    },

    'changeControl.editDescription': async (arg: unknown) => {
      const t = await deps.target(arg, 'edit', 'Change request whose description to edit');
      if (!t) return;
      const doc = await vscode.workspace.openTextDocument(descriptionUri(t.cr.id, title(t.cr)));
      await vscode.window.showTextDocument(doc, { preview: false });
      vscode.window.setStatusBarMessage(`Save to update the description of "${title(t.cr)}" on the service.`, 8000);
    },
  } satisfies Record<string, Handler>;
  return handlers;
}
