import type { z } from 'zod';
import { branch as branchOutput, branchCreate, branchUpdate, BRANCH_STATUSES } from '../../../contract/api/branching';
import { type Host, branchRows, defineList, BRANCHES_PATH, BRANCH_TYPE, presentBranch } from '../../host';
import { registerResource } from '../../host/http';
import { branchResource, createBranch, deleteBranch, updateBranch } from './branches';

const branchList = defineList({
  from: branchRows,
  columnFilters: {
    name: 'string',
    status: { type: 'choice', choices: BRANCH_STATUSES },
    owner: { type: 'int', allowMe: true, description: 'Owner user id, or "me".' },
  },
  ordering: { id: 'id', name: 'name', status: 'status', created: 'created', last_updated: 'last_updated' },
  search: ['name', 'description'],
  present: async (ctx, rows) => rows.map((r) => presentBranch(ctx, r)),
});

export function registerBranches(host: Host): void {
  registerResource(host.routes, {
    tag: 'branching',
    objectType: BRANCH_TYPE,
    path: BRANCHES_PATH,
    output: branchOutput,
    list: branchList,
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
