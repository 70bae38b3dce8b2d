import { tableRows, type BranchRow, type Ctx } from '../../host';

/** Branches by id: read, name or schema id taken, insert, update, delete. */
export const branchTable = tableRows((ctx: Ctx) => ctx.db, 'branches');

/** Writes these fields onto a branch, with the time of the write. */
export async function updateBranchRow(
  ctx: Ctx,
  id: number,
  fields: Partial<Omit<BranchRow, 'id' | 'created'>>,
): Promise<void> {
  await branchTable.update(ctx, id, { ...fields, last_updated: ctx.host.clock.now().toISOString() });
}
