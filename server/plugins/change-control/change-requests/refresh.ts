import { findBranch, inTransaction, notify, usersHolding, type Ctx, type HostServices } from '../../../host';
import { runChecks } from '../checks/run';
import {
  checkedRequest,
  checkFactsOf,
  checkRowsOutOfDate,
  checkStates,
  declaredFor,
  staleChecksOf,
  type CheckFacts,
} from '../checks/state';
import { syncCheckDeadlines } from '../checks/deadlines';
import type { ChangeRequestRow } from '../db/tables';
import { fromBool } from '../db/database';
import { evaluateChangeRequest, type GoverningPolicy } from '../evaluation/load';
import type { LifecycleEvent } from '../../../../contract/api/change-control';
import type { EvaluationResult } from '../evaluation/evaluate';
import { emitLifecycleEvent, transitionEvent } from './lifecycle-events';
import { dropRefreshedGate, keepRefreshedGate } from './refreshed-gate';
import { computeGateAndFacts, keepGateForReaders } from '../gate/merge-gate';

import { attachedPolicies, matchBranch, saveAttachedPolicies } from '../policies/governing';
import { stateSlot } from '../state';
import type { GateState } from '../gate/merge-gate';
import {
  getChangeRequestRow,
  listOpenChangeRequestIds,
  saveOutstandingReviewers,
  updateChangeRequest,
  writeStatus,
} from './repository';
import { deriveStatus, isHeld, isOpen } from './status';
import { announceRequestCacheWritten } from '../stream/announce';
import { saveTrialReviewers } from '../reviews/trial-repository';

/** A submitted request still open: its reviewers are waited for. */
const SUBMITTED_OPEN: readonly string[] = ['needs-review', 'approved', 'rejected'];
import { CHANGE_REQUEST_TYPE } from '../names';
import { displayOfChangeRequest, snapshotChangeRequest } from './snapshot';

/**
 * Refreshing a change request after anything that can move it: re-match its policies from the
 * branch, re-derive its status (firing the event of a real transition), run its registered
 * checks when a trigger asks for it, and refresh the cached `approved`, `gates_cleared` and
 * `has_conflicts` and the queue of outstanding reviewers.
 *
 * Refreshes are collapsed per request and transaction: every trigger of one write adds its
 * wishes to one pending refresh, which runs once, just before the transaction commits (so
 * the answer of the write already reflects it). The lifecycle events of the write are fired at
 * the end of its refresh, with the gate the refresh computed: one gate and one evaluation per
 * request and change request.
 */
export interface RefreshWishes {
  /** Re-match the governing policies from what the branch touches (default true). */
  rematch?: boolean;
  /** Run the registered checks (refresh triggers 1-8). */
  checks?: boolean;
  /** Run them on a completed request too (its branch was reverted and is live again). */
  completedToo?: boolean;
  /**
   * Re-evaluate the people gate (default true). False when only check results moved (a
   * pipeline report): the status, the policies and the conflicts cannot have moved, so only
   * `gates_cleared` (and an automatic merge) follow.
   */
  evaluate?: boolean;
  /** Lifecycle events of the write, fired (in order, before any transition the refresh finds) once it is refreshed. */
  events?: LifecycleEmit[];
  /**
   * A check result may now be outdated or the timeout's (a report for an older digest, a
   * timeout): the request's `stale_checks` are computed again even if it is not approved.
   */
  staleChecks?: boolean;
  /**
   * The policies the caller has just matched from the branch and their evaluation: used
   * instead of evaluating again, unless another trigger joins the refresh.
   */
  known?: { governing: GoverningPolicy[]; evaluation: EvaluationResult };
}

/** A lifecycle event waiting for the refresh of its request. */
export interface LifecycleEmit {
  event: LifecycleEvent;
  before: ChangeRequestRow | null;
  after: ChangeRequestRow;
}

/** Work that follows every refresh of a change request, inside its transaction (automatic merge). */
export type AfterRefresh = (ctx: Ctx, cr: ChangeRequestRow, gate: GateState) => Promise<void>;

/** The work that follows every refresh, registered at start. */
export function afterRefresh(host: HostServices): AfterRefresh[] {
  return stateSlot(host, 'after-refresh', (): AfterRefresh[] => []);
}

