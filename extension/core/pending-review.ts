// A pending review, as on a pull request: after "Start Review" new comments and replies are kept
// as drafts, visible only to the reviewer, until "Submit Review" posts them one by one and then
// the decision. Drafts live in the extension's global state (per service, user and request), so
// they survive a reload. Each draft and the review carry their own Idempotency-Key: a retry after
// a lost answer is replayed by the service, never posted twice. What fails stays pending.
// No VS Code here.
import { randomUUID } from 'node:crypto';
import type { ChangeComment, Review, ReviewDecision } from '../../contract/api/change-control';
import type { ApiClient } from './api-client';
import { ApiError, asApiError } from './api-error';

export interface DraftComment {
  /** Identifies the draft and is the Idempotency-Key it is posted with. */
  key: string;
  changeDiff: number;
  /** The attribute of a new thread (a reply takes its thread's). */
  attribute: string | null;
  /** The thread a reply belongs to: a posted root, or a root that is itself pending. */
  parent: number | null;
  parentDraft: string | null;
  text: string;
  created: string;
}

export interface PendingReview {
  changeRequestId: number;
  started: string;
  drafts: DraftComment[];
  /** The decision being posted, with its key (kept so that a retry replays rather than repeats it). */
  submitting: { decision: ReviewDecision; comment: string; key: string } | null;
}

/** Every pending review of a service and user, by change request id. */
export type PendingReviews = Record<string, PendingReview>;

export function pendingStorageKey(serviceUrl: string, userId: number): string {
  return `changeControl.pendingReviews:${serviceUrl}:${userId}`;
}

export function newKey(): string {
  return randomUUID();
}

/** The parsed pending reviews from storage (anything malformed is dropped). */
export function readPendingReviews(raw: unknown): PendingReviews {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: PendingReviews = {};
  for (const [id, value] of Object.entries(raw as Record<string, unknown>)) {
    const r = value as Partial<PendingReview> | null;
    if (!r || typeof r !== 'object' || typeof r.changeRequestId !== 'number' || !Array.isArray(r.drafts)) continue;
    const drafts = r.drafts.filter(
      (d): d is DraftComment =>
        !!d &&
        typeof d === 'object' &&
        typeof d.key === 'string' &&
        typeof d.changeDiff === 'number' &&
        typeof d.text === 'string',
    );
    out[id] = {
      changeRequestId: r.changeRequestId,
      started: typeof r.started === 'string' ? r.started : new Date(0).toISOString(),
      drafts,
      submitting: r.submitting ?? null,
    };
  }
  return out;
}

/**
 * Whether the comment widget's primary action adds to a pending review (`changeControl.reviewing`):
 * when the active editor's request has one; when the active editor shows none of our requests
 * (the multi-diff editor, a webview, nothing focused), when any request has one.
 */
export function isReviewing(all: PendingReviews, activeRequest: number | undefined): boolean {
  if (activeRequest !== undefined) return all[activeRequest] !== undefined;
  return Object.keys(all).length > 0;
}

/**
 * The status bar's words for pending reviews: the one of the active editor's request, else the
 * only one; with several and none active, how many requests have one. Null when there is none.
 */
export function pendingStatus(
  all: PendingReviews,
  activeRequest: number | undefined,
): { text: string; tooltip: string; changeRequestId: number | null } | null {
  const reviews = Object.values(all);
  if (reviews.length === 0) return null;
  const one =
    (activeRequest !== undefined ? all[activeRequest] : undefined) ?? (reviews.length === 1 ? reviews[0] : undefined);
  if (one) {
    const n = one.drafts.length;
    return {
      text: `$(comment-draft) ${n} pending`,
      tooltip: `Your pending review of change request #${one.changeRequestId}: ${n} comment${n === 1 ? '' : 's'} visible only to you until Submit Review (click to submit).`,
      changeRequestId: one.changeRequestId,
    };
  }
  const n = reviews.reduce((sum, r) => sum + r.drafts.length, 0);
  return {
    text: `$(comment-draft) ${n} pending`,
    tooltip: `Pending reviews on ${reviews.length} change requests (${n} comments) wait for Submit Review (click to choose one).`,
    changeRequestId: null,
  };
}

export function startReview(all: PendingReviews, changeRequestId: number, now: Date): PendingReviews {
  if (all[changeRequestId]) return all;
  return { ...all, [changeRequestId]: { changeRequestId, started: now.toISOString(), drafts: [], submitting: null } };
}

export function addDraft(
  all: PendingReviews,
  changeRequestId: number,
  draft: Omit<DraftComment, 'key' | 'created'>,
  now: Date,
  key = newKey(),
): { all: PendingReviews; draft: DraftComment } {
  const review = all[changeRequestId] ?? { changeRequestId, started: now.toISOString(), drafts: [], submitting: null };
  const full: DraftComment = {
    ...draft,
    attribute: draft.parent !== null || draft.parentDraft !== null ? null : draft.attribute,
    key,
    created: now.toISOString(),
  };
  return { all: { ...all, [changeRequestId]: { ...review, drafts: [...review.drafts, full] } }, draft: full };
}

