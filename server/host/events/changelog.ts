import type { Ctx } from '../core/context';
import { insertObjectChange } from './object-changes-repository';

export type ChangeActionName = 'create' | 'update' | 'delete';

export interface ChangeRecord {
  action: ChangeActionName;
  objectType: string;
  objectId: number;
  repr: string;
  prechange: Record<string, unknown> | null;
  postchange: Record<string, unknown> | null;
  /** Emit `object_created`/`object_updated`/`object_deleted` (default true). */
  emit?: boolean;
}

const EVENT_OF: Record<ChangeActionName, string> = {
  create: 'object_created',
  update: 'object_updated',
  delete: 'object_deleted',
};

/**
 * Records one write in the changelog (`/api/core/object-changes/`) and emits the matching
 * object event, inside the caller's transaction. Every write of every model goes through here.
 */
export async function recordChange(ctx: Ctx, change: ChangeRecord): Promise<void> {
  const now = ctx.host.clock.now().toISOString();
  // The object this one belongs to (a review's change request): the changelog shows the entry
  // only to callers who may view it (`RelatedVisibility`).
  const related = ctx.host.relatedVisibility.relatedOf(change.objectType, change.postchange ?? change.prechange);
  await insertObjectChange(ctx, {
    time: now,
    user_id: ctx.user?.id ?? null,
    user_name: ctx.user?.username ?? '',
    request_id: ctx.requestId,
    action: change.action,
    changed_object_type: change.objectType,
    changed_object_id: change.objectId,
    object_repr: change.repr.slice(0, 200),
    prechange_data: change.prechange ? JSON.stringify(change.prechange) : null,
    postchange_data: change.postchange ? JSON.stringify(change.postchange) : null,
    branch_id: ctx.branch?.id ?? null,
    ...(related ? { related_object_type: related.objectType, related_object_id: related.objectId } : {}),
  });
  if (change.emit === false) return;
  await ctx.host.events.emit(ctx, {
    event: EVENT_OF[change.action],
    objectType: change.objectType,
    objectId: change.objectId,
    data: (change.postchange ?? change.prechange ?? {}) as Record<string, unknown>,
    prechange: change.prechange,
    postchange: change.postchange,
  });
}
