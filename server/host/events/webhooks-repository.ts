import type { Insertable, Updateable } from 'kysely';
import type { Ctx } from '../core/context';
import type { Row, WebhooksTable } from '../db/tables';

/** Every webhook (the list's query). */
export function webhookRows(ctx: Ctx) {
  return ctx.db.selectFrom('webhooks').selectAll();
}

export function webhookById(ctx: Ctx, id: number): Promise<Row<WebhooksTable> | undefined> {
  return ctx.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function webhookExists(ctx: Ctx, id: number): Promise<boolean> {
  return (await ctx.db.selectFrom('webhooks').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Whether another webhook than `exceptId` holds this name. */
export async function webhookNameTaken(ctx: Ctx, name: string, exceptId: number | null): Promise<boolean> {
  let q = ctx.db.selectFrom('webhooks').select('id').where('name', '=', name);
  if (exceptId !== null) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

export async function insertWebhook(ctx: Ctx, values: Insertable<WebhooksTable>): Promise<number> {
  const row = await ctx.db.insertInto('webhooks').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateWebhook(ctx: Ctx, id: number, values: Updateable<WebhooksTable>): Promise<void> {
  await ctx.db.updateTable('webhooks').set(values).where('id', '=', id).execute();
}

export async function deleteWebhook(ctx: Ctx, id: number): Promise<void> {
  await ctx.db.deleteFrom('webhooks').where('id', '=', id).execute();
}
