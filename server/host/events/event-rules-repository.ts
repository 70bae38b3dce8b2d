import type { Insertable, Updateable } from 'kysely';
import type { Ctx } from '../core/context';
import type { EventRulesTable, Row } from '../db/tables';
import { WEBHOOK_ACTION } from './bus';

/** Every event rule (the list's query). */
export function eventRuleRows(ctx: Ctx) {
  return ctx.db.selectFrom('event_rules').selectAll();
}

export function eventRuleById(ctx: Ctx, id: number): Promise<Row<EventRulesTable> | undefined> {
  return ctx.db.selectFrom('event_rules').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Whether another event rule than `exceptId` holds this name. */
export async function eventRuleNameTaken(ctx: Ctx, name: string, exceptId: number | null): Promise<boolean> {
  let q = ctx.db.selectFrom('event_rules').select('id').where('name', '=', name);
  if (exceptId !== null) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

export async function insertEventRule(ctx: Ctx, values: Insertable<EventRulesTable>): Promise<number> {
  const row = await ctx.db.insertInto('event_rules').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateEventRule(ctx: Ctx, id: number, values: Updateable<EventRulesTable>): Promise<void> {
  await ctx.db.updateTable('event_rules').set(values).where('id', '=', id).execute();
}

export async function deleteEventRule(ctx: Ctx, id: number): Promise<void> {
  await ctx.db.deleteFrom('event_rules').where('id', '=', id).execute();
}

/** The names of the event rules whose action is this webhook, by name. */
export async function eventRulesDeliveringTo(ctx: Ctx, webhookId: number): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom('event_rules')
    .select('name')
    .where('action_type', '=', WEBHOOK_ACTION)
    .where('action_object_id', '=', webhookId)
    .orderBy('name')
    .execute();
  return rows.map((r) => r.name);
}
