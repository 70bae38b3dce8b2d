import type { ChangeRequestStatus } from '../../../../contract/api/change-control';
import type { FreezeNotice } from '../../../../contract/api/freezes';
import { branchConflicts, CONTRIBUTORS_READS, DIRECTORY_TABLES, type Ctx, type BranchRow } from '../../../host';
import { DIGEST_TABLES, branchDigest, conflictsFound, conflictWords } from '../../branching';
import { branchOf } from '../change-requests/repository';
import { computations } from '../computations';
import { windowState, type WindowState } from './change-window';
import { deriveStatus } from '../change-requests/status';
import { blockingReason, checkStates, type CheckFacts, type CheckState } from '../checks/state';
import type { ChangeRequestRow } from '../db/tables';
import type { EvaluationResult } from '../evaluation/evaluate';
import { evaluateChangeRequest, type GoverningPolicy } from '../evaluation/load';
import { PERMISSIONS } from '../names';
import { ATTACHED_TABLES, attachedPolicies, MATCH_TABLES, matchBranch } from '../policies/governing';
import {
  enabledFreezes,
  FREEZE_TABLES,
  freezeNotices,
  freezeReason,
  frozenUntil,
  type LoadedFreezes,
} from '../freezes/repository';

/**
 * The merge gate: whether a change request's branch may merge now, and the words for why not.
 * Ready means: the request is open and submitted, its policies are satisfied (status
 * `approved`), every required check passes, the change window is open, and the branch exists
 * and is ready, and no freeze that applies to it is in force, and its branch does not conflict with
 * main. A conflict is the one reason a merger may set aside by acknowledging it (the merge itself
 * asks for that, `mergeBranch`): the request is not ready (automatic merge and the merge queue
 * wait), and `merge_blocked_reason` says why; a merge by hand acknowledging the conflicts passes.
 */
export interface GateState {
  status: ChangeRequestStatus;
  evaluation: EvaluationResult;
  governing: GoverningPolicy[];
  checks: CheckState[];
  checksCleared: boolean;
  window: WindowState;
  /** The freezes that apply to the request, in force now or starting soon (those in force block). */
  freezes: FreezeNotice[];
  branch: BranchRow | null;
  hasConflicts: boolean;
  /** The digest of the branch's net diff now (the last one cached once the branch is gone). */
  digest: string | null;
  /** Policies and every required check satisfied; the change window is not part of it. */
  gatesCleared: boolean;
  readyToMerge: boolean;
  /** The change window is the only thing in the way (a holder of the override may merge). */
  onlyWindowBlocks: boolean;
  /** Every reason but the conflicts with main, in order (what the merge validator refuses with). */
  reasons: string[];
  /** The open request's ready branch conflicts with main: it merges only by hand, acknowledging it. */
  conflictsBlock: boolean;
  /** Every reason, in order, the conflicts last (in words naming no object: `conflictsReason`). */
  mergeBlockedReason: string;
  /** Only time holds it (its change window, freezes): the instant it may merge; null otherwise. */
  blockedUntil: Date | null;
}

/**
 * When a request that only time holds (a change window not yet open, freezes in force) may
 * merge: the window's start, past every freeze in force then, and so on; null when the window
 * closes first (it never may) or nothing holds it.
 */
export function timeBlockedUntil(
  start: string | null,
  end: string | null,
  freezes: LoadedFreezes,
  policyIds: readonly number[],
  now: Date,
): Date | null {
  let t = now;
  for (let round = 0; round < 20; round++) {
    const window = windowState(start, end, t);
    if (!window.open && window.changesAt === null) return null;
    const next = window.open ? (frozenUntil(freezes, policyIds, t) ?? t) : window.changesAt!;
    if (next.getTime() === t.getTime()) break;
    t = next;
  }
  return t > now ? t : null;
}

/** Why a conflicting branch does not merge by itself; `objects` names them for a caller who may see them. */
export function conflictsReason(objects?: string): string {
  return `The branch conflicts with main${objects ? ` (${objects})` : ''}; merge it by hand acknowledging the conflicts, or sync the branch.`;
}