/** A draft with new text; it gets a new key, since it is now a different request. */
export function editDraft(all: PendingReviews, changeRequestId: number, key: string, text: string): PendingReviews {
  const review = all[changeRequestId];
  if (!review) return all;
  const fresh = newKey();
  const drafts = review.drafts.map((d) =>
    d.key === key ? { ...d, text, key: fresh } : d.parentDraft === key ? { ...d, parentDraft: fresh } : d,
  );
  return { ...all, [changeRequestId]: { ...review, drafts } };
}

/** Removes a draft, and the pending replies of a pending root with it. */
export function removeDraft(all: PendingReviews, changeRequestId: number, key: string): PendingReviews {
  const review = all[changeRequestId];
  if (!review) return all;
  return {
    ...all,
    [changeRequestId]: { ...review, drafts: review.drafts.filter((d) => d.key !== key && d.parentDraft !== key) },
  };
}

export function discardReview(all: PendingReviews, changeRequestId: number): PendingReviews {
  const { [changeRequestId]: _dropped, ...rest } = all;
  return rest;
}

/** Drafts in the order they are posted: new threads first, then replies (each in the order written). */
export function postingOrder(drafts: readonly DraftComment[]): DraftComment[] {
  const isNewThread = (d: DraftComment) => d.parent === null && d.parentDraft === null;
  return [...drafts.filter(isNewThread), ...drafts.filter((d) => !isNewThread(d))];
}

export class PendingReviewError extends Error {
  constructor(
    readonly posted: number,
    readonly remaining: number,
    readonly reason: ApiError,
    readonly failedDraft: DraftComment | null,
  ) {
    super(`${posted} posted, ${remaining} still pending: ${reason.message}`);
    this.name = 'PendingReviewError';
  }
}

export type PostingClient = Pick<ApiClient, 'createComment' | 'createReview' | 'updateReview'>;

export interface PostingStore {
  load(): PendingReview | undefined;
  /** Saves the review's new state (undefined: nothing pending any more). */
  save(review: PendingReview | undefined): Promise<void>;
}

/**
 * Posts a pending review: each draft (saving after each, so a draft posted is never pending
 * again), then the decision (`reviewId`: the caller's existing review, which is updated; null
 * decision: the comments only, for a caller who may not review). A failure
 * stops the run with a PendingReviewError; what was not posted stays pending.
 */
export async function postPendingReview(
  client: PostingClient,
  store: PostingStore,
  changeRequestId: number,
  decision: { decision: ReviewDecision; comment: string; reviewId: number | null } | null,
): Promise<{ posted: ChangeComment[]; review: Review | null }> {
  let review = store.load();
  if (!review)
    throw new PendingReviewError(
      0,
      0,
      new ApiError('invalid', 'There is no pending review on this change request.'),
      null,
    );
  if (decision) {
    const comment = decision.comment.trim();
    if (decision.decision === 'reject' && !comment)
      throw new PendingReviewError(
        0,
        review.drafts.length,
        new ApiError('invalid', 'Requesting changes needs a comment saying what to change.'),
        null,
      );
    const same =
      review.submitting && review.submitting.decision === decision.decision && review.submitting.comment === comment;
    if (!same) {
      review = { ...review, submitting: { decision: decision.decision, comment, key: newKey() } };
      await store.save(review);
    }
  }
  const posted: ChangeComment[] = [];
  for (const draft of postingOrder(review.drafts)) {
    const current: DraftComment = review.drafts.find((d) => d.key === draft.key) ?? draft;
    if (current.parentDraft !== null) {
      // Its root is still pending: it failed earlier in this run (we stopped) or is missing.
      const missing = !review.drafts.some((d) => d.key === current.parentDraft);
      if (missing) {
        review = { ...review, drafts: review.drafts.filter((d) => d.key !== current.key) };
        await store.save(review);
        continue;
      }
    }
    try {
      const created = await client.createComment(
        {
          change_request: changeRequestId,
          change_diff: current.changeDiff,
          text: current.text,
          parent: current.parent,
          attribute: current.parent === null && current.parentDraft === null ? current.attribute : undefined,
        },
        { idempotencyKey: current.key },
      );
      posted.push(created);
      review = {
        ...review,
        drafts: review.drafts
          .filter((d) => d.key !== current.key)
          .map((d) => (d.parentDraft === current.key ? { ...d, parentDraft: null, parent: created.id } : d)),
      };
      await store.save(review);
    } catch (e) {
      throw new PendingReviewError(posted.length, review.drafts.length, asApiError(e), current);
    }
  }
  const submitting = review.submitting;
  if (!decision || !submitting) {
    await store.save(undefined);
    return { posted, review: null };
  }
  try {
    const body = { decision: submitting.decision, comment: submitting.comment };
    const result =
      decision.reviewId !== null
        ? await client.updateReview(decision.reviewId, body, { idempotencyKey: submitting.key })
        : await client.createReview({ change_request: changeRequestId, ...body }, { idempotencyKey: submitting.key });
    await store.save(undefined);
    return { posted, review: result };
  } catch (e) {
    throw new PendingReviewError(posted.length, review.drafts.length, asApiError(e), null);
  }
}
