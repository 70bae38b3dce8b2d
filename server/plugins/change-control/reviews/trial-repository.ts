import type { Ctx } from '../../../host';
import { ccDb } from '../db/database';
import { announceRequestCacheWritten } from '../stream/announce';

/**
 * Reviewers only a policy on trial (`enforcement: evaluate`) names, per request: their reviews
 * are advisory (they count for no decision), and those who owe a decision to an unsatisfied
 * rule on trial are `waiting` (their "advisory reviews" list, apart from "needs my review").
 * Written by the refresh, from the evaluation it made.
 */
export async function saveTrialReviewers(
  ctx: Ctx,
  changeRequestId: number,
  reviewerIds: readonly number[],
  waitingIds: readonly number[],
): Promise<void> {
  const db = ccDb(ctx);
  const before = await db
    .selectFrom('cc_trial_reviewers')
    .select(['user_id', 'waiting'])
    .where('change_request_id', '=', changeRequestId)
    .execute();
  const waiting = new Set(waitingIds);
  const want = new Map(reviewerIds.map((id) => [id, waiting.has(id) ? 1 : 0]));
  if (before.length === want.size && before.every((r) => want.get(r.user_id) === r.waiting)) return;
  await db.deleteFrom('cc_trial_reviewers').where('change_request_id', '=', changeRequestId).execute();
  // Who waits for an advisory review shows with the request (the advisory list).
  await announceRequestCacheWritten(ctx, changeRequestId);
  if (want.size > 0)
    await db
      .insertInto('cc_trial_reviewers')
      .values([...want].map(([user_id, w]) => ({ change_request_id: changeRequestId, user_id, waiting: w })))
      .execute();
}

/** Which of these (request, reviewer) pairs are advisory: the reviewer is named only by a policy on trial. */
export async function advisoryPairs(
  ctx: Ctx,
  pairs: ReadonlyArray<{ changeRequestId: number; reviewerId: number }>,
): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows = await ccDb(ctx)
    .selectFrom('cc_trial_reviewers')
    .select(['change_request_id', 'user_id'])
    .where('change_request_id', 'in', [...new Set(pairs.map((p) => p.changeRequestId))])
    .where('user_id', 'in', [...new Set(pairs.map((p) => p.reviewerId))])
    .execute();
  return new Set(rows.map((r) => `${r.change_request_id}:${r.user_id}`));
}
