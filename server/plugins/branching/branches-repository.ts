import type { BranchRow, Ctx } from '../../host';

/** Writes these fields onto a branch, with the time of the write. */
export async function updateBranchRow(ctx: Ctx, id: number, fields: Partial<Omit<BranchRow, 'id' | 'created'>>): Promise<void> {
  await ctx.db
    .updateTable('branches')
    .set({ ...fields, last_updated: ctx.host.clock.now().toISOString() })
    .where('id', '=', id)
    .execute();
}

/** Whether a branch (other than `exceptId`) has this name. */
export async function branchNameTaken(ctx: Ctx, name: string, exceptId?: number): Promise<boolean> {
  let q = ctx.db.selectFrom('branches').select('id').where('name', '=', name);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Whether a branch has this schema id. */
export async function schemaIdTaken(ctx: Ctx, schemaId: string): Promise<boolean> {
  return (await ctx.db.selectFrom('branches').select('id').where('schema_id', '=', schemaId).executeTakeFirst()) !== undefined;
}

/** Stores a new branch; answers its id. */
export async function insertBranch(ctx: Ctx, values: Omit<BranchRow, 'id' | 'changes_revision'>): Promise<number> {
  const row = await ctx.db.insertInto('branches').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Removes a branch's row (its changes are removed first). */
export async function deleteBranchRow(ctx: Ctx, id: number): Promise<void> {
  await ctx.db.deleteFrom('branches').where('id', '=', id).execute();
}