interface Pending {
  staleChecks: boolean;
  rematch: boolean;
  checks: boolean;
  completedToo: boolean;
  evaluate: boolean;
  events: LifecycleEmit[];
  known: RefreshWishes['known'];
}

/** Another trigger's wishes joined to a pending refresh: any of them asks, it is done. */
function mergeWishes(existing: Pending, more: Pending): void {
  existing.rematch ||= more.rematch;
  existing.staleChecks ||= more.staleChecks;
  existing.checks ||= more.checks;
  existing.completedToo ||= more.completedToo;
  existing.evaluate ||= more.evaluate;
  existing.events.push(...more.events);
  existing.known = undefined;
}

export async function requestRefresh(ctx: Ctx, changeRequestId: number, wishes: RefreshWishes = {}): Promise<void> {
  const want: Pending = {
    staleChecks: wishes.staleChecks ?? false,
    rematch: wishes.rematch ?? true,
    checks: wishes.checks ?? false,
    completedToo: wishes.completedToo ?? false,
    evaluate: wishes.evaluate ?? true,
    events: [...(wishes.events ?? [])],
    known: wishes.known,
  };
  dropRefreshedGate(ctx, changeRequestId);
  if (!ctx.inTransaction) {
    await inTransaction(ctx, (tx) => refreshNow(tx, changeRequestId, want));
    return;
  }
  // Every trigger of one write adds its wishes to one refresh per request, run before the commit.
  await ctx.beforeCommit(
    `change-control:refresh:${changeRequestId}`,
    (tx, wished: Pending) => refreshNow(tx, changeRequestId, wished),
    want,
    mergeWishes,
  );
}

/** Refreshes every open change request (after a policy, a rule or a group changes). */
export async function requestRefreshOfOpen(ctx: Ctx, wishes: RefreshWishes = {}): Promise<void> {
  for (const id of await listOpenChangeRequestIds(ctx)) await requestRefresh(ctx, id, wishes);
}

/**
 * The refresh after check results alone moved: `gates_cleared` follows the request's (already
 * derived) status and its required checks. Returns true when the full refresh must still run
 * (the request asks for automatic merge and its gates may now be clear).
 */
async function checkResultsOnly(
  ctx: Ctx,
  cr: ChangeRequestRow,
  digest: string | null,
  staleMayMove: boolean,
): Promise<boolean> {
  // Only an approved request can have its gates cleared: before that, its checks cannot move them;
  // and only a result that may be (or was) outdated or the timeout's moves its stale checks.
  const needed = cr.status === 'approved' || staleMayMove || cr.stale_checks !== '[]';
  const states = needed ? await checkStates(ctx, cr.id, await attachedPolicies(ctx, cr.id), undefined, digest) : [];
  const gatesCleared = cr.status === 'approved' && states.every((c) => !c.blocks);
  await updateChangeRequest(
    ctx,
    cr,
    {
      gates_cleared: fromBool(gatesCleared),
      stale_checks: needed && isOpen(cr.status) ? JSON.stringify(staleChecksOf(states)) : undefined,
    },
    { changelog: false },
  );
  return gatesCleared && cr.auto_merge === 1 && ctx.host.config.change_control.enable_auto_merge;
}

