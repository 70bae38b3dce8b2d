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

/** The tags assigned to these objects of one type, by tag name. */
export function tagAssignments(ctx: Ctx, objectType: string, objectIds: readonly number[]) {
  return ctx.db
    .selectFrom('tagged_items as ti')
    .innerJoin('tags as t', 't.id', 'ti.tag_id')
    .select(['ti.object_id', 't.id', 't.name', 't.slug', 't.color'])
    .where('ti.object_type', '=', objectType)
    .where('ti.object_id', 'in', [...new Set(objectIds)])
    .orderBy('t.name')
    .execute();
}

/** The tags with any of these ids, names or slugs. */
export function tagsNamed(ctx: Ctx, ids: ReadonlySet<number>, names: ReadonlySet<string>, slugs: ReadonlySet<string>) {
  return ctx.db
    .selectFrom('tags')
    .select(['id', 'name', 'slug'])
    .where((eb) => eb.or([eb('id', 'in', ids.size > 0 ? [...ids] : [-1]), eb('name', 'in', names.size > 0 ? [...names] : ['']), eb('slug', 'in', slugs.size > 0 ? [...slugs] : [''])]))
    .execute();
}

/** Makes `tagIds` the object's tags. */
export async function replaceTagAssignments(ctx: Ctx, objectType: string, objectId: number, tagIds: readonly number[]): Promise<void> {
  await clearTagAssignments(ctx, objectType, objectId);
  if (tagIds.length > 0) await ctx.db.insertInto('tagged_items').values(tagIds.map((tag_id) => ({ tag_id, object_type: objectType, object_id: objectId }))).execute();
}

export async function clearTagAssignments(ctx: Ctx, objectType: string, objectId: number): Promise<void> {
  await ctx.db.deleteFrom('tagged_items').where('object_type', '=', objectType).where('object_id', '=', objectId).execute();
}
