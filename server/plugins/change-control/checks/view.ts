import type { Ctx } from '../../../host';
import { branchChangesView, isBranchStale } from '../../branching';
import { ccDb, toBool } from '../db/database';
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

/** The read-only view of a change request that check functions receive. */
export async function buildCheckView(ctx: Ctx, cr: ChangeRequestRow): Promise<CheckView> {
  const branch = await branchOf(ctx, cr);
  const live = branch !== null && branch.status === 'ready';
  const changes = branch ? await branchChangesView(ctx, branch.id) : [];
  const reviews = await ccDb(ctx)
    .selectFrom('cc_reviews')
    .select(['id', 'reviewer_id', 'decision', 'stale'])
    .where('change_request_id', '=', cr.id)
    .orderBy('id')
    .execute();
  const threads = await ccDb(ctx)
    .selectFrom('cc_change_comments')
    .select(['id', 'change_diff_id', 'resolved'])
    .where('change_request_id', '=', cr.id)
    .where('parent_id', 'is', null)
    .orderBy('id')
    .execute();
  return deepFreeze({
    id: cr.id,
    title: cr.title,
    ref: cr.ref,
    status: cr.status,
    priority: cr.priority,
    requester: cr.requester_id,
    scheduled_start: cr.scheduled_start,
    scheduled_end: cr.scheduled_end,
    branch: branch
      ? { id: branch.id, name: branch.name, status: branch.status, schema_id: branch.schema_id, last_sync: branch.last_sync, created: branch.created, stale: isBranchStale(ctx, branch) }
      : null,
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
