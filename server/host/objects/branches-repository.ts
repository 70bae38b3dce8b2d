import type { Ctx } from '../core/context';
import type { BranchRow } from '../db/tables';
import { compiledSelect } from '../db/compiled-select';
import type { Queryable } from '../db/database';

/** Every branch (the branches list's query). */
export function branchRows(ctx: Ctx) {
  return ctx.db.selectFrom('branches').selectAll();
}

const branchById = compiledSelect((db: Queryable, id: number) =>
  db.selectFrom('branches').selectAll().where('id', '=', id),
);

export async function findBranch(ctx: Ctx, id: number): Promise<BranchRow | undefined> {
  return (await branchById(ctx.db, id))[0];
}

/** Branches by id (unknown ids are left out). */
export async function findBranches(ctx: Ctx, ids: Iterable<number>): Promise<BranchRow[]> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  return ctx.db.selectFrom('branches').selectAll().where('id', 'in', wanted).execute();
}

/** The branch whose schema id (`X-NetBox-Branch`) this is. */
export function branchBySchemaId(ctx: Ctx, schemaId: string): Promise<BranchRow | undefined> {
  return ctx.db.selectFrom('branches').selectAll().where('schema_id', '=', schemaId).executeTakeFirst();
}

/** Every branch, whole rows (who may see which is judged on them). */
export function allBranches(ctx: Ctx): Promise<BranchRow[]> {
  return ctx.db.selectFrom('branches').selectAll().execute();
}
