import type { Ctx } from '../../../host';
import { ccDb } from '../db/database';

/** A request's reviews as check functions see them, oldest first. */
export function reviewsForCheckView(ctx: Ctx, changeRequestId: number) {
  return ccDb(ctx)
    .selectFrom('cc_reviews')
    .select(['id', 'reviewer_id', 'decision', 'stale'])
    .where('change_request_id', '=', changeRequestId)
    .orderBy('id')
    .execute();
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
export interface ThreadCounts {
  readonly total: number;
  readonly open: number;
}

/**
 * What a request's thread counts are read from: the comments, and the rows whose deletes
 * cascade to its comments without saying so (the request's own, the authors').
 */
const THREAD_COUNT_READS: readonly string[] = ['cc_change_comments', 'cc_change_requests', 'users'];

const threadCountsKey = (changeRequestId: number) => `cc-thread-counts|${changeRequestId}`;

/**
 * A request's thread counts, kept in the read memo until its comments are written: the count
 * steps over every thread root of the request, and the built-in checks read it at every refresh
 * (a review, a check report, a comment).
 */
export function threadCounts(ctx: Ctx, changeRequestId: number): Promise<ThreadCounts> {
  return ctx.host.readMemo.get(
    ctx,
    threadCountsKey(changeRequestId),
    () => countThreads(ctx, changeRequestId),
    THREAD_COUNT_READS,
  );
}

async function countThreads(ctx: Ctx, changeRequestId: number): Promise<ThreadCounts> {
  const row = await ccDb(ctx)
    .selectFrom('cc_change_comments')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('total'),
      eb.fn.sum<number | string | null>(eb.case().when('resolved', '=', 0).then(1).else(0).end()).as('open'),
    ])
    .where('change_request_id', '=', changeRequestId)
    .where('parent_id', 'is', null)
    .executeTakeFirst();
  return Object.freeze({ total: Number(row?.total ?? 0), open: Number(row?.open ?? 0) });
}

/**
 * Inside the write transaction that has just inserted one open thread root on the request, whose
 * counts were `before` (read in the same transaction before the insert): the counts now, for the
 * rest of the transaction and for the readers after its commit, instead of counting again.
 */
export function threadOpened(ctx: Ctx, changeRequestId: number, before: ThreadCounts): void {
  const now: ThreadCounts = Object.freeze({ total: before.total + 1, open: before.open + 1 });
  ctx.host.readMemo.written(ctx, threadCountsKey(changeRequestId), now, THREAD_COUNT_READS);
  ctx.host.readMemo.keepAtCommit(ctx, threadCountsKey(changeRequestId), now, THREAD_COUNT_READS);
}
