import type { Ctx } from '../core/context';
import { tableRows } from '../db/table-rows';

/** Every webhook (the list's query). */
export function webhookRows(ctx: Ctx) {
  return ctx.db.selectFrom('webhooks').selectAll();
}

/** Webhooks by id: read, exists, name taken, insert, update, delete. */
export const webhookTable = tableRows((ctx: Ctx) => ctx.db, 'webhooks');
