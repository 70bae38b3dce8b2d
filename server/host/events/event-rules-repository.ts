import type { Ctx } from '../core/context';
import { tableRows } from '../db/table-rows';
import { WEBHOOK_ACTION } from './bus';

/** Every event rule (the list's query). */
export function eventRuleRows(ctx: Ctx) {
  return ctx.db.selectFrom('event_rules').selectAll();
}

/** Event rules by id: read, name taken, insert, update, delete. */
export const eventRuleTable = tableRows((ctx: Ctx) => ctx.db, 'event_rules');

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