/** Conflicting objects named in a blocked reason (those beyond are counted). */
const CONFLICTS_IN_REASON = 5;

/** `conflictsReason` naming the branch's conflicts as the context's user may learn them ("sw1: status and 2 more you cannot view"). */
export async function namedConflictsReason(ctx: Ctx, branchId: number): Promise<string> {
  return conflictsReason(conflictWords(await conflictsFound(ctx, branchId, CONFLICTS_IN_REASON, 50)));
}

export interface GateOptions {
  /** Re-match policies from the branch now (the merge gate does); otherwise use the attached set. */
  rematch?: boolean;
  /** The caller may merge outside the change window. */
  overrideWindow?: boolean;
  /** The governing policies, when the caller has just matched them. */
  governing?: GoverningPolicy[];
  /** Their evaluation, when the caller has just made it. */
  evaluation?: EvaluationResult;
  /** The request's stored checks, when the caller has just read them. */
  checkRows?: readonly CheckFacts[];
  /** Reuse the evaluation kept in the read memo (a reader's gate; a merge evaluates afresh). */
  keptEvaluation?: boolean;
}

/** Whether the branch conflicts with main now. */
export async function branchConflictsNow(ctx: Ctx, branch: BranchRow | null): Promise<boolean> {
  if (!branch || branch.status !== 'ready') return false;
  return branchConflicts(ctx, branch.id);
}

/** What the gate finds apart from the change window (which depends on the time of asking). */
export type GateFacts = Omit<
  GateState,
  | 'window'
  | 'freezes'
  | 'readyToMerge'
  | 'onlyWindowBlocks'
  | 'reasons'
  | 'mergeBlockedReason'
  | 'conflictsBlock'
  | 'blockedUntil'
> & { reasons: string[]; allFreezes: LoadedFreezes };

/** What the gate reads of a branch: its row, its digest and whether it conflicts with main. */
interface BranchFacts {
  branch: BranchRow | null;
  digest: string | null;
  hasConflicts: boolean;
}

/**
 * The request's branch facts, reused while the branch's data is not written (a check report, a
 * review or a comment keeps them); shared: never change them. Without a branch: none.
 */
function branchFacts(ctx: Ctx, branchId: number): Promise<BranchFacts> {
  return ctx.host.readMemo.get(
    ctx,
    `branch-data:gate|${branchId}`,
    async () => {
      computations(ctx.host).branchFacts++;
      const branch = await branchOf(ctx, { branch_id: branchId });
      return {
        branch,
        digest: branch ? await branchDigest(ctx, branch.id) : null,
        hasConflicts: await branchConflictsNow(ctx, branch),
      };
    },
    DIGEST_TABLES,
  );
}

/** A number per list of governing policies (the list `matchBranch` keeps is the same object while kept). */
const listIds = new WeakMap<readonly GoverningPolicy[], number>();
let nextListId = 0;
function listId(governing: readonly GoverningPolicy[]): number {
  let id = listIds.get(governing);
  if (id === undefined) {
    id = ++nextListId;
    listIds.set(governing, id);
  }
  return id;
}

/**
 * What a request's evaluation under given policies is read from: its reviews, its branch's
 * contributors, users and groups, the permissions (an approval counts while its reviewer may
 * still review), and its own row (whose delete takes its reviews by cascade).
 */
const EVALUATION_READS: readonly string[] = [
  ...DIRECTORY_TABLES,
  'permissions',
  'cc_change_requests',
  'cc_reviews',
  ...CONTRIBUTORS_READS,
];

/**
 * The request's evaluation under `governing`, kept while what it reads is not written: a new
 * comment or a check result of the request (which move its gate) keeps it. Shared: never change it.
 */
function keptEvaluation(
  ctx: Ctx,
  cr: ChangeRequestRow,
  governing: readonly GoverningPolicy[],
): Promise<EvaluationResult> {
  return ctx.host.readMemo.get(
    ctx,
    evaluationKey(cr, governing),
    () => evaluateChangeRequest(ctx, cr, governing),
    EVALUATION_READS,
  );
}

