import type { Ctx } from '../core/context';
import { tableRows } from '../db/table-rows';
import { compiledSelect } from '../db/compiled-select';
import type { Queryable } from '../db/database';

/** Every tag (the list's query). */
export function tagRows(ctx: Ctx) {
  return ctx.db.selectFrom('tags').selectAll();
}

/** Tags by id: read, name or slug taken, insert, update (deleting also clears assignments: `deleteTag`). */
export const tagTable = tableRows((ctx: Ctx) => ctx.db, 'tags');

/** Deletes a tag and its assignments (ON DELETE CASCADE, and explicitly for databases without it). */
export async function deleteTag(ctx: Ctx, id: number): Promise<void> {
  await ctx.db.deleteFrom('tagged_items').where('tag_id', '=', id).execute();
  await tagTable.remove(ctx, id);
}

/** The tags assigned to objects of one type, with the object each is assigned to (the rest of the select adds which objects and the order). */
function assignmentsOfType(db: Queryable<any>, objectType: string) {
  return db
    .selectFrom('tagged_items as ti')
    .innerJoin('tags as t', 't.id', 'ti.tag_id')
    .select(['ti.object_id', 't.id', 't.name', 't.slug', 't.color'])
    .where('ti.object_type', '=', objectType);
}

/** `tagAssignments` of one object, built and compiled once (presenting one object asks it: a detail, a write's answer). */
const tagAssignmentsOfOne = compiledSelect((db: Queryable<any>, objectType: string, objectId: number) =>
  assignmentsOfType(db, objectType).where('ti.object_id', '=', objectId).orderBy('t.name'),
);

/** The tags assigned to these objects of one type, by tag name. */
export async function tagAssignments(
  ctx: Ctx,
  objectType: string,
  objectIds: readonly number[],
): Promise<Array<{ object_id: number; id: number; name: string; slug: string; color: string }>> {
  const distinct = [...new Set(objectIds)];
  if (distinct.length === 1) return tagAssignmentsOfOne(ctx.db, objectType, distinct[0]!);
  return assignmentsOfType(ctx.db, objectType).where('ti.object_id', 'in', distinct).orderBy('t.name').execute();
}

/** The tags with any of these ids, names or slugs. */
export function tagsNamed(ctx: Ctx, ids: ReadonlySet<number>, names: ReadonlySet<string>, slugs: ReadonlySet<string>) {
  return ctx.db
    .selectFrom('tags')
    .select(['id', 'name', 'slug'])
    .where((eb) =>
      eb.or([
        eb('id', 'in', ids.size > 0 ? [...ids] : [-1]),
        eb('name', 'in', names.size > 0 ? [...names] : ['']),
        eb('slug', 'in', slugs.size > 0 ? [...slugs] : ['']),
      ]),
    )
    .execute();
}

/** Makes `tagIds` the object's tags. */
export async function replaceTagAssignments(
  ctx: Ctx,
  objectType: string,
  objectId: number,
  tagIds: readonly number[],
): Promise<void> {
  await clearTagAssignments(ctx, objectType, objectId);
  if (tagIds.length > 0)
    await ctx.db
      .insertInto('tagged_items')
      .values(tagIds.map((tag_id) => ({ tag_id, object_type: objectType, object_id: objectId })))
      .execute();
}

export async function clearTagAssignments(ctx: Ctx, objectType: string, objectId: number): Promise<void> {
  await ctx.db
    .deleteFrom('tagged_items')
    .where('object_type', '=', objectType)
    .where('object_id', '=', objectId)
    .execute();
}
