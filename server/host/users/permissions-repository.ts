import type { Ctx } from '../core/context';
import { tableRows } from '../db/table-rows';

/** Every permission (the list's query). */
export function permissionRows(ctx: Ctx) {
  return ctx.db.selectFrom('permissions').selectAll();
}

/** Permissions by id: read, name taken, insert, update, delete. */
export const permissionTable = tableRows((ctx: Ctx) => ctx.db, 'permissions');

/** Every permission's `users` (or `groups`) list, as stored (JSON). */
export function permissionMemberLists(
  ctx: Ctx,
  column: 'users' | 'groups',
): Promise<Array<{ id: number; ids: string }>> {
  return ctx.db
    .selectFrom('permissions')
    .select(['id', `${column} as ids`])
    .execute();
}

export async function setPermissionMembers(
  ctx: Ctx,
  id: number,
  column: 'users' | 'groups',
  ids: readonly number[],
): Promise<void> {
  await ctx.db
    .updateTable('permissions')
    .set({ [column]: JSON.stringify(ids) })
    .where('id', '=', id)
    .execute();
}
