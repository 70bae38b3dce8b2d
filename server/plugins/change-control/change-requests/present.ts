import type { ChangeRequest } from '../../../../contract/api/change-control';
import {
  type Ctx,
  type UserPermissions,
  branchAccess,
  branchActionRefusal,
  branchWriteRefusal,
  findBranches,
  tagsOf,
} from '../../../host';
import { windowState, windowWarning } from '../gate/change-window';
import { parseJson, toBool } from '../db/database';
import type { ChangeRequestRow } from '../db/tables';
import { loadUsers } from '../evaluation/load';
import { conflictsReason, liveGate, namedConflictsReason, timeBlockedUntil, type GateState } from '../gate/merge-gate';
import { callerActions } from './actions';
import { staleChecksOf } from '../checks/state';
import { attachedPolicySummaries } from '../policies/attached-repository';
import { enabledFreezes, freezeNotices, freezeReason } from '../freezes/repository';
import { queuePositionOf, queuePositions } from '../gate/queue-repository';
import { refreshedGate } from './refreshed-gate';
import { snapshotChangeRequest, storedFields } from './snapshot';
import { CHANGE_REQUEST_TYPE } from '../names';

export type ChangeRequestOut = ChangeRequest;

async function callerPermissions(ctx: Ctx): Promise<UserPermissions | null> {
  return ctx.user ? ctx.host.permissions.forUser(ctx.user, ctx.db) : null;
}

interface Related {
  requester: { id: number; username: string; display: string } | null;
  overrideBy: { id: number; username: string; display: string } | null;
  policies: ChangeRequest['policies'];
  tags: ChangeRequest['tags'];
}

type Live = Pick<
  ChangeRequest,
  | 'approved'
  | 'ready_to_merge'
  | 'merge_blocked_reason'
  | 'blocked_until'
  | 'stale_checks'
  | 'has_conflicts'
  | 'queue_position'
  | 'freezes'
  | 'digest'
>;

function build(
  ctx: Ctx,
  row: ChangeRequestRow,
  related: Related,
  live: Live,
  actions: ChangeRequest['actions'],
): ChangeRequestOut {
  // Added onto the stored fields' object (not spread into a new one): a spread whose sources
  // vary in shape gives every object a hidden class of its own, which multiplied the memory
  // and the time of a page of requests.
  return Object.assign(storedFields(ctx, row), {
    requester: related.requester,
    approved: live.approved,
    ready_to_merge: live.ready_to_merge,
    merge_blocked_reason: live.merge_blocked_reason,
    blocked_until: live.blocked_until,
    stale_checks: live.stale_checks,
    has_conflicts: live.has_conflicts,
    // A completed or abandoned request is never in the merge queue.
    queue_position: row.status === 'completed' || row.status === 'abandoned' ? null : live.queue_position,
    freezes: live.freezes,
    digest: live.digest,
    tags: related.tags,
    window_warning: windowWarning(
      row.scheduled_start,
      row.scheduled_end,
      ctx.host.config.change_control.auto_merge_interval,
    ),
    policies: related.policies,
    override:
      row.override_reason === null
        ? null
        : {
            reason: row.override_reason,
            user: related.overrideBy,
            time: row.override_time ?? '',
            overridden_reason: row.overridden_reason ?? '',
          },
    actions,
  });
}

/** What `relatedOf` reads: the users it names, the attached policies, the tags. */
const RELATED_TABLES: readonly string[] = [
  'users',
  'cc_change_request_policies',
  'cc_policies',
  'tagged_items',
  'tags',
];

async function relatedOf(ctx: Ctx, rows: readonly ChangeRequestRow[]): Promise<Map<number, Related>> {
  const users = await loadUsers(
    ctx,
    rows.flatMap((r) => [r.requester_id, r.override_by_id].filter((id): id is number => id !== null)),
  );
  const ids = rows.map((r) => r.id);
  const attached = await attachedPolicySummaries(ctx, ids);
  const tags = await tagsOf(ctx, CHANGE_REQUEST_TYPE, ids);
  const out = new Map<number, Related>();
  for (const row of rows) {
    out.set(row.id, {
      requester: row.requester_id === null ? null : (users.get(row.requester_id) ?? null),
      overrideBy: row.override_by_id === null ? null : (users.get(row.override_by_id) ?? null),
      tags: tags.get(row.id) ?? [],
      policies: attached
        .filter((a) => a.cr === row.id)
        .map((a) => ({
          id: a.id,
          name: a.name,
          matched_object_types: parseJson<string[]>(a.types, []),
          enforcement: a.enforcement,
        })),
    });
  }
  return out;
}

