import type { Insertable } from 'kysely';
import type { Ctx } from '../core/context';
import type { Condition } from '../db/list';
import { valuesTable } from '../db/portable';
import type { HostTables, ObjectChangesTable } from '../db/tables';
import type { VisibleIds } from '../db/visible-ids';

/** The whole changelog (the list's query). */
export function objectChangeRows(ctx: Ctx) {
  return ctx.db.selectFrom('object_changes').selectAll();
}

/**
 * The changes recorded on main or in one of `branchIds` (every branch: 'all'), of an object
 * type other than `hiddenTypes`.
 */
export function changesIn(
  ctx: Ctx,
  branchIds: ReadonlySet<number> | 'all',
  hiddenTypes: readonly string[],
): Condition<HostTables, 'object_changes'> {
  return (eb) =>
    eb.and([
      ...(branchIds === 'all'
        ? []
        : [
            eb.or([
              eb('branch_id', 'is', null),
              eb('branch_id', 'in', eb.selectFrom(valuesTable(ctx.db, [...branchIds]).as('j')).select('j.value')),
            ]),
          ]),
      ...(hiddenTypes.length > 0 ? [eb('changed_object_type', 'not in', hiddenTypes)] : []),
    ]);
}

/** The entries of `objectType` only for objects of these ids (entries of other types pass). */
export function onlyObjectsIn(
  ctx: Ctx,
  objectType: string,
  ids: ReadonlySet<number>,
): Condition<HostTables, 'object_changes'> {
  return (eb) =>
    eb.or([
      eb('changed_object_type', '<>', objectType),
      eb('changed_object_id', 'in', eb.selectFrom(valuesTable(ctx.db, [...ids]).as('j')).select('j.value')),
    ]);
}

/**
 * The entries of `owner`'s objects and of the `members` belonging to them only where the owner
 * object is one of `visible` (entries of other types pass): an owner's entry by its own id, a
 * member's by its `related_object`.
 */
export function onlyOfVisibleOwners(
  owner: string,
  members: readonly string[],
  visible: VisibleIds,
): Condition<HostTables, 'object_changes'> {
  return (eb) =>
    eb.or([
      eb('changed_object_type', 'not in', [owner, ...members]),
      eb.and([eb('changed_object_type', '=', owner), eb('changed_object_id', 'in', visible)]),
      ...(members.length === 0
        ? []
        : [
            eb.and([
              eb('changed_object_type', 'in', [...members]),
              eb('related_object_type', '=', owner),
              eb('related_object_id', 'in', visible),
            ]),
          ]),
    ]);
}

/** Writes one entry of the changelog. */
export async function insertObjectChange(ctx: Ctx, values: Insertable<ObjectChangesTable>): Promise<void> {
  await ctx.db.insertInto('object_changes').values(values).execute();
}
