import { z } from 'zod';
import { notification, type Notification } from '../../../contract/api/host';
import type { Ctx } from '../core/context';
import { NotFound, PermissionDenied } from '../core/errors';
import type { Host } from '../host';
import type { NotificationsTable, Row } from '../db/tables';
import { envelope, parseFilters, parseOrdering, parsePage, type FilterDef, type ParsedFilters } from '../http/query';
import { parseId } from '../http/resource';
import { Reply, type QueryParamDoc } from '../http/routes';

const PATH = '/api/extras/notifications/';

const notificationUpdate = z.strictObject({ read: z.boolean() });

const FILTERS: Record<string, FilterDef> = {
  id: { type: 'int' },
  read: { type: 'bool' },
  event_type: { type: 'string' },
  object_type: { type: 'string', description: 'The object\'s type, "app_label.model".' },
  object_id: { type: 'int' },
};
const ORDER_COLUMNS = { id: 'id', created: 'created' } as const;

function present(ctx: Ctx, row: Row<NotificationsTable>): Notification {
  return {
    id: row.id,
    url: `${ctx.baseUrl}${PATH}${row.id}/`,
    display: `${row.event_type}: ${row.object_repr}`,
    object_type: row.object_type,
    object_id: row.object_id,
    object_repr: row.object_repr,
    event_type: row.event_type,
    created: row.created,
    read: row.read === 1,
  };
}

function callerId(ctx: Ctx): number {
  if (!ctx.user) throw new PermissionDenied();
  return ctx.user.id;
}

function ownQuery(ctx: Ctx, filters: ParsedFilters) {
  let q = ctx.db.selectFrom('notifications').where('user_id', '=', callerId(ctx));
  if (filters.id) q = q.where('id', 'in', filters.id as number[]);
  if (filters.read) q = q.where('read', 'in', filters.read.map((v) => (v ? 1 : 0)));
  if (filters.event_type) q = q.where('event_type', 'in', filters.event_type as string[]);
  if (filters.object_type) q = q.where('object_type', 'in', filters.object_type as string[]);
  if (filters.object_id) q = q.where('object_id', 'in', filters.object_id as number[]);
  return q;
}

/** The caller's own notification; anyone else's is 404. */
async function getOwn(ctx: Ctx, rawId: string | undefined): Promise<Row<NotificationsTable>> {
  const row = await ctx.db
    .selectFrom('notifications')
    .selectAll()
    .where('id', '=', parseId(rawId))
    .where('user_id', '=', callerId(ctx))
    .executeTakeFirst();
  if (!row) throw new NotFound();
  return row;
}

const LIST_QUERY: QueryParamDoc[] = [
  { name: 'limit', description: 'Page size (default 50, at most 1000).' },
  { name: 'offset', description: 'Index of the first result.' },
  { name: 'ordering', description: 'id or created; prefix with - for descending (default: newest first).' },
  ...Object.entries(FILTERS).map(([name, def]) => ({ name, description: def.description ?? `Filter on ${name}.`, repeated: true })),
];

/** `/api/extras/notifications/`: each caller sees, marks read and deletes only their own. */
export function registerNotifications(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: PATH,
    access: { authenticated: true },
    summary: 'List the caller\'s notifications (newest first)',
    tag: 'extras',
    query: LIST_QUERY,
    response: notification,
    handler: async ({ ctx, query, url }) => {
      const filters = parseFilters(query, FILTERS, ctx.user?.id ?? null);
      const ordering = parseOrdering(query, Object.keys(ORDER_COLUMNS), [{ field: 'id', desc: true }]);
      const page = parsePage(query);
      const q = ownQuery(ctx, filters);
      const { count } = await q.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
      let rows = q.selectAll();
      for (const o of ordering) rows = rows.orderBy(ORDER_COLUMNS[o.field as keyof typeof ORDER_COLUMNS], o.desc ? 'desc' : 'asc');
      const items = (await rows.limit(page.limit).offset(page.offset).execute()).map((r) => present(ctx, r));
      return envelope(items, Number(count), page, url);
    },
  });

  host.routes.add({
    method: 'GET',
    path: `${PATH}:id/`,
    access: { authenticated: true },
    summary: 'Retrieve one of the caller\'s notifications',
    tag: 'extras',
    response: notification,
    handler: async ({ ctx, params }) => present(ctx, await getOwn(ctx, params.id)),
  });

  host.routes.add({
    method: 'PATCH',
    path: `${PATH}:id/`,
    access: { authenticated: true },
    summary: 'Mark one of the caller\'s notifications read (or unread)',
    tag: 'extras',
    body: notificationUpdate,
    response: notification,
    handler: async ({ ctx, params, body }) => {
      const row = await getOwn(ctx, params.id);
      const { read } = body;
      await ctx.db.updateTable('notifications').set({ read: read ? 1 : 0 }).where('id', '=', row.id).execute();
      return present(ctx, { ...row, read: read ? 1 : 0 });
    },
  });

  host.routes.add({
    method: 'DELETE',
    path: `${PATH}:id/`,
    access: { authenticated: true },
    summary: 'Delete one of the caller\'s notifications',
    tag: 'extras',
    status: 204,
    handler: async ({ ctx, params }) => {
      const row = await getOwn(ctx, params.id);
      await ctx.db.deleteFrom('notifications').where('id', '=', row.id).execute();
      return new Reply(204);
    },
  });
}
