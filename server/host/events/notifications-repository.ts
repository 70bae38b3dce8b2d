import type { Ctx } from '../core/context';
import type { Insertable } from 'kysely';
import type { HostTables, NotificationsTable, Row } from '../db/tables';
import type { Condition } from '../db/list';
import type { VisibleIds } from '../db/visible-ids';

/** This user's notifications (the list's query). */
export function notificationRowsOf(ctx: Ctx, userId: number) {
  return ctx.db.selectFrom('notifications').selectAll().where('user_id', '=', userId);
}

/** Notifications of `owner`'s objects only for objects among `visible` (notifications of other types pass). */
export function notificationsOfVisible(owner: string, visible: VisibleIds): Condition<HostTables, 'notifications'> {
  return (eb) => eb.or([eb('object_type', '<>', owner), eb('object_id', 'in', visible)]);
}

/** This user's notification `id`, or undefined when it is not theirs or does not exist. */
export function notificationOf(ctx: Ctx, userId: number, id: number): Promise<Row<NotificationsTable> | undefined> {
  return ctx.db
    .selectFrom('notifications')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function markNotificationRead(ctx: Ctx, id: number, read: boolean): Promise<void> {
  await ctx.db
    .updateTable('notifications')
    .set({ read: read ? 1 : 0 })
    .where('id', '=', id)
    .execute();
}

export async function deleteNotification(ctx: Ctx, id: number): Promise<void> {
  await ctx.db.deleteFrom('notifications').where('id', '=', id).execute();
}

export async function insertNotifications(
  ctx: Ctx,
  rows: ReadonlyArray<Insertable<NotificationsTable>>,
): Promise<void> {
  if (rows.length > 0)
    await ctx.db
      .insertInto('notifications')
      .values([...rows])
      .execute();
}