function evaluationKey(cr: ChangeRequestRow, governing: readonly GoverningPolicy[]): string {
  return `evaluation:${cr.id}|${cr.branch_id ?? ''}|${cr.requester_id ?? ''}|${cr.last_updated}|${listId(governing)}`;
}

async function gateFacts(ctx: Ctx, cr: ChangeRequestRow, options: GateOptions): Promise<GateFacts> {
  computations(ctx.host).gate++;
  const ofBranch = cr.branch_id === null ? null : await branchFacts(ctx, cr.branch_id);
  const branch = ofBranch?.branch ?? null;
  const canMatch = branch !== null && branch.status !== 'merged' && cr.status !== 'completed';
  const governing =
    options.governing ??
    (options.rematch && canMatch ? await matchBranch(ctx, branch.id) : await attachedPolicies(ctx, cr.id));
  const evaluation =
    options.evaluation ??
    (options.keptEvaluation
      ? await keptEvaluation(ctx, cr, governing)
      : await evaluateChangeRequest(ctx, cr, governing));
  const status = deriveStatus(cr.status, evaluation);
  const digest = branch ? ofBranch!.digest : cr.digest;
  const checks = await checkStates(ctx, cr.id, governing, options.checkRows, digest);
  const blocking = checks.filter((c) => c.blocks);
  const hasConflicts = ofBranch?.hasConflicts ?? false;

  const reasons: string[] = [];
  if (status === 'completed') reasons.push('The change request is completed.');
  else if (status === 'abandoned') reasons.push('The change request is abandoned.');
  else {
    if (!branch) reasons.push('The branch of this change request has been deleted.');
    else if (branch.status !== 'ready') reasons.push(`Branch "${branch.name}" is ${branch.status}.`);
    if (status === 'draft') reasons.push('The change request is a draft; submit it for review.');
    else if (status !== 'approved') reasons.push(...evaluation.reasons);
    for (const check of blocking) reasons.push(blockingReason(check));
  }
  const checksCleared = blocking.length === 0;
  const allFreezes = await enabledFreezes(ctx);
  return {
    status,
    evaluation,
    governing,
    checks,
    checksCleared,
    branch,
    hasConflicts,
    digest,
    gatesCleared: status === 'approved' && checksCleared,
    reasons,
    allFreezes,
  };
}

/** The facts with the change window and the freezes as they stand at `now`. */
function withWindow(facts: GateFacts, cr: ChangeRequestRow, now: Date, overrideWindow: boolean): GateState {
  const allFreezes = facts.allFreezes;
  const window = windowState(cr.scheduled_start, cr.scheduled_end, now);
  const live = facts.status !== 'completed' && facts.status !== 'abandoned';
  // A policy on trial (enforcement "evaluate") never blocks: its freezes do not apply.
  const policyIds = facts.governing.filter((g) => g.policy.enforcement !== 'evaluate').map((g) => g.policy.id);
  const freezes = live ? freezeNotices(allFreezes, policyIds, now) : [];
  const reasons = [...facts.reasons];
  const onlyWindowBlocks =
    reasons.length === 0 && !window.open && facts.status === 'approved' && !freezes.some((f) => f.active);
  if (!window.open && !overrideWindow && live) reasons.push(window.reason!);
  // A freeze is a blocking reason like any other: only the accountable override passes it.
  for (const f of freezes) if (f.active) reasons.push(freezeReason(f));
  const conflictsBlock = live && facts.hasConflicts && facts.branch?.status === 'ready';
  const readyToMerge = reasons.length === 0 && !conflictsBlock;
  // Only the window and freezes hold it: when they let it go is known.
  const blockedUntil =
    !readyToMerge && live && facts.reasons.length === 0 && !conflictsBlock && facts.status === 'approved'
      ? timeBlockedUntil(cr.scheduled_start, cr.scheduled_end, allFreezes, policyIds, now)
      : null;
  // One literal, not the facts copied twice (every detail read makes one).
  return {
    status: facts.status,
    evaluation: facts.evaluation,
    governing: facts.governing,
    checks: facts.checks,
    checksCleared: facts.checksCleared,
    branch: facts.branch,
    hasConflicts: facts.hasConflicts,
    digest: facts.digest,
    gatesCleared: facts.gatesCleared,
    window,
    freezes,
    readyToMerge,
    onlyWindowBlocks,
    reasons,
    conflictsBlock,
    mergeBlockedReason: conflictsBlock ? [...reasons, conflictsReason()].join(' ') : reasons.join(' '),
    blockedUntil,
  };
}

