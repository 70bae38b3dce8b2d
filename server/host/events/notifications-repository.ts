import type { Ctx } from '../core/context';
import type { Insertable } from 'kysely';
import type { NotificationsTable, Row } from '../db/tables';

/** This user's notifications (the list's query). */
export function notificationRowsOf(ctx: Ctx, userId: number) {
  return ctx.db.selectFrom('notifications').selectAll().where('user_id', '=', userId);
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
