import type { Ctx } from '../core/context';

/**
 * A branch's changes in batches of at most `size`, by id (a rebuild never holds the whole branch):
 * what the kept columns and the digest are computed from.
 */
export async function* branchChangeBatches(ctx: Ctx, branchId: number, size: number) {
  let after = 0;
  for (;;) {
    const rows = await ctx.db
      .selectFrom('branch_changes')
      .select(['id', 'object_type', 'object_id', 'action', 'original', 'modified', 'conflicts', 'merge_problem'])
      .where('branch_id', '=', branchId)
      .where('id', '>', after)
      .orderBy('id')
      .limit(size)
      .execute();
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!.id;
  }
}
