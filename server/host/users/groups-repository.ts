import type { Ctx } from '../core/context';
import { tableRows } from '../db/table-rows';

/** Every group (the list's query). */
export function groupRows(ctx: Ctx) {
  return ctx.db.selectFrom('groups').selectAll();
}

/** Groups by id: read, name taken, insert, update, delete. */
export const groupTable = tableRows((ctx: Ctx) => ctx.db, 'groups');

/** These groups' names (unknown ids are left out). */
export function groupNamesByIds(ctx: Ctx, ids: readonly number[]): Promise<Array<{ id: number; name: string }>> {
  return ctx.db
    .selectFrom('groups')
    .select(['id', 'name'])
    .where('id', 'in', [...ids])
    .execute();
}
