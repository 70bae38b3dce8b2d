import { z } from 'zod';
import { notification, type Notification } from '../../../contract/api/host';
import type { Ctx } from '../core/context';
import { NotFound, PermissionDenied } from '../core/errors';
import type { Host } from '../host';
import type { NotificationsTable, Row } from '../db/tables';
import { envelope, parseFilters, parseOrdering, parsePage, parseSearch, parseShape, rejectUnknownParams, shapeObject } from '../http/query';
import { defineList } from '../db/list';
import { listQueryDocs, parseId } from '../http/resource';
import { Reply } from '../http/routes';
import { deleteNotification, markNotificationRead, notificationOf, notificationRowsOf } from './notifications-repository';
import { briefObject, fieldsOf } from '../core/api-object';

const PATH = '/api/extras/notifications/';

const notificationUpdate = z.strictObject({ read: z.boolean() });

function present(ctx: Ctx, row: Row<NotificationsTable>): Notification {
  return {
    ...briefObject(ctx, PATH, row.id, `${row.event_type}: ${row.object_repr}`),
    ...fieldsOf(row, ['object_type', 'object_id', 'object_repr', 'event_type', 'created']),
    read: row.read === 1,
  };
}

function callerId(ctx: Ctx): number {
  if (!ctx.user) throw new PermissionDenied();
  return ctx.user.id;
}

/** The caller's notifications (never anyone else's): filters, `q` over the object's text, ordering. */
const notificationList = defineList({
  name: 'notifications',
  from: (ctx: Ctx) => notificationRowsOf(ctx, callerId(ctx)),
  columnFilters: {
    id: 'int',
    read: 'bool',
    event_type: 'string',
    object_type: { type: 'string', description: 'The object\'s type, "app_label.model".' },
    object_id: 'int',
  },
  ordering: { id: 'id', created: 'created' },
  defaultOrdering: [{ field: 'id', desc: true }],
  search: ['object_repr', 'event_type'],
  present: async (ctx, rows) => rows.map((r) => present(ctx, r)),
});

/** The caller's own notification; anyone else's is 404. */
async function getOwn(ctx: Ctx, rawId: string | undefined): Promise<Row<NotificationsTable>> {
  const row = await notificationOf(ctx, callerId(ctx), parseId(rawId));
  if (!row) throw new NotFound();
  return row;
}

/** `/api/extras/notifications/`: each caller sees, marks read and deletes only their own. */
export function registerNotifications(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: PATH,
    access: { authenticated: true },
    summary: 'List the caller\'s notifications (newest first)',
    tag: 'extras',
    query: listQueryDocs(notificationList),
    response: notification,
    handler: async ({ ctx, query, url }) => {
      rejectUnknownParams(query, Object.keys(notificationList.filters));
      const filters = parseFilters(query, notificationList.filters, ctx.user?.id ?? null);
      const ordering = parseOrdering(query, notificationList.ordering, notificationList.defaultOrdering);
      const shape = parseShape(query);
      const page = parsePage(query);
      const { count, items } = await notificationList.run(ctx, { filters, ordering, search: parseSearch(query), page });
      return envelope(items.map((n) => shapeObject(n, shape)), count, page, url);
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
      await markNotificationRead(ctx, row.id, read);
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
      await deleteNotification(ctx, row.id);
      return new Reply(204);
    },
  });
}
