import { advisoryPairs } from './trial-repository';
import {
  briefObject,
  compiledSelect,
  type Ctx,
  objectUrl,
  recordChange,
  tableRows,
  tagsOf,
  usersByIds,
  valuesTable,
} from '../../../host';
import type { Review } from '../../../../contract/api/change-control';
import { ccDb, ccTables, nowIso, parseJson, toBool } from '../db/database';
import type { Updateable } from 'kysely';
import type { ReviewRow, ReviewsTable } from '../db/tables';
import { renderMarkdown } from '../markdown';
import { MODELS, REVIEW_TYPE } from '../names';

/** What an evaluation reads of a change request's reviews, in the order given. */
const reviewFactsById = compiledSelect((db, changeRequestId: number) =>
  ccTables(db).selectFrom('cc_reviews').selectAll().where('change_request_id', '=', changeRequestId).orderBy('id'),
);

/** A request's reviews, whole (an approval is judged on the review its reviewer could write now). */
export function reviewFactsOf(ctx: Ctx, changeRequestId: number): Promise<ReviewRow[]> {
  return reviewFactsById(ctx.db, changeRequestId);
}

/** Reviews by id: read, insert (answering the stored row); updates and deletes below. */
export const reviewTable = tableRows(ccDb, 'cc_reviews');

/** Writes these fields onto one review. */
export async function updateReviewRow(
  ctx: Ctx,
  row: Pick<ReviewRow, 'id'>,
  values: Updateable<ReviewsTable>,
): Promise<void> {
  await ccDb(ctx).updateTable('cc_reviews').set(values).where('id', '=', row.id).execute();
}

/** Deletes one review. */
export async function deleteReviewRow(ctx: Ctx, row: Pick<ReviewRow, 'id'>): Promise<void> {
  await ccDb(ctx).deleteFrom('cc_reviews').where('id', '=', row.id).execute();
}

/** The id of this reviewer's review of the request, if they gave one. */
export async function reviewIdOf(ctx: Ctx, changeRequestId: number, reviewerId: number): Promise<number | undefined> {
  const row = await ccDb(ctx)
    .selectFrom('cc_reviews')
    .select('id')
    .where('change_request_id', '=', changeRequestId)
    .where('reviewer_id', '=', reviewerId)
    .executeTakeFirst();
  return row?.id;
}

const DECISION_WORDS = { approve: 'Approved', reject: 'Changes requested', comment: 'Commented' } as const;

export function presentReviews(
  ctx: Ctx,
  rows: readonly ReviewRow[],
  users: ReadonlyMap<number, { id: number; username: string; display: string }>,
): Review[] {
  return rows.map((row) => {
    const reviewer = users.get(row.reviewer_id) ?? {
      id: row.reviewer_id,
      username: `user ${row.reviewer_id}`,
      display: `user ${row.reviewer_id}`,
    };
    return {
      ...briefObject(ctx, MODELS.review.path, row.id, `${DECISION_WORDS[row.decision]} by ${reviewer.username}`),
      change_request: row.change_request_id,
      decision: row.decision,
      comment: row.comment,
      comment_html: renderMarkdown(row.comment),
      reviewer,
      stale: toBool(row.stale),
      digest: row.digest,
      advisory: false,
      tags: [],
      custom_fields: parseJson<Record<string, unknown>>(row.custom_fields, {}),
      created: row.created,
      last_updated: row.last_updated,
    };
  });
}

/** The reviewers of these reviews, by id, as reviews present them. */
async function reviewersOf(
  ctx: Ctx,
  rows: readonly ReviewRow[],
): Promise<Map<number, { id: number; username: string; display: string }>> {
  const users = await usersByIds(
    ctx,
    rows.map((r) => r.reviewer_id),
  );
  return new Map(users.map((u) => [u.id, { id: u.id, username: u.username, display: u.username }]));
}

export async function presentReviewRows(ctx: Ctx, rows: readonly ReviewRow[]): Promise<Review[]> {
  const tags = await tagsOf(
    ctx,
    REVIEW_TYPE,
    rows.map((r) => r.id),
  );
  const advisory = await advisoryPairs(
    ctx,
    rows.map((r) => ({ changeRequestId: r.change_request_id, reviewerId: r.reviewer_id })),
  );
  return presentReviews(ctx, rows, await reviewersOf(ctx, rows)).map((r) => ({
    ...r,
    tags: tags.get(r.id) ?? [],
    advisory: advisory.has(`${r.change_request}:${r.reviewer.id}`),
  }));
}

