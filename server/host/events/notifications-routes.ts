import { z } from 'zod';
import { notification, type Notification } from '../../../contract/api/host';
import type { Ctx } from '../core/context';
import { NotFound, PermissionDenied } from '../core/errors';
import type { Host } from '../host';
import type { HostTables, NotificationsTable, Row } from '../db/tables';
import { envelope, parseListQuery, shapeObject } from '../http/query';
import { defineList, type Condition } from '../db/list';
import { listQueryDocs, parseId } from '../http/resource';
import {
  deleteNotification,
  markNotificationRead,
  notificationOf,
  notificationRowsOf,
  notificationsOfVisible,
} from './notifications-repository';
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

/**
 * A notification names an object (its `object_repr`): it shows only while the caller may view
 * that object, for the object types plugins declare (a change request: `RelatedVisibility`), in SQL.
 */
async function visibleNotifications(ctx: Ctx): Promise<Condition<HostTables, 'notifications'> | null> {
  const conditions: Array<Condition<HostTables, 'notifications'>> = [];
  for (const related of ctx.host.relatedVisibility.all()) {
    if (!related.owner) continue;
    const ids = await related.owner.visibleIds(ctx);
    if (ids !== null) conditions.push(notificationsOfVisible(related.owner.objectType, ids));
  }
  return conditions.length === 0 ? null : (eb) => eb.and(conditions.map((c) => c(eb)));
}

/** The caller's notifications (never anyone else's): filters, `q` over the object's text, ordering. */
const notificationList = defineList({
  from: (ctx: Ctx) => notificationRowsOf(ctx, callerId(ctx)),
  columnFilters: {
    read: 'bool',
    event_type: 'string',
    object_type: { type: 'string', description: 'The object\'s type, "app_label.model".' },
    object_id: 'int',
  },
  ordering: { id: 'id', created: 'created' },
  defaultOrdering: [{ field: 'id', desc: true }],
  search: ['object_repr', 'event_type'],
  visible: visibleNotifications,
  present: async (ctx, rows) => rows.map((r) => present(ctx, r)),
});

/** The caller's own notification, as the list shows it; anyone else's, or one the list hides, is 404. */
async function getOwn(ctx: Ctx, rawId: string | undefined): Promise<Row<NotificationsTable>> {
  const id = parseId(rawId);
  const shown = await notificationList.run(ctx, { filters: { id: [id] }, ordering: [], page: { limit: 1, offset: 0 } });
  const row = shown.count > 0 ? await notificationOf(ctx, callerId(ctx), id) : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** `/api/extras/notifications/`: each caller sees, marks read and deletes only their own. */
export function registerNotifications(host: Host): void {
  const routes = host.routes.group({
    path: PATH,
    tag: 'extras',
    access: { authenticated: true },
    response: notification,
  });

  routes.add({
    method: 'GET',
    summary: "List the caller's notifications (newest first)",
    query: listQueryDocs(notificationList),
    handler: async ({ ctx, query, url }) => {
      const { filters, ordering, search, shape, page } = parseListQuery(query, notificationList, ctx.user?.id ?? null);
      const { count, items } = await notificationList.run(ctx, { filters, ordering, search, page });
      return envelope(
        items.map((n) => shapeObject(n, shape)),
        count,
        page,
        url,
      );
    },
  });

  routes.add({
    method: 'GET',
    path: ':id/',
    summary: "Retrieve one of the caller's notifications",
    handler: async ({ ctx, params }) => present(ctx, await getOwn(ctx, params.id)),
  });

  routes.add({
    method: 'PATCH',
    path: ':id/',
    summary: "Mark one of the caller's notifications read (or unread)",
    body: notificationUpdate,
    handler: async ({ ctx, params, body }) => {
      const row = await getOwn(ctx, params.id);
      const { read } = body;
      await markNotificationRead(ctx, row.id, read);
      return present(ctx, { ...row, read: read ? 1 : 0 });
    },
  });

  routes.remove({
    path: ':id/',
    summary: "Delete one of the caller's notifications",
    run: async ({ ctx, params }) => deleteNotification(ctx, (await getOwn(ctx, params.id)).id),
  });
}