/**
 * A change request as the detail endpoint shows it: `approved`, `ready_to_merge`,
 * `merge_blocked_reason` and `has_conflicts` computed now (the merge gate's own answer).
 */
export async function presentChangeRequest(
  ctx: Ctx,
  row: ChangeRequestRow,
  gate?: GateState,
): Promise<ChangeRequestOut> {
  const state = gate ?? refreshedGate(ctx, row) ?? (await liveGate(ctx, row));
  // The conflicts, named for this caller: only objects they may see.
  const mergeBlockedReason =
    state.conflictsBlock && state.branch
      ? [...state.reasons, await namedConflictsReason(ctx, state.branch.id)].join(' ')
      : state.mergeBlockedReason;
  const related = await ctx.host.readMemo.get(
    ctx,
    // Keyed by what it reads of the row, not by its last update: an edit of the request would
    // leave the previous answer kept (its tables did not move) until the memo's bound evicts it.
    `related:${row.id}|${row.requester_id}|${row.override_by_id}`,
    async () => (await relatedOf(ctx, [row])).get(row.id)!,
    RELATED_TABLES,
  );
  const access = await branchAccess(ctx);
  const actions = callerActions(ctx.user, await callerPermissions(ctx), snapshotChangeRequest(ctx, row), {
    status: row.status,
    requesterId: row.requester_id,
    branchExists: state.branch !== null,
    branchStatus: state.branch?.status ?? null,
    branchMergeRefusal:
      state.branch && !access.mayAct(state.branch, 'merge') ? branchActionRefusal(state.branch, 'merge') : null,
    branchWriteRefusal: state.branch && !access.mayWrite(state.branch) ? branchWriteRefusal(state.branch) : null,
    branchSyncRefusal:
      state.branch && !access.mayAct(state.branch, 'sync') ? branchActionRefusal(state.branch, 'sync') : null,
    readyToMerge: state.readyToMerge,
    mergeBlockedReason,
    onlyConflictsBlock: state.conflictsBlock && state.reasons.length === 0,
    onlyWindowBlocks: state.onlyWindowBlocks,
    gateEnforced: ctx.host.config.change_control.enforce_merge_gate,
  });
  return build(
    ctx,
    row,
    related,
    {
      approved: state.evaluation.approved,
      ready_to_merge: state.readyToMerge,
      merge_blocked_reason: mergeBlockedReason,
      blocked_until: state.blockedUntil?.toISOString() ?? null,
      stale_checks: staleChecksOf(state.checks),
      has_conflicts: state.hasConflicts,
      queue_position: await queuePositionOf(ctx, row.id),
      freezes: state.freezes,
      digest: state.digest,
    },
    actions,
  );
}

/** Why a listed request is not ready, from what was cached at its last refresh. */
function cachedBlockedReason(
  row: ChangeRequestRow,
  branch: { name: string; status: string } | undefined,
  now: Date,
  freezes: ChangeRequest['freezes'],
): string[] {
  if (row.status === 'completed') return ['The change request is completed.'];
  if (row.status === 'abandoned') return ['The change request is abandoned.'];
  const reasons: string[] = [];
  if (!branch) reasons.push('The branch of this change request has been deleted.');
  else if (branch.status !== 'ready') reasons.push(`Branch "${branch.name}" is ${branch.status}.`);
  if (row.status === 'draft') reasons.push('The change request is a draft; submit it for review.');
  else if (row.gates_cleared !== 1)
    reasons.push(
      'Approvals or required checks were outstanding at the last refresh; open the change request for details.',
    );
  const window = windowState(row.scheduled_start, row.scheduled_end, now);
  if (!window.open) reasons.push(window.reason!);
  for (const f of freezes) if (f.active) reasons.push(freezeReason(f));
  return reasons;
}

