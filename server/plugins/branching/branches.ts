import type { z } from 'zod';
import { branch as branchOutput, branchCreate, branchUpdate, BRANCH_STATUSES, type Branch } from '../../../contract/api/branching';
import type { Ctx } from '../../host/core/context';
import { NotFound, ValidationError } from '../../host/core/errors';
import type { Host } from '../../host/host';
import type { BranchRow } from '../../host/db/tables';
import { registerResource, type ApiObject, type ListOptions } from '../../host/http/resource';
import { randomSchemaId } from './schema-id';
import { branchDataMemo } from '../../host/objects/branch-data-memo';

export const BRANCH_TYPE = 'branching.branch';
export const BRANCHES_PATH = '/api/plugins/branching/branches/';

export type BranchOut = Branch & ApiObject;

export function presentBranch(ctx: Ctx, row: BranchRow): BranchOut {
  return {
    id: row.id,
    url: `${ctx.baseUrl}${BRANCHES_PATH}${row.id}/`,
    display: row.name,
    name: row.name,
    description: row.description,
    status: row.status as Branch['status'],
    schema_id: row.schema_id,
    owner: row.owner,
    last_sync: row.last_sync,
    merged_time: row.merged_time,
    merged_by: row.merged_by,
    created: row.created,
    last_updated: row.last_updated,
  };
}

export async function findBranch(ctx: Ctx, id: number): Promise<BranchRow | undefined> {
  return ctx.db.selectFrom('branches').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The branch, or 404. */
export async function loadBranch(ctx: Ctx, id: number): Promise<BranchRow> {
  const row = await findBranch(ctx, id);
  if (!row) throw new NotFound();
  return row;
}

export async function setBranchFields(ctx: Ctx, id: number, fields: Partial<Omit<BranchRow, 'id' | 'created'>>): Promise<BranchRow> {
  branchDataMemo.forget(ctx);
  await ctx.db
    .updateTable('branches')
    .set({ ...fields, last_updated: ctx.host.clock.now().toISOString() })
    .where('id', '=', id)
    .execute();
  return loadBranch(ctx, id);
}

async function requireUniqueName(ctx: Ctx, name: string, exceptId?: number): Promise<void> {
  let q = ctx.db.selectFrom('branches').select('id').where('name', '=', name);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  if (await q.executeTakeFirst()) throw ValidationError.field('name', 'A branch with this name already exists.');
}

async function uniqueSchemaId(ctx: Ctx): Promise<string> {
  for (;;) {
    const id = randomSchemaId();
    if (!(await ctx.db.selectFrom('branches').select('id').where('schema_id', '=', id).executeTakeFirst())) return id;
  }
}

export async function createBranch(ctx: Ctx, input: z.infer<typeof branchCreate>): Promise<number> {
  await requireUniqueName(ctx, input.name);
  const now = ctx.host.clock.now().toISOString();
  const row = await ctx.db
    .insertInto('branches')
    .values({
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
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Updates name and description; a new name runs the `renamed` hooks. */
export async function updateBranch(ctx: Ctx, id: number, input: z.infer<typeof branchUpdate>): Promise<void> {
  const before = await loadBranch(ctx, id);
  if (input.name !== undefined) await requireUniqueName(ctx, input.name, id);
  const after = await setBranchFields(ctx, id, {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
  });
  if (after.name !== before.name) await ctx.host.branchHooks.run('renamed', ctx, { branch: after, oldName: before.name });
}

/** Runs the `deleting` hooks, then removes the branch and its changes. */
export async function deleteBranch(ctx: Ctx, id: number): Promise<void> {
  branchDataMemo.forget(ctx);
  const branch = await loadBranch(ctx, id);
  await ctx.host.branchHooks.run('deleting', ctx, { branch });
  await ctx.db.deleteFrom('branch_changes').where('branch_id', '=', id).execute();
  await ctx.db.deleteFrom('branches').where('id', '=', id).execute();
}

const ORDER_COLUMNS = { id: 'id', name: 'name', status: 'status', created: 'created', last_updated: 'last_updated' } as const;

async function listBranches(ctx: Ctx, { filters, ordering, page }: ListOptions): Promise<{ count: number; items: BranchOut[] }> {
  let q = ctx.db.selectFrom('branches');
  if (filters.id) q = q.where('id', 'in', filters.id as number[]);
  if (filters.name) q = q.where('name', 'in', filters.name as string[]);
  if (filters.status) q = q.where('status', 'in', filters.status as string[]);
  if (filters.owner) q = q.where('owner', 'in', filters.owner as number[]);
  const { count } = await q.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  let rows = q.selectAll();
  for (const o of ordering) rows = rows.orderBy(ORDER_COLUMNS[o.field as keyof typeof ORDER_COLUMNS], o.desc ? 'desc' : 'asc');
  if (page) rows = rows.limit(page.limit).offset(page.offset);
  return { count: Number(count), items: (await rows.execute()).map((r) => presentBranch(ctx, r)) };
}

/** The branch as an API resource, for `getViewable` and permission checks. */
export const branchResource = {
  objectType: BRANCH_TYPE,
  get: async (ctx: Ctx, id: number): Promise<BranchOut | undefined> => {
    const row = await findBranch(ctx, id);
    return row ? presentBranch(ctx, row) : undefined;
  },
};

export function registerBranches(host: Host): void {
  registerResource<BranchOut>(host.routes, {
    tag: 'branching',
    objectType: BRANCH_TYPE,
    path: BRANCHES_PATH,
    output: branchOutput,
    filters: {
      id: { type: 'int' },
      name: { type: 'string' },
      status: { type: 'choice', choices: BRANCH_STATUSES },
      owner: { type: 'int', allowMe: true, description: 'Owner user id, or "me".' },
    },
    ordering: Object.keys(ORDER_COLUMNS),
    list: listBranches,
    get: branchResource.get,
    create: { body: branchCreate, run: createBranch },
    update: {
      body: branchUpdate,
      put: branchCreate,
      run: async (ctx, existing, input: z.infer<typeof branchUpdate>) => updateBranch(ctx, existing.id, input),
    },
    remove: async (ctx, existing) => deleteBranch(ctx, existing.id),
  });
}
