import type { Ctx } from '../core/context';
import { compiledSelect } from '../db/compiled-select';
import type { Queryable } from '../db/database';

/** Moves a branch's changes revision by `by` (one per change row written); the new revision (undefined: no such branch). */
export async function moveChangesRevision(ctx: Ctx, branchId: number, by = 1): Promise<number | undefined> {
  const row = await ctx.db
    .updateTable('branches')
    .set((eb) => ({ changes_revision: eb('changes_revision', '+', by) }))
    .where('id', '=', branchId)
    .returning('changes_revision')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.changes_revision);
}

/** A branch's changes revision (undefined: no such branch). */
const changesRevisionOf = compiledSelect((db: Queryable, branchId: number) =>
  db.selectFrom('branches').select('changes_revision').where('id', '=', branchId),
);

export async function changesRevision(ctx: Ctx, branchId: number): Promise<number | undefined> {
  const [row] = await changesRevisionOf(ctx.db, branchId);
  return row === undefined ? undefined : Number(row.changes_revision);
}

/** The revision each keeper's state of this branch reflects, by keeper name. */
export async function keeperRevisions(ctx: Ctx, branchId: number): Promise<Map<string, number>> {
  const rows = await ctx.db
    .selectFrom('branch_state_revisions')
    .select(['keeper', 'revision'])
    .where('branch_id', '=', branchId)
    .execute();
  return new Map(rows.map((r) => [r.keeper, Number(r.revision)]));
}

/** The revision one keeper's state of this branch reflects (undefined: none recorded). */
const keeperRevisionOf = compiledSelect((db: Queryable, branchId: number, keeper: string) =>
  db
    .selectFrom('branch_state_revisions')
    .select('revision')
    .where('branch_id', '=', branchId)
    .where('keeper', '=', keeper),
);

export async function keeperRevision(ctx: Ctx, branchId: number, keeper: string): Promise<number | undefined> {
  const [row] = await keeperRevisionOf(ctx.db, branchId, keeper);
  return row === undefined ? undefined : Number(row.revision);
}

/** Moves these keepers from revision `from` to `to` (a keeper recorded at another revision stays). */
export async function advanceKeepers(
  ctx: Ctx,
  branchId: number,
  keepers: string[],
  from: number,
  to: number,
): Promise<void> {
  if (keepers.length === 0) return;
  await ctx.db
    .updateTable('branch_state_revisions')
    .set({ revision: to })
    .where('branch_id', '=', branchId)
    .where('keeper', 'in', keepers)
    .where('revision', '=', from)
    .execute();
}

/** Records the revision a keeper's state of this branch reflects. */
export async function recordKeeperRevision(
  ctx: Ctx,
  branchId: number,
  keeper: string,
  revision: number,
): Promise<void> {
  await ctx.db
    .insertInto('branch_state_revisions')
    .values({ branch_id: branchId, keeper, revision })
    .onConflict((oc) => oc.columns(['branch_id', 'keeper']).doUpdateSet({ revision }))
    .execute();
}

/** Forgets what every keeper's (or one keeper's) state of this branch reflects. */
export async function forgetKeeperRevisions(ctx: Ctx, branchId: number, keeper?: string): Promise<void> {
  let q = ctx.db.deleteFrom('branch_state_revisions').where('branch_id', '=', branchId);
  if (keeper !== undefined) q = q.where('keeper', '=', keeper);
  await q.execute();
}
