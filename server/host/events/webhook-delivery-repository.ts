import type { Updateable } from 'kysely';
import type { Queryable } from '../db/database';
import type { Row, WebhookOutboxTable } from '../db/tables';

/** The pending deliveries due at `now`, oldest first, but those in `except` (in flight here). */
export function dueDeliveries(
  db: Queryable,
  now: string,
  except: readonly number[],
  limit: number,
): Promise<Row<WebhookOutboxTable>[]> {
  let q = db
    .selectFrom('webhook_outbox')
    .selectAll()
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now);
  if (except.length > 0) q = q.where('id', 'not in', [...except]);
  return q.orderBy('next_attempt_at').orderBy('id').limit(limit).execute();
}

export function deliveryById(db: Queryable, id: number): Promise<Row<WebhookOutboxTable> | undefined> {
  return db.selectFrom('webhook_outbox').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The delivery's webhook's TLS setting (undefined: the webhook is gone). */
export function deliveryTlsSetting(
  db: Queryable,
  webhookId: number,
): Promise<{ ssl_verification: number } | undefined> {
  return db.selectFrom('webhooks').select('ssl_verification').where('id', '=', webhookId).executeTakeFirst();
}

/** Records an attempt's outcome on a delivery that is still pending. */
export async function recordDeliveryAttempt(
  db: Queryable,
  id: number,
  values: Updateable<WebhookOutboxTable>,
): Promise<void> {
  await db.updateTable('webhook_outbox').set(values).where('id', '=', id).where('state', '=', 'pending').execute();
}
