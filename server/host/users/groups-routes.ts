import { z } from 'zod';
import type { Ctx } from '../core/context';
import type { Host } from '../host';
import { registerResource, type ApiObject } from '../http/resource';
import { defineList } from '../db/list';
import type { GroupsTable, Row } from '../db/tables';
import { dropFromPermissions } from './references';

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
    id: row.id,
    url: `${ctx.baseUrl}/api/users/groups/${row.id}/`,
    display: row.name,
    name: row.name,
    description: row.description,
    created: row.created,
    last_updated: row.last_updated,
  };
}

/** The groups list: filters, `q` over name and description, ordering. */
const groupList = defineList({
  name: 'groups',
  from: (ctx: Ctx) => ctx.db.selectFrom('groups').selectAll(),
  filters: {
    id: { type: 'int', column: 'id' },
    name: { type: 'string', column: 'name' },
  },
  ordering: { id: 'id', name: 'name', created: 'created' },
  search: ['name', 'description'],
  present: async (ctx, rows) => rows.map((r) => present(ctx, r)),
});

export function registerGroups(host: Host): void {
  registerResource(host.routes, {
    tag: 'users',
    objectType: 'users.group',
    path: '/api/users/groups/',
    output: groupOutput,
    list: groupList,
    get: async (ctx, id) => {
      const row = await ctx.db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? present(ctx, row) : undefined;
    },
    create: {
      body: groupWrite,
      run: async (ctx, input: z.infer<typeof groupWrite>) => {
        const now = ctx.host.clock.now().toISOString();
        const row = await ctx.db
          .insertInto('groups')
          .values({ name: input.name, description: input.description ?? '', created: now, last_updated: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        return row.id;
      },
    },
    update: {
      body: groupWrite.partial(),
      put: groupWrite,
      run: async (ctx, existing, input: Partial<z.infer<typeof groupWrite>>) => {
        await ctx.db
          .updateTable('groups')
          .set({ ...input, last_updated: ctx.host.clock.now().toISOString() })
          .where('id', '=', existing.id)
          .execute();
      },
    },
    remove: async (ctx, existing) => {
      await ctx.db.deleteFrom('groups').where('id', '=', existing.id).execute();
      await dropFromPermissions(ctx, 'groups', existing.id);
    },
  });
}
