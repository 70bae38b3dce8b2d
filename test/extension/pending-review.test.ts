// A pending review: drafts kept until Submit Review posts them one by one (new threads first, then
// replies, a pending root's replies pointed at it once posted), then the decision; each with its
// own Idempotency-Key, so that a retry after a lost answer never posts twice; what fails stays.
import assert from 'node:assert/strict';
import { ApiError } from '../../extension/core/api-error';
import {
  addDraft,
  discardReview,
  editDraft,
  PendingReviewError,
  pendingStorageKey,
  postingOrder,
  postPendingReview,
  readPendingReviews,
  removeDraft,
  startReview,
  isReviewing,
  pendingStatus,
  type PendingReview,
  type PendingReviews,
  type PostingClient,
} from '../../extension/core/pending-review';
import { makeComment, makeReview } from './fixtures';

const NOW = new Date('2026-11-01T10:00:00.000Z');
const CR = 7;

/** A service that keeps the first answer per Idempotency-Key (as the contract says) and can fail on cue. */
function fakeService() {
  const answers = new Map<string, unknown>();
  const calls: { what: string; key: string | undefined; body: unknown }[] = [];
  let nextId = 100;
  let failAt: { call: number; lost: boolean } | null = null;
  const effects: string[] = [];
  const run = async <T>(what: string, key: string | undefined, body: unknown, make: () => T): Promise<T> => {
    calls.push({ what, key, body });
    const n = calls.length;
    if (failAt && failAt.call === n && !failAt.lost) throw new ApiError('unreachable', 'connection reset');
    const result = key && answers.has(key) ? (answers.get(key) as T) : make();
    if (key && !answers.has(key)) {
      answers.set(key, result);
      effects.push(what);
    } else if (!key) effects.push(what);
    if (failAt && failAt.call === n && failAt.lost) throw new ApiError('unreachable', 'no answer in time');
    return result;
  };
  const client: PostingClient = {
    createComment: (body, opts) =>
      run('comment', opts?.idempotencyKey, body, () =>
        makeComment({
          id: nextId++,
          change_request: CR,
          change_diff: body.change_diff,
          parent: body.parent ?? null,
          text: body.text,
          attribute: body.attribute ?? null,
        }),
      ),
    createReview: (body, opts) =>
      run('review', opts?.idempotencyKey, body, () =>
        makeReview({ id: nextId++, change_request: CR, decision: body.decision, comment: body.comment }),
      ),
    updateReview: (id, body, opts) =>
      run('review-update', opts?.idempotencyKey, body, () =>
        makeReview({ id, change_request: CR, decision: body.decision, comment: body.comment }),
      ),
  };
  return {
    client,
    calls,
    effects,
    failAt: (call: number, lost = false) => (failAt = { call, lost }),
    heal: () => (failAt = null),
  };
}

function memoryStore(initial: PendingReviews) {
  let all = initial;
  return {
    get all() {
      return all;
    },
    store: {
      load: () => all[CR] as PendingReview | undefined,
      save: async (r: PendingReview | undefined) => {
        all = r ? { ...all, [CR]: r } : discardReview(all, CR);
      },
    },
  };
}

function reviewWithDrafts(): PendingReviews {
  let all = startReview({}, CR, NOW);
  all = addDraft(
    all,
    CR,
    { changeDiff: 11, attribute: 'rack', parent: null, parentDraft: null, text: 'Why R2?' },
    NOW,
    'k-root',
  ).all;
  all = addDraft(
    all,
    CR,
    { changeDiff: 11, attribute: 'ignored', parent: null, parentDraft: 'k-root', text: 'Also the serial.' },
    NOW,
    'k-reply-to-draft',
  ).all;
  all = addDraft(
    all,
    CR,
    { changeDiff: 12, attribute: null, parent: 55, parentDraft: null, text: 'Agreed.' },
    NOW,
    'k-reply',
  ).all;
  return all;
}

