import { z } from 'zod';
import type { Ctx } from '../core/context';
import type { Host } from '../host';
import { registerResource, type ApiObject } from '../http/resource';
import { rowReads } from '../http/row-reads';
import type { GroupsTable, Row } from '../db/tables';
import { dropFromPermissions } from './references';
import { groupRows, groupTable } from './groups-repository';
import { briefObject, fieldsOf } from '../core/api-object';

export const groupOutput = z.object({
  id: z.number().int(),
  url: z.string(),
  display: z.string(),
  name: z.string(),
  description: z.string(),
  created: z.string(),
  last_updated: z.string(),
});
export type GroupOut = z.infer<typeof groupOutput> & ApiObject;

const groupWrite = z.strictObject({
  name: z.string().trim().min(1, { error: 'This field may not be blank.' }).max(150),
  description: z.string().max(200).optional(),
});

function present(ctx: Ctx, row: Row<GroupsTable>): GroupOut {
  return {
    ...briefObject(ctx, '/api/users/groups/', row.id, row.name),
    ...fieldsOf(row, ['name', 'description', 'created', 'last_updated']),
  };
}

/** One group and the groups list: filters, `q` over name and description, ordering. */
const groups = rowReads({
  name: 'groups',
  from: groupRows,
  byId: groupTable.byId,
  present,
  columnFilters: { id: 'int', name: 'string' },
  ordering: { id: 'id', name: 'name', created: 'created' },
  search: ['name', 'description'],
});

export function registerGroups(host: Host): void {
  registerResource(host.routes, {
    tag: 'users',
    objectType: 'users.group',
    path: '/api/users/groups/',
    output: groupOutput,
    list: groups.list,
    get: groups.get,
    create: {
      body: groupWrite,
      run: async (ctx, input: z.infer<typeof groupWrite>) => {
        const now = ctx.host.clock.now().toISOString();
        return groupTable.insert(ctx, { name: input.name, description: input.description ?? '', created: now, last_updated: now });
      },
    },
    update: {
      body: groupWrite.partial(),
      put: groupWrite,
      run: async (ctx, existing, input: Partial<z.infer<typeof groupWrite>>) => {
        await groupTable.update(ctx, existing.id, { ...input, last_updated: ctx.host.clock.now().toISOString() });
      },
    },
    remove: async (ctx, existing) => {
      await groupTable.remove(ctx, existing.id);
      await dropFromPermissions(ctx, 'groups', existing.id);
    },
  });
}
