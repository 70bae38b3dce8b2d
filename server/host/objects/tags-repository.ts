import type { Insertable, Updateable } from 'kysely';
import type { Ctx } from '../core/context';
import type { TagRow, TagsTable } from '../db/tables';

/** Every tag (the list's query). */
export function tagRows(ctx: Ctx) {
  return ctx.db.selectFrom('tags').selectAll();
}

export function tagById(ctx: Ctx, id: number): Promise<TagRow | undefined> {
  return ctx.db.selectFrom('tags').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Whether another tag than `exceptId` holds this name (or slug). */
export async function tagFieldTaken(ctx: Ctx, field: 'name' | 'slug', value: string, exceptId: number | null): Promise<boolean> {
  let q = ctx.db.selectFrom('tags').select('id').where(field, '=', value);
  if (exceptId !== null) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

export async function insertTag(ctx: Ctx, values: Insertable<TagsTable>): Promise<number> {
  const row = await ctx.db.insertInto('tags').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateTag(ctx: Ctx, id: number, values: Updateable<TagsTable>): Promise<void> {
  await ctx.db.updateTable('tags').set(values).where('id', '=', id).execute();
}

/** Deletes a tag and its assignments (ON DELETE CASCADE, and explicitly for databases without it). */
export async function deleteTag(ctx: Ctx, id: number): Promise<void> {
  await ctx.db.deleteFrom('tagged_items').where('tag_id', '=', id).execute();
  await ctx.db.deleteFrom('tags').where('id', '=', id).execute();
}
