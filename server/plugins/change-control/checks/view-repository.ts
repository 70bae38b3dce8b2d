import type { Ctx } from '../../../host';
import { ccDb } from '../db/database';

/** A request's comment threads (root comments): how many, and how many are open. */
export async function threadCounts(ctx: Ctx, changeRequestId: number): Promise<{ total: number; open: number }> {
  const row = await ccDb(ctx)
    .selectFrom('cc_change_comments')
    .select((eb) => [eb.fn.countAll<number | string>().as('total'), eb.fn.sum<number | string | null>(eb.case().when('resolved', '=', 0).then(1).else(0).end()).as('open')])
    .where('change_request_id', '=', changeRequestId)
    .where('parent_id', 'is', null)
    .executeTakeFirst();
  return { total: Number(row?.total ?? 0), open: Number(row?.open ?? 0) };
}
