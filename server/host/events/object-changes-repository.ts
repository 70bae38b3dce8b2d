import type { Insertable } from 'kysely';
import type { Ctx } from '../core/context';
import type { Condition } from '../db/list';
import { valuesTable } from '../db/portable';
import type { HostTables, ObjectChangesTable, Row } from '../db/tables';

/** The whole changelog (the list's query). */
export function objectChangeRows(ctx: Ctx) {
  return ctx.db.selectFrom('object_changes').selectAll();
}

export function objectChangeById(ctx: Ctx, id: number): Promise<Row<ObjectChangesTable> | undefined> {
  return ctx.db.selectFrom('object_changes').selectAll().where('id', '=', id).executeTakeFirst();
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

/** Writes one entry of the changelog. */
export async function insertObjectChange(ctx: Ctx, values: Insertable<ObjectChangesTable>): Promise<void> {
  await ctx.db.insertInto('object_changes').values(values).execute();
}
