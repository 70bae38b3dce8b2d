import { branchMergeProblems, branchProblems, type BranchRow, type Ctx } from '../../../host';
import type { BuiltinCheck } from '../../../../contract/api/change-control';
import { branchChangeCount, branchChangesView, changeReprOf, isBranchStale } from '../../branching';
import { conflictProblem, OBJECTS_KEPT, type BuiltinFacts } from './builtins';
import { reviewsForCheckView, threadCounts, threadsForCheckView } from './view-repository';
import { toBool } from '../db/database';
import type { ChangeRequestRow } from '../db/tables';
import { branchOf } from '../change-requests/repository';
import type { CheckView } from './registry';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

function viewBranch(ctx: Ctx, branch: BranchRow | null): CheckView['branch'] {
  return branch
    ? {
        id: branch.id,
        name: branch.name,
        status: branch.status,
        schema_id: branch.schema_id,
        last_sync: branch.last_sync,
        created: branch.created,
        stale: isBranchStale(ctx, branch),
      }
    : null;
}

/**
 * What the built-in checks `wanted` read, from the state kept per branch: the change count (the
 * digest's keeper), the first conflicts and merge problems (the kept columns of the changes) and
 * the thread counts. Cost grows with the problems shown, not the branch.
 */
export async function buildBuiltinFacts(
  ctx: Ctx,
  cr: ChangeRequestRow,
  wanted: ReadonlySet<BuiltinCheck>,
): Promise<BuiltinFacts> {
  const branch = await branchOf(ctx, cr);
  const ready = branch !== null && branch.status === 'ready';
  const changes =
    branch && (wanted.has('has-changes') || wanted.has('mergeable')) ? await branchChangeCount(ctx, branch.id) : 0;
  let conflicts: BuiltinFacts['conflicts'] = { count: 0, first: [] };
  if (ready && wanted.has('no-conflicts')) {
    const kept = await branchProblems(ctx, branch.id, 'conflicts', OBJECTS_KEPT);
    conflicts = {
      count: kept.count,
      first: kept.first.map((c) => ({
        object_type: c.objectType,
        object_id: c.objectId,
        object_repr: changeReprOf(ctx, c),
        problem: conflictProblem(c.action, c.conflicts ?? []),
      })),
    };
  }
  let problems: BuiltinFacts['problems'] = { count: 0, first: [] };
  if (ready && wanted.has('mergeable')) {
    const kept = await branchMergeProblems(ctx, branch.id, (t) => ctx.host.objectTypes.has(t), OBJECTS_KEPT);
    problems = {
      count: kept.count,
      first: kept.first.map((c) => ({
        object_type: c.objectType,
        object_id: c.objectId,
        object_repr: changeReprOf(ctx, c),
        problem: c.problem ?? '',
      })),
    };
  }
  let threads: BuiltinFacts['threads'] = { total: 0, open: 0 };
  if (branch && wanted.has('threads-resolved')) {
    threads = await threadCounts(ctx, cr.id);
  }
  return deepFreeze({ branch: viewBranch(ctx, branch), changes, conflicts, problems, threads });
}

/** The read-only view of a change request that check functions receive. */
export async function buildCheckView(ctx: Ctx, cr: ChangeRequestRow): Promise<CheckView> {
  const branch = await branchOf(ctx, cr);
  const live = branch !== null && branch.status === 'ready';
  const changes = branch ? await branchChangesView(ctx, branch.id) : [];
  const reviews = await reviewsForCheckView(ctx, cr.id);
  const threads = await threadsForCheckView(ctx, cr.id);
  return deepFreeze({
    id: cr.id,
    title: cr.title,
    ref: cr.ref,
    status: cr.status,
    priority: cr.priority,
    requester: cr.requester_id,
    scheduled_start: cr.scheduled_start,
    scheduled_end: cr.scheduled_end,
    branch: viewBranch(ctx, branch),
    branch_name: cr.branch_name,
    branch_deleted: toBool(cr.branch_deleted),
    changes: changes.map((c) => ({
      id: c.id,
      object_type: c.object_type,
      object_id: c.object_id,
      object_repr: c.object_repr,
      action: c.action,
      original: c.original,
      modified: c.modified,
      current: c.current,
      conflicts: live ? c.conflicts : null,
    })),
    reviews: reviews.map((r) => ({ id: r.id, reviewer: r.reviewer_id, decision: r.decision, stale: toBool(r.stale) })),
    threads: threads.map((t) => ({ id: t.id, change_diff: t.change_diff_id, resolved: toBool(t.resolved) })),
  });
}
