import type { Insertable, Updateable } from 'kysely';
import type { Ctx } from '../core/context';
import type { GroupsTable, Row } from '../db/tables';

/** Every group (the list's query). */
export function groupRows(ctx: Ctx) {
  return ctx.db.selectFrom('groups').selectAll();
}

export function groupById(ctx: Ctx, id: number): Promise<Row<GroupsTable> | undefined> {
  return ctx.db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertGroup(ctx: Ctx, values: Insertable<GroupsTable>): Promise<number> {
  const row = await ctx.db.insertInto('groups').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateGroup(ctx: Ctx, id: number, values: Updateable<GroupsTable>): Promise<void> {
  await ctx.db.updateTable('groups').set(values).where('id', '=', id).execute();
}

export async function deleteGroup(ctx: Ctx, id: number): Promise<void> {
  await ctx.db.deleteFrom('groups').where('id', '=', id).execute();
}

/** These groups' names (unknown ids are left out). */
export function groupNamesByIds(ctx: Ctx, ids: readonly number[]): Promise<Array<{ id: number; name: string }>> {
  return ctx.db.selectFrom('groups').select(['id', 'name']).where('id', 'in', [...ids]).execute();
}