/** What the changelog keeps of a review (no rendered HTML). */
export function snapshotReview(ctx: Ctx, row: ReviewRow): Record<string, unknown> {
  return {
    id: row.id,
    url: objectUrl(ctx, MODELS.review.path, row.id),
    change_request: row.change_request_id,
    decision: row.decision,
    comment: row.comment,
    reviewer: row.reviewer_id,
    stale: toBool(row.stale),
    digest: row.digest,
    custom_fields: parseJson<Record<string, unknown>>(row.custom_fields, {}),
    created: row.created,
    last_updated: row.last_updated,
  };
}

/**
 * Marks every live review of a request stale (the branch moved on); each in the changelog.
 * Returns how many went stale.
 */
export async function markReviewsStale(ctx: Ctx, changeRequestId: number): Promise<number> {
  const live = await ccDb(ctx)
    .selectFrom('cc_reviews')
    .selectAll()
    .where('change_request_id', '=', changeRequestId)
    .where('stale', '=', 0)
    .execute();
  if (live.length === 0) return 0;
  const now = nowIso(ctx);
  await ccDb(ctx)
    .updateTable('cc_reviews')
    .set({ stale: 1, last_updated: now })
    .where('change_request_id', '=', changeRequestId)
    .where('stale', '=', 0)
    .execute();
  for (const row of live) await recordStaleness(ctx, row, 1, now);
  return live.length;
}

/** The changelog entry of a review whose staleness moved. */
function recordStaleness(ctx: Ctx, row: ReviewRow, stale: number, now: string): Promise<void> {
  return recordChange(ctx, {
    action: 'update',
    objectType: REVIEW_TYPE,
    objectId: row.id,
    repr: `review ${row.id}`,
    prechange: snapshotReview(ctx, row),
    postchange: snapshotReview(ctx, { ...row, stale, last_updated: now }),
  });
}

/**
 * Staleness by content: a review is stale exactly when the digest it was given on differs from
 * the branch's digest now, so an edit that is undone or a sync that brings only unrelated
 * changes leaves it live (and a review made stale by an edit that is then undone counts again).
 * A review without a digest (given before digests were kept) goes stale on any write, as before.
 * Each review that moves gets its changelog entry. Returns how many moved.
 */
export async function settleReviewsByContent(
  ctx: Ctx,
  changeRequestId: number,
  digest: string,
  wrote: boolean,
): Promise<number> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_reviews')
    .selectAll()
    .where('change_request_id', '=', changeRequestId)
    .execute();
  const now = nowIso(ctx);
  let moved = 0;
  for (const row of rows) {
    const stale = row.digest === null ? (wrote ? 1 : row.stale) : row.digest === digest ? 0 : 1;
    if (stale === row.stale) continue;
    moved++;
    await ccDb(ctx)
      .updateTable('cc_reviews')
      .set({ stale, last_updated: now })
      .where('id', '=', row.id)
      .where('change_request_id', '=', row.change_request_id)
      .execute();
    await recordStaleness(ctx, row, stale, now);
  }
  return moved;
}

/** The open change requests with a live approval by one of these users. */
export async function openRequestsApprovedBy(ctx: Ctx, userIds: readonly number[]): Promise<number[]> {
  if (userIds.length === 0) return [];
  const rows = await ccDb(ctx)
    .selectFrom('cc_reviews')
    .innerJoin('cc_change_requests', 'cc_change_requests.id', 'cc_reviews.change_request_id')
    .select('cc_change_requests.id as id')
    .distinct()
    .where('cc_reviews.decision', '=', 'approve')
    .where('cc_reviews.stale', '=', 0)
    .where('cc_reviews.reviewer_id', 'in', (eb) =>
      eb.selectFrom(valuesTable(ctx.db, [...new Set(userIds)]).as('j')).select('j.value'),
    )
    .where('cc_change_requests.status', 'not in', ['completed', 'abandoned'])
    .execute();
  return rows.map((r) => r.id);
}

/** How many reviews of the request are by someone other than `userId`. */
export async function reviewsByOthers(ctx: Ctx, changeRequestId: number, userId: number | null): Promise<number> {
  let q = ccDb(ctx)
    .selectFrom('cc_reviews')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('change_request_id', '=', changeRequestId);
  if (userId !== null) q = q.where('reviewer_id', '<>', userId);
  return Number((await q.executeTakeFirst())?.n ?? 0);
}
