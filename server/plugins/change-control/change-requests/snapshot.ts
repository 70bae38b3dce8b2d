import type { AcknowledgedConflicts, Ctx } from '../../../host';
import { parseJson, toBool } from '../db/database';
import type { ChangeRequestRow } from '../db/tables';
import { MODELS } from '../names';

/**
 * The fields a change request shows as they are stored, under their API names: written once
 * here for the snapshot below and the presenter (`present.ts`), which add their own.
 */
export function storedFields(ctx: Ctx, row: ChangeRequestRow) {
  return {
    id: row.id,
    url: changeRequestUrl(ctx, row.id),
    display: displayOfChangeRequest(row),
    title: row.title,
    description: row.description,
    ref: row.ref,
    status: row.status,
    priority: row.priority,
    branch: row.branch_id,
    branch_name: row.branch_name,
    branch_deleted: toBool(row.branch_deleted),
    gates_cleared: toBool(row.gates_cleared),
    scheduled_start: row.scheduled_start,
    scheduled_end: row.scheduled_end,
    auto_merge: toBool(row.auto_merge),
    comments: row.comments,
    custom_fields: parseJson<Record<string, unknown>>(row.custom_fields, {}),
    merge_acknowledged_conflicts: parseJson<AcknowledgedConflicts | null>(row.merge_acknowledged_conflicts, null),
    created: row.created,
    last_updated: row.last_updated,
  };
}

/**
 * A change request's stored fields under their API names (no live values): what the changelog
 * keeps and what permission constraints are checked against.
 */
export function snapshotChangeRequest(
  ctx: Ctx,
  row: ChangeRequestRow,
): Record<string, unknown> & { id: number; display: string } {
  // Added onto the stored fields' object, not spread (see `build` in present.ts).
  return Object.assign(storedFields(ctx, row), {
    requester: row.requester_id,
    has_conflicts: toBool(row.has_conflicts),
    override_reason: row.override_reason,
    override_by: row.override_by_id,
    override_time: row.override_time,
    overridden_reason: row.overridden_reason,
  });
}

export function changeRequestUrl(ctx: Ctx, id: number): string {
  return `${ctx.baseUrl}${MODELS.changeRequest.path}${id}/`;
}

/** "CHG-42: Title" when a ref is set, else the title. */
export function displayOfChangeRequest(row: Pick<ChangeRequestRow, 'ref' | 'title'>): string {
  return row.ref ? `${row.ref}: ${row.title}` : row.title;
}
