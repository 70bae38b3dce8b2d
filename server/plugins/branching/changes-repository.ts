import type { Ctx } from '../../host';

/** One branch change's stored row by id. */
export function branchChangeRow(ctx: Ctx, id: number) {
  return ctx.db.selectFrom('branch_changes').selectAll().where('id', '=', id).executeTakeFirst();
}
