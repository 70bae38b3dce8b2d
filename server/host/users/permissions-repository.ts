import type { Insertable, Updateable } from 'kysely';
import type { Ctx } from '../core/context';
import type { PermissionsTable, Row } from '../db/tables';

/** Every permission (the list's query). */
export function permissionRows(ctx: Ctx) {
  return ctx.db.selectFrom('permissions').selectAll();
}

export function permissionById(ctx: Ctx, id: number): Promise<Row<PermissionsTable> | undefined> {
  return ctx.db.selectFrom('permissions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Whether another permission than `exceptId` holds this name. */
export async function permissionNameTaken(ctx: Ctx, name: string, exceptId: number | null): Promise<boolean> {
  let q = ctx.db.selectFrom('permissions').select('id').where('name', '=', name);
  if (exceptId !== null) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

export async function insertPermission(ctx: Ctx, values: Insertable<PermissionsTable>): Promise<number> {
  const row = await ctx.db.insertInto('permissions').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updatePermission(ctx: Ctx, id: number, values: Updateable<PermissionsTable>): Promise<void> {
  await ctx.db.updateTable('permissions').set(values).where('id', '=', id).execute();
}

export async function deletePermission(ctx: Ctx, id: number): Promise<void> {
  await ctx.db.deleteFrom('permissions').where('id', '=', id).execute();
}

/** Every permission's `users` (or `groups`) list, as stored (JSON). */
export function permissionMemberLists(ctx: Ctx, column: 'users' | 'groups'): Promise<Array<{ id: number; ids: string }>> {
  return ctx.db.selectFrom('permissions').select(['id', `${column} as ids`]).execute();
}

export async function setPermissionMembers(ctx: Ctx, id: number, column: 'users' | 'groups', ids: readonly number[]): Promise<void> {
  await ctx.db.updateTable('permissions').set({ [column]: JSON.stringify(ids) }).where('id', '=', id).execute();
}
