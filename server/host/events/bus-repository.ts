import type { Insertable } from 'kysely';
import type { Queryable } from '../db/database';
import type { EventRulesTable, Row, WebhookOutboxTable, WebhooksTable } from '../db/tables';

/**
 * What the event bus reads and writes, on the handle of the write that emits (the writer's
 * transaction): the enabled rules, a rule's webhook, a queued delivery.
 */

export function enabledEventRules(db: Queryable): Promise<Row<EventRulesTable>[]> {
  return db.selectFrom('event_rules').selectAll().where('enabled', '=', 1).execute();
}

export function webhookRow(db: Queryable, id: number): Promise<Row<WebhooksTable> | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Queues one delivery of a webhook (sent after the commit by the delivery worker). */
export async function queueWebhookDelivery(db: Queryable, values: Insertable<WebhookOutboxTable>): Promise<void> {
  await db.insertInto('webhook_outbox').values(values).execute();
}
