import { z } from 'zod';
import { briefFields } from '../../../contract/api/common';
import type { Ctx } from '../core/context';
import type { Host } from '../host';
import { registerResource, type ApiObject } from '../http/resource';
import { rowReads } from '../http/row-reads';
import { rowWrites } from '../http/row-writes';
import type { GroupsTable, Row } from '../db/tables';
import { dropFromPermissions } from './references';
import { groupRows, groupTable } from './groups-repository';
import { briefObject, fieldsOf } from '../core/api-object';

export const groupOutput = z.object({
  ...briefFields,
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
  from: groupRows,
  byId: groupTable.byId,
  present,
  columnFilters: { name: 'string' },
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
    ...rowWrites({
      table: groupTable,
      body: groupWrite,
      partial: groupWrite.partial(),
      insert: (input: z.infer<typeof groupWrite>, now) => ({
        name: input.name,
        description: input.description ?? '',
        created: now,
        last_updated: now,
      }),
      columns: (input, now) => ({ ...input, last_updated: now }),
    }),
    remove: async (ctx, existing) => {
      await groupTable.remove(ctx, existing.id);
      await dropFromPermissions(ctx, 'groups', existing.id);
    },
  });
}