export async function computeGate(ctx: Ctx, cr: ChangeRequestRow, options: GateOptions = {}): Promise<GateState> {
  return (await computeGateAndFacts(ctx, cr, options)).gate;
}

/** The gate, and the facts it was made of (what `keepGateForReaders` keeps). */
export async function computeGateAndFacts(
  ctx: Ctx,
  cr: ChangeRequestRow,
  options: GateOptions = {},
): Promise<{ gate: GateState; facts: GateFacts }> {
  const facts = await gateFacts(ctx, cr, options);
  return { gate: withWindow(facts, cr, ctx.host.clock.now(), options.overrideWindow ?? false), facts };
}

/** The tables every request's gate reads: the branch's facts, policies and their matches, freezes, users and groups. */
const SHARED_GATE_TABLES: readonly string[] = [
  ...new Set([
    ...DIGEST_TABLES,
    ...MATCH_TABLES,
    ...ATTACHED_TABLES,
    ...FREEZE_TABLES,
    ...DIRECTORY_TABLES,
    'permissions',
  ]),
];

/**
 * What a request's gate is read from: the shared tables, its checks and reviews, the requests
 * (whose delete takes their checks and reviews by cascade), and the changelog (the contributors).
 */
const GATE_READS: readonly string[] = [
  ...SHARED_GATE_TABLES,
  'cc_change_requests',
  'cc_merge_checks',
  'cc_reviews',
  ...CONTRIBUTORS_READS,
];

/**
 * The gate as a reader sees it now (policies re-matched, no window override): what the detail
 * endpoint shows. The facts are reused while nothing they are read from is written
 * (`GATE_READS`); the window is read at every call. A merge never decides on these: it computes
 * the gate afresh inside its own write transaction.
 */
export async function liveGate(ctx: Ctx, cr: ChangeRequestRow): Promise<GateState> {
  const facts = await ctx.host.readMemo.get(
    ctx,
    liveGateKey(ctx, cr),
    () => gateFacts(ctx, cr, { rematch: true, keptEvaluation: true }),
    GATE_READS,
  );
  return withWindow(facts, cr, ctx.host.clock.now(), false);
}

/** Where `liveGate` keeps a request's facts in the read memo: per row as last updated. */
function liveGateKey(ctx: Ctx, cr: ChangeRequestRow): string {
  return `gate:${ctx.baseUrl}|${cr.id}|${cr.branch_id ?? ''}|${cr.last_updated}`;
}

/**
 * A write's refresh has computed, for the request as the write leaves it (`cr`), the facts a
 * reader's `liveGate` would (policies matched from the branch): kept for the readers once the
 * write commits, unless the write goes on to change what they are read from
 * (`ReadMemo.keepAtCommit`), and so is their evaluation. So the first detail read after a write
 * computes neither again. Shared from then on: never change them.
 */
export function keepGateForReaders(ctx: Ctx, cr: ChangeRequestRow, facts: GateFacts): void {
  ctx.host.readMemo.keepAtCommit(ctx, liveGateKey(ctx, cr), facts, GATE_READS);
  // And the evaluation in them, which a reader reuses when only the gate's other facts move.
  ctx.host.readMemo.keepAtCommit(ctx, evaluationKey(cr, facts.governing), facts.evaluation, EVALUATION_READS);
}

/** Whether the caller may merge this request outside its change window. */
export async function mayOverrideWindow(ctx: Ctx, crObject: Record<string, unknown>): Promise<boolean> {
  if (!ctx.user) return false;
  const perms = await ctx.host.permissions.forUser(ctx.user, ctx.db);
  return perms.allows(PERMISSIONS.overrideWindow, crObject);
}
