import type { z } from 'zod';
import type { branchCreate, branchUpdate } from '../../../contract/api/branching';
import {
  type Ctx,
  ValidationError,
  type BranchRow,
  BRANCH_TYPE,
  findBranch,
  loadBranch,
  presentBranch,
  removeBranchChanges,
  type BranchOut,
} from '../../host';
export { BRANCH_TYPE, BRANCHES_PATH, findBranch, loadBranch, presentBranch, type BranchOut } from '../../host';
import { randomSchemaId } from './schema-id';
import { branchTable, updateBranchRow } from './branches-repository';

export async function setBranchFields(
  ctx: Ctx,
  id: number,
  fields: Partial<Omit<BranchRow, 'id' | 'created'>>,
): Promise<BranchRow> {
  await updateBranchRow(ctx, id, fields);
  return loadBranch(ctx, id);
}

async function requireUniqueName(ctx: Ctx, name: string, exceptId?: number): Promise<void> {
  if (await branchTable.taken(ctx, 'name', name, exceptId))
    throw ValidationError.field('name', 'A branch with this name already exists.');
}

async function uniqueSchemaId(ctx: Ctx): Promise<string> {
  for (;;) {
    const id = randomSchemaId();
    if (!(await branchTable.taken(ctx, 'schema_id', id))) return id;
  }
}

export async function createBranch(ctx: Ctx, input: z.infer<typeof branchCreate>): Promise<number> {
  await requireUniqueName(ctx, input.name);
  const now = ctx.host.clock.now().toISOString();
  return branchTable.insert(ctx, {
    name: input.name,
    description: input.description ?? '',
    status: 'ready',
    schema_id: await uniqueSchemaId(ctx),
    owner: ctx.user?.id ?? null,
    last_sync: null,
    merged_time: null,
    merged_by: null,
    created: now,
    last_updated: now,
  });
}

/** Updates name and description; a new name runs the `renamed` hooks. */
export async function updateBranch(ctx: Ctx, id: number, input: z.infer<typeof branchUpdate>): Promise<void> {
  const before = await loadBranch(ctx, id);
  if (input.name !== undefined) await requireUniqueName(ctx, input.name, id);
  const after = await setBranchFields(ctx, id, {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
  });
  if (after.name !== before.name)
    await ctx.host.branchHooks.run('renamed', ctx, { branch: after, oldName: before.name });
}

/** Runs the `deleting` hooks, then removes the branch and its changes. */
export async function deleteBranch(ctx: Ctx, id: number): Promise<void> {
  const branch = await loadBranch(ctx, id);
  await ctx.host.branchHooks.run('deleting', ctx, { branch });
  await removeBranchChanges(ctx, id);
  await branchTable.remove(ctx, id);
}

/** The branch as an API resource, for `getViewable` and permission checks. */
export const branchResource = {
  objectType: BRANCH_TYPE,
  get: async (ctx: Ctx, id: number): Promise<BranchOut | undefined> => {
    const row = await findBranch(ctx, id);
    return row ? presentBranch(ctx, row) : undefined;
  },
};