async function refreshNow(ctx: Ctx, id: number, wishes: Pending): Promise<void> {
  const resultsOnly = !wishes.evaluate && !wishes.rematch && !wishes.checks;
  // Only check results moved (a report): the request and its digest as the report read them.
  const checked = resultsOnly ? await checkedRequest(ctx, id) : undefined;
  let cr = checked ? checked.cr : await getChangeRequestRow(ctx, id);
  if (!cr) return;
  if (checked && !(await checkResultsOnly(ctx, cr, checked.digest, wishes.staleChecks))) {
    for (const e of wishes.events) await emitLifecycleEvent(ctx, e.event, e.before, e.after);
    return;
  }
  let runTheChecks = wishes.checks;
  const events = [...wishes.events];
  const known = wishes.rematch ? undefined : wishes.known;

  let matched: GoverningPolicy[] | undefined;
  if (isOpen(cr.status) && wishes.rematch && cr.branch_id !== null) {
    const branch = await findBranch(ctx, cr.branch_id);
    if (branch && branch.status !== 'merged') {
      matched = await matchBranch(ctx, branch.id);
      // Trigger 4: a policy attached or detached.
      if (await saveAttachedPolicies(ctx, cr.id, matched)) {
        runTheChecks = true;
        // The request shows its policies.
        await announceRequestCacheWritten(ctx, cr.id);
      }
    }
  }
  // Without a branch to match (gone, merged) or a wish to, the attached set governs.
  const governing = matched ?? known?.governing ?? (await attachedPolicies(ctx, cr.id));

  const evaluation = known?.evaluation ?? (await evaluateChangeRequest(ctx, cr, governing));
  const next = deriveStatus(cr.status, evaluation);
  if (next !== cr.status) {
    const before = cr;
    cr = await writeStatus(ctx, cr, next);
    const event = transitionEvent(before.status, cr.status);
    if (event) events.push({ event, before, after: cr });
    // Trigger 3: reaching approved re-runs the checks, so nothing merges on a stale result.
    if (next === 'approved') runTheChecks = true;
  }
  // A request waits for each eligible reviewer of an unsatisfied rule who has not reviewed since
  // the last change, whatever others decided (a rejection by someone else keeps the queue).
  const waiting = await saveOutstandingReviewers(
    ctx,
    cr.id,
    isHeld(cr.status) ? [] : evaluation.outstandingReviewerIds,
  );
  if (waiting.length > 0) await notifyWaitingReviewers(ctx, cr, waiting);
  // Reviewers only a policy on trial names: advisory, and waited for only while the request is submitted and open.
  await saveTrialReviewers(
    ctx,
    cr.id,
    evaluation.trialReviewerIds,
    SUBMITTED_OPEN.includes(cr.status) ? evaluation.trialWaitingIds : [],
  );

  // A declaration without its row (a policy newly naming a check) runs the checks too.
  const checksLive = isOpen(cr.status) || (wishes.completedToo && cr.status === 'completed');
  let checkRows: CheckFacts[] = await checkFactsOf(ctx, cr.id);
  if (checksLive && (runTheChecks || checkRowsOutOfDate(ctx, checkRows, governing))) {
    await runChecks(ctx, cr, governing);
    checkRows = await checkFactsOf(ctx, cr.id);
  }
  // Deadlines follow the declarations (a policy's timeout changed) and the request (closed: none).
  await syncCheckDeadlines(ctx, declaredFor(ctx, governing), checkRows, isOpen(cr.status));

  const { gate, facts } = await computeGateAndFacts(ctx, cr, { governing, evaluation, checkRows });
  cr = await updateChangeRequest(
    ctx,
    cr,
    {
      approved: fromBool(evaluation.approved),
      gates_cleared: fromBool(gate.gatesCleared),
      has_conflicts: fromBool(gate.hasConflicts),
      stale_checks: JSON.stringify(isOpen(cr.status) ? staleChecksOf(gate.checks) : []),
    },
    { changelog: false },
  );
  // What a reader would compute now (policies matched from the branch): the rest of the write
  // reuses it, and the first reader after the commit its facts.
  if (matched || known) {
    keepRefreshedGate(ctx, cr, gate);
    keepGateForReaders(ctx, cr, facts);
  }
  for (const e of events) await emitLifecycleEvent(ctx, e.event, e.before, e.after, gate);
  for (const hook of afterRefresh(ctx.host)) await hook(ctx, cr, gate);
}

/**
 * Tells the reviewers a request starts waiting for (submitted, their review gone stale, a rule
 * newly naming them) that it does, when `notify_reviewers` is on; only those who may open it.
 */
async function notifyWaitingReviewers(ctx: Ctx, cr: ChangeRequestRow, userIds: readonly number[]): Promise<void> {
  if (!ctx.host.config.change_control.notify_reviewers) return;
  const recipients = await usersHolding(
    ctx,
    userIds,
    `${CHANGE_REQUEST_TYPE.split('.')[0]}.view_changerequest`,
    snapshotChangeRequest(ctx, cr),
  );
  await notify(ctx, recipients, {
    objectType: CHANGE_REQUEST_TYPE,
    objectId: cr.id,
    objectRepr: displayOfChangeRequest(cr),
    eventType: 'change_request_review_requested',
  });
}