/**
 * A page of change requests as the list shows them: `approved`, `gates_cleared` and
 * `has_conflicts` as cached at each request's last refresh, the change window and branch read now.
 */
export async function presentChangeRequestList(
  ctx: Ctx,
  rows: readonly ChangeRequestRow[],
): Promise<ChangeRequestOut[]> {
  if (rows.length === 0) return [];
  const related = await relatedOf(ctx, rows);
  const branchIds = rows.flatMap((r) => (r.branch_id === null ? [] : [r.branch_id]));
  const branches = new Map((await findBranches(ctx, branchIds)).map((b) => [b.id, b]));
  const perms = await callerPermissions(ctx);
  const access = await branchAccess(ctx);
  const now = ctx.host.clock.now();
  const positions = await queuePositions(
    ctx,
    rows.map((r) => r.id),
  );
  const allFreezes = await enabledFreezes(ctx);
  return rows.map((row) => {
    const branch = row.branch_id === null ? undefined : branches.get(row.branch_id);
    const live = row.status !== 'completed' && row.status !== 'abandoned';
    const rel = related.get(row.id)!;
    const policyIds = rel.policies.filter((p) => p.enforcement !== 'evaluate').map((p) => p.id);
    const freezes = live ? freezeNotices(allFreezes, policyIds, now) : [];
    const reasons = cachedBlockedReason(row, branch, now, freezes);
    const window = windowState(row.scheduled_start, row.scheduled_end, now);
    const onlyWindowBlocks =
      reasons.length === 1 && !window.open && reasons[0] === window.reason && row.status === 'approved';
    // Conflicts as cached at the last refresh (the detail names them).
    const conflictsBlock = live && toBool(row.has_conflicts) && branch?.status === 'ready';
    const ready = reasons.length === 0 && row.status === 'approved' && !conflictsBlock;
    // Only time holds it (approved, checks clear at the last refresh, a ready branch, no conflicts).
    const timeOnly =
      !ready && row.status === 'approved' && row.gates_cleared === 1 && branch?.status === 'ready' && !conflictsBlock;
    const blockedUntil = timeOnly
      ? timeBlockedUntil(row.scheduled_start, row.scheduled_end, allFreezes, policyIds, now)
      : null;
    const mergeBlockedReason = ready
      ? ''
      : [...reasons, ...(conflictsBlock ? [conflictsReason()] : [])].join(' ') ||
        'Approvals or required checks were outstanding at the last refresh.';
    const actions = callerActions(ctx.user, perms, snapshotChangeRequest(ctx, row), {
      status: row.status,
      requesterId: row.requester_id,
      branchExists: branch !== undefined,
      branchStatus: branch?.status ?? null,
      branchMergeRefusal: branch && !access.mayAct(branch, 'merge') ? branchActionRefusal(branch, 'merge') : null,
      branchWriteRefusal: branch && !access.mayWrite(branch) ? branchWriteRefusal(branch) : null,
      branchSyncRefusal: branch && !access.mayAct(branch, 'sync') ? branchActionRefusal(branch, 'sync') : null,
      readyToMerge: ready,
      mergeBlockedReason,
      onlyConflictsBlock: conflictsBlock && reasons.length === 0 && row.status === 'approved',
      onlyWindowBlocks,
      gateEnforced: ctx.host.config.change_control.enforce_merge_gate,
    });
    return build(
      ctx,
      row,
      rel,
      {
        approved: toBool(row.approved),
        ready_to_merge: ready,
        merge_blocked_reason: mergeBlockedReason,
        blocked_until: blockedUntil?.toISOString() ?? null,
        stale_checks: live ? parseJson<ChangeRequest['stale_checks']>(row.stale_checks, []) : [],
        has_conflicts: toBool(row.has_conflicts),
        queue_position: positions.get(row.id) ?? null,
        freezes,
        digest: row.digest,
      },
      actions,
    );
  });
}