describe('extension: the pending review', () => {
  it('keeps drafts per request; a reply takes no attribute; editing gives a new key; removing a pending root removes its replies', () => {
    let all = reviewWithDrafts();
    assert.deepEqual(
      all[CR].drafts.map((d) => [d.key, d.attribute, d.parent, d.parentDraft]),
      [
        ['k-root', 'rack', null, null],
        ['k-reply-to-draft', null, null, 'k-root'],
        ['k-reply', null, 55, null],
      ],
    );
    assert.equal(startReview(all, CR, NOW), all, 'starting again keeps it');
    all = editDraft(all, CR, 'k-root', 'Why rack R2?');
    const root = all[CR].drafts[0];
    assert.equal(root.text, 'Why rack R2?');
    assert.notEqual(root.key, 'k-root');
    assert.equal(all[CR].drafts[1].parentDraft, root.key, 'its replies follow the new key');
    all = removeDraft(all, CR, root.key);
    assert.deepEqual(
      all[CR].drafts.map((d) => d.key),
      ['k-reply'],
    );
    assert.deepEqual(discardReview(all, CR), {});
  });

  it("after Start Review, a new thread's primary button adds to the pending review: for the active editor's request, or any when the active editor shows none", () => {
    const all = startReview({}, CR, NOW);
    assert.equal(isReviewing(all, CR), true);
    assert.equal(isReviewing(all, CR + 1), false, "another request's documents: its comments post at once");
    assert.equal(isReviewing(all, undefined), true, 'the multi-diff editor or no editor: the review under way');
    assert.equal(isReviewing({}, undefined), false);
  });

  it("shows the pending count outside Submit Review: the active request's, the only one, or the sum over several", () => {
    const one = reviewWithDrafts();
    assert.deepEqual(pendingStatus(one, undefined), {
      text: '$(comment-draft) 3 pending',
      tooltip: `Your pending review of change request #${CR}: 3 comments visible only to you until Submit Review (click to submit).`,
      changeRequestId: CR,
    });
    const two = startReview(one, CR + 1, NOW);
    assert.equal(pendingStatus(two, CR + 1)!.text, '$(comment-draft) 0 pending');
    assert.equal(pendingStatus(two, undefined)!.changeRequestId, null);
    assert.match(pendingStatus(two, undefined)!.tooltip, /on 2 change requests \(3 comments\)/);
    assert.equal(pendingStatus({}, CR), null);
  });

  it('reads what storage holds, dropping what is malformed, and keys it per service and user', () => {
    const all = reviewWithDrafts();
    assert.deepEqual(readPendingReviews(JSON.parse(JSON.stringify(all))), all);
    assert.deepEqual(
      readPendingReviews({ 7: { changeRequestId: 7, drafts: [{ key: 1 }, all[CR].drafts[0]] }, 8: 'x', 9: null }),
      {
        7: { changeRequestId: 7, started: new Date(0).toISOString(), drafts: [all[CR].drafts[0]], submitting: null },
      },
    );
    assert.deepEqual(readPendingReviews(undefined), {});
    assert.notEqual(pendingStorageKey('http://a', 1), pendingStorageKey('http://a', 2));
  });

  it("posts new threads first, then replies (a pending root's reply under its posted id), each with its own key, then the decision", async () => {
    const svc = fakeService();
    const mem = memoryStore(reviewWithDrafts());
    assert.deepEqual(
      postingOrder(mem.all[CR].drafts).map((d) => d.key),
      ['k-root', 'k-reply-to-draft', 'k-reply'],
    );
    const result = await postPendingReview(svc.client, mem.store, CR, {
      decision: 'approve',
      comment: 'Fine.',
      reviewId: null,
    });
    assert.deepEqual(
      svc.calls.map((c) => [c.what, c.key]),
      [
        ['comment', 'k-root'],
        ['comment', 'k-reply-to-draft'],
        ['comment', 'k-reply'],
        ['review', svc.calls[3].key],
      ],
    );
    assert.ok(svc.calls[3].key && !svc.calls[3].key.startsWith('k-'));
    assert.deepEqual(svc.calls[0].body, {
      change_request: CR,
      change_diff: 11,
      text: 'Why R2?',
      parent: null,
      attribute: 'rack',
    });
    assert.deepEqual(svc.calls[1].body, {
      change_request: CR,
      change_diff: 11,
      text: 'Also the serial.',
      parent: result.posted[0].id,
      attribute: undefined,
    });
    assert.deepEqual(svc.calls[3].body, { change_request: CR, decision: 'approve', comment: 'Fine.' });
    assert.equal(result.posted.length, 3);
    assert.equal(result.review?.decision, 'approve');
    assert.deepEqual(mem.all, {}, 'nothing is pending any more');
  });

  it('stops at a failure, keeps what was not posted, and a retry posts nothing twice, even after a lost answer', async () => {
    const svc = fakeService();
    const mem = memoryStore(reviewWithDrafts());
    svc.failAt(2);
    await assert.rejects(
      postPendingReview(svc.client, mem.store, CR, { decision: 'reject', comment: 'Use R3.', reviewId: null }),
      (e: unknown) => {
        assert.ok(e instanceof PendingReviewError);
        assert.equal(e.posted, 1);
        assert.equal(e.remaining, 2);
        assert.equal(e.failedDraft?.key, 'k-reply-to-draft');
        return true;
      },
    );
    // The root is posted and gone; its reply now points at the posted root.
    assert.deepEqual(
      mem.all[CR].drafts.map((d) => [d.key, d.parent, d.parentDraft]),
      [
        ['k-reply-to-draft', 100, null],
        ['k-reply', 55, null],
      ],
    );
    const reviewKey = mem.all[CR].submitting?.key;
    assert.ok(reviewKey);

    // The next attempt: the service does the work but the answer to the review is lost.
    svc.heal();
    svc.failAt(5, true);
    await assert.rejects(
      postPendingReview(svc.client, mem.store, CR, { decision: 'reject', comment: 'Use R3.', reviewId: null }),
      PendingReviewError,
    );
    assert.deepEqual(mem.all[CR].drafts, []);
    assert.equal(mem.all[CR].submitting?.key, reviewKey, 'the same decision keeps its key');

    svc.heal();
    const result = await postPendingReview(svc.client, mem.store, CR, {
      decision: 'reject',
      comment: 'Use R3.',
      reviewId: null,
    });
    assert.equal(result.review?.decision, 'reject');
    assert.deepEqual(svc.effects, ['comment', 'comment', 'comment', 'review'], 'each posted once');
    assert.deepEqual(mem.all, {});
  });

  it('gives a changed decision a new key, updates an existing review, and may post the comments alone', async () => {
    const svc = fakeService();
    const mem = memoryStore(startReview({}, CR, NOW));
    await mem.store.save({ ...mem.all[CR], submitting: { decision: 'approve', comment: '', key: 'old' } });
    await postPendingReview(svc.client, mem.store, CR, { decision: 'comment', comment: 'Looks fine', reviewId: 31 });
    assert.deepEqual(
      svc.calls.map((c) => c.what),
      ['review-update'],
    );
    assert.notEqual(svc.calls[0].key, 'old');

    const only = fakeService();
    const mem2 = memoryStore(reviewWithDrafts());
    const result = await postPendingReview(only.client, mem2.store, CR, null);
    assert.equal(result.review, null);
    assert.deepEqual(
      only.calls.map((c) => c.what),
      ['comment', 'comment', 'comment'],
    );
    assert.deepEqual(mem2.all, {});
  });

  it('refuses Request changes without a comment, and a review that is not pending, before posting anything', async () => {
    const svc = fakeService();
    const mem = memoryStore(reviewWithDrafts());
    await assert.rejects(
      postPendingReview(svc.client, mem.store, CR, { decision: 'reject', comment: '  ', reviewId: null }),
      /needs a comment/,
    );
    await assert.rejects(
      postPendingReview(svc.client, memoryStore({}).store, CR, { decision: 'approve', comment: '', reviewId: null }),
      /no pending review/,
    );
    assert.deepEqual(svc.calls, []);
  });
});
