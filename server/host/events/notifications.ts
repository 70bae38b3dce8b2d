import type { Ctx } from '../core/context';
import { activeUsers } from '../users/users-repository';
import { insertNotifications } from './notifications-repository';

export interface NotificationInput {
  objectType: string;
  objectId: number;
  objectRepr: string;
  eventType: string;
}

/**
 * Leaves a notification for each of `userIds` (duplicates and unknown ids are skipped), in the
 * caller's transaction. For plugins: e.g. reviewers told of a submitted change request.
 * Returns the number of notifications written.
 */
export async function notify(ctx: Ctx, userIds: readonly number[], what: NotificationInput): Promise<number> {
  const wanted = [...new Set(userIds)];
  if (wanted.length === 0) return 0;
  const users = await activeUsers(ctx, wanted);
  if (users.length === 0) return 0;
  const now = ctx.host.clock.now().toISOString();
  await insertNotifications(
    ctx,
    users.map((u) => ({
      user_id: u.id,
      object_type: what.objectType,
      object_id: what.objectId,
      object_repr: what.objectRepr.slice(0, 200),
      event_type: what.eventType,
      read: 0,
      created: now,
    })),
  );
  return users.length;
}
