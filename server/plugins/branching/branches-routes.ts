import type { z } from 'zod';
import { branch as branchOutput, branchCreate, branchUpdate, BRANCH_STATUSES } from '../../../contract/api/branching';
import { type Ctx, type Host, BRANCHES_PATH, BRANCH_TYPE, presentBranch, type BranchOut } from '../../host';
import { registerResource, type ListOptions } from '../../host/http';
import { branchResource, createBranch, deleteBranch, updateBranch } from './branches';

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

export function registerBranches(host: Host): void {
  registerResource(host.routes, {
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
