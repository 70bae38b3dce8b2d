import { activeGroupMembers, type Ctx, type Host } from '../../host';
import { openRequestsApprovedBy } from './reviews/repository';
import { transitionEvent } from './change-requests/lifecycle-events';
import { requestRefresh } from './change-requests/refresh';
import { openRequestsGovernedByPeople } from './policies/attached-repository';
import { findChangeRequestForBranch, updateChangeRequest } from './change-requests/repository';
import { isOpen } from './change-requests/status';
import { followContent } from './change-requests/content';
import { mergeGateValidator } from './gate/validator';
import { recordWindowOverride } from './gate/override';
import { leaveQueue } from './gate/queue-repository';
import { nowIso } from './db/database';

/**
 * How change requests follow their branch: edits make reviews stale and re-match policies,
 * sync and revert refresh the checks, a merge completes the request, a rename is followed,
 * a deletion leaves the request as history. The merge gate is the host's merge validator.
 */
export function registerBranchHooks(host: Host): void {
  host.mergeValidators.add(mergeGateValidator);

  host.branchHooks.on('changesMoved', async (ctx, { branch }) => {
    const cr = await findChangeRequestForBranch(ctx, branch.id);
    if (!cr || !isOpen(cr.status)) return;
    // Review rule 5: the branch moved on, so its reviews are stale and stale approvals drop
    // (by default only when its net diff differs from the one each review was given on).
    await followContent(ctx, cr, true);
    // Trigger 6 (a branch diff changed); matching follows what the branch touches now.
    await requestRefresh(ctx, cr.id, { rematch: true, checks: true });
  });

  const refreshChecks = async (ctx: Ctx, branchId: number, completedToo: boolean): Promise<void> => {
    const cr = await findChangeRequestForBranch(ctx, branchId);
    // A sync that rebases what the branch changes moves its net diff; one bringing only unrelated changes does not.
    if (cr && isOpen(cr.status)) await followContent(ctx, cr, false);
    // Trigger 5: synced or reverted. A revert undoes the merge that completed the request: its
    // branch is live again, so its checks run even though the request stays completed.
    if (cr) await requestRefresh(ctx, cr.id, { rematch: true, checks: true, completedToo });
  };
  host.branchHooks.on('synced', async (ctx, { branch }) => refreshChecks(ctx, branch.id, false));
  host.branchHooks.on('reverted', async (ctx, { branch }) => refreshChecks(ctx, branch.id, true));

  host.branchHooks.on('merged', async (ctx, { branch, acknowledgedConflicts }) => {
    const cr = await findChangeRequestForBranch(ctx, branch.id);
    if (!cr || !isOpen(cr.status)) return;
    // Merged outside its change window by a holder of the window override: an override too.
    const recorded = await recordWindowOverride(ctx, cr, branch);
    // The conflicts the merger acknowledged stay on the request (its changelog entry and the
    // completion event carry them too).
    const after = await updateChangeRequest(ctx, recorded, {
      status: 'completed',
      merge_acknowledged_conflicts: acknowledgedConflicts ? JSON.stringify(acknowledgedConflicts) : null,
    });
    // Merged by hand or by an override while queued: it leaves the merge queue (the queue's own
    // merge runs its job, which it completes itself).
    await leaveQueue(
      ctx,
      cr.id,
      after.override_reason !== null ? 'merged by an override, outside the queue' : 'merged by hand, outside the queue',
      nowIso(ctx),
    );
    const event = transitionEvent(cr.status, after.status);
    await requestRefresh(ctx, cr.id, { rematch: false, events: event ? [{ event, before: cr, after }] : [] });
  });

  host.branchHooks.on('renamed', async (ctx, { branch }) => {
    const cr = await findChangeRequestForBranch(ctx, branch.id);
    if (cr) await updateChangeRequest(ctx, cr, { branch_name: branch.name });
  });

  host.branchHooks.on('deleting', async (ctx, { branch }) => {
    const cr = await findChangeRequestForBranch(ctx, branch.id);
    if (!cr) return;
    // The request outlives its branch: it keeps its name, reviews, threads and check results.
    await updateChangeRequest(ctx, cr, { branch_id: null, branch_deleted: 1, branch_name: branch.name });
    // The built-in checks report skipped once the branch is gone.
    if (isOpen(cr.status)) await requestRefresh(ctx, cr.id, { rematch: false, checks: true });
  });

  // Who may approve follows group membership, user activity and permissions (an approval counts
  // while its reviewer may still review the request).
  host.events.subscribe(async (ctx, event) => {
    if (event.objectType === 'users.user') {
      const pre = event.prechange as { groups?: number[]; is_active?: boolean; is_superuser?: boolean } | null;
      const post = event.postchange as { groups?: number[]; is_active?: boolean; is_superuser?: boolean } | null;
      const moved =
        JSON.stringify(pre?.groups ?? null) !== JSON.stringify(post?.groups ?? null) ||
        pre?.is_active !== post?.is_active ||
        pre?.is_superuser !== post?.is_superuser;
      if (moved)
        await refreshGovernedByPeople(ctx, [event.objectId], [...(pre?.groups ?? []), ...(post?.groups ?? [])]);
    } else if (event.objectType === 'users.group' && event.event === 'object_deleted') {
      await refreshGovernedByPeople(ctx, [], [event.objectId]);
    } else if (event.objectType === 'users.objectpermission') {
      const pre = event.prechange as { users?: number[]; groups?: number[] } | null;
      const post = event.postchange as { users?: number[]; groups?: number[] } | null;
      const groups = [...(pre?.groups ?? []), ...(post?.groups ?? [])];
      const members = (await activeGroupMembers(ctx, groups)).map((m) => m.userId);
      await refreshRequests(
        ctx,
        await openRequestsApprovedBy(ctx, [...(pre?.users ?? []), ...(post?.users ?? []), ...members]),
      );
    }
  });
}

/**
 * Refreshes the open requests governed by a rule that names one of these users or groups, and
 * those these users approved (their permissions, through their groups, may have moved).
 */
async function refreshGovernedByPeople(ctx: Ctx, userIds: number[], groupIds: number[]): Promise<void> {
  await refreshRequests(ctx, [
    ...(await openRequestsGovernedByPeople(ctx, userIds, groupIds)),
    ...(await openRequestsApprovedBy(ctx, userIds)),
  ]);
}

async function refreshRequests(ctx: Ctx, ids: readonly number[]): Promise<void> {
  for (const id of new Set(ids)) await requestRefresh(ctx, id, { rematch: false });
}
