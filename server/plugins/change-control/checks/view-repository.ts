import type { Ctx } from '../../../host';
import { ccDb } from '../db/database';

/** A request's reviews as check functions see them, oldest first. */
export function reviewsForCheckView(ctx: Ctx, changeRequestId: number) {
  return ccDb(ctx).selectFrom('cc_reviews').select(['id', 'reviewer_id', 'decision', 'stale']).where('change_request_id', '=', changeRequestId).orderBy('id').execute();
}

/** A request's comment threads (root comments) as check functions see them, oldest first. */
export function threadsForCheckView(ctx: Ctx, changeRequestId: number) {
  return ccDb(ctx)
    .selectFrom('cc_change_comments')
    .select(['id', 'change_diff_id', 'resolved'])
    .where('change_request_id', '=', changeRequestId)
    .where('parent_id', 'is', null)
    .orderBy('id')
    .execute();
}

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
