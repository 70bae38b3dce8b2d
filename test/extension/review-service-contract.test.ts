// Reviewing in the editor against the service's side of its contract: a comment's `attribute`
// (validated, inherited by replies, a list filter), its `outdated` mark, the Idempotency-Key
// replay, and the event stream.
import assert from 'node:assert/strict';
import type { ApiClient } from '../../extension/core/api-client';
import { ApiError } from '../../extension/core/api-error';
import { LiveStream } from '../../extension/core/live-stream';
import {
  addDraft,
  discardReview,
  postPendingReview,
  startReview,
  type PendingReview,
  type PendingReviews,
} from '../../extension/core/pending-review';
import type { StreamEvent } from '../../contract/api/change-control';
import type { TestService } from '../support/service';
import { API, extensionClient, reportCheck, seededServicePerTest, type World } from './seed';
import { until } from '../support/until';

describe('extension: the review contract of the service (attribute, outdated, Idempotency-Key, stream)', () => {
  const seeded = seededServicePerTest();
  let svc: TestService;
  let world: World;
  let bob: ApiClient;
  let alice: ApiClient;
  let crId: number;
  beforeEach(() => {
    ({ world } = seeded);
    svc = world.svc;
    bob = extensionClient(world, world.reviewer);
    alice = extensionClient(world, world.author);
    crId = world.changeRequest.id;
  });

  it("stores a thread's attribute, gives it to replies, filters by it, and refuses one the change does not have", async () => {
    const root = await bob.createComment({
      change_request: crId,
      change_diff: world.changes.sw1,
      text: 'Why R2?',
      attribute: 'rack',
    });
    assert.equal(root.attribute, 'rack');
    const reply = await alice.createComment({
      change_request: crId,
      change_diff: world.changes.sw1,
      text: 'Room.',
      parent: root.id,
    });
    assert.equal(reply.attribute, 'rack');
    const whole = await bob.createComment({
      change_request: crId,
      change_diff: world.changes.sw1,
      text: 'Overall fine.',
    });
    assert.equal(whole.attribute, null);
    const filtered = await svc.as(world.reviewer.token).get(`${API.comments}?change_request_id=${crId}&attribute=rack`);
    assert.deepEqual(filtered.body.results.map((c: { id: number }) => c.id).sort(), [root.id, reply.id].sort());
    await assert.rejects(
      bob.createComment({
        change_request: crId,
        change_diff: world.changes.sw1,
        text: 'x',
        attribute: 'no_such_field',
      }),
      (e: unknown) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.status, 400);
        assert.ok(e.fields.attribute?.length);
        return true;
      },
    );
  });

  it('marks a thread outdated once its attribute no longer differs, and keeps it', async () => {
    const root = await bob.createComment({
      change_request: crId,
      change_diff: world.changes.sw1,
      text: 'Why R2?',
      attribute: 'rack',
    });
    const inBranch = world.author.client.inBranch(world.branch.schemaId);
    const sw1 = (await bob.listChanges(world.branch.id)).find((c) => c.id === world.changes.sw1)!;
    await inBranch.patch(`${API.devices}${sw1.object_id}/`, { rack: 'R1' });
    const [again] = (await bob.listComments(crId)).filter((c) => c.id === root.id);
    assert.equal(again.outdated, true);
  });

  it('replays the first answer for a repeated Idempotency-Key, so a retried pending review posts nothing twice', async () => {
    const first = await bob.createComment(
      { change_request: crId, change_diff: world.changes.sw1, text: 'Once.' },
      { idempotencyKey: 'draft-1' },
    );
    const second = await bob.createComment(
      { change_request: crId, change_diff: world.changes.sw1, text: 'Once.' },
      { idempotencyKey: 'draft-1' },
    );
    assert.equal(second.id, first.id);
    assert.equal((await bob.listComments(crId)).length, 1);
    await assert.rejects(
      bob.createComment(
        { change_request: crId, change_diff: world.changes.sw1, text: 'Other.' },
        { idempotencyKey: 'draft-1' },
      ),
      (e: unknown) => e instanceof ApiError && e.status === 422,
    );

    // A pending review whose first answer is lost on the way back: the retry replays it.
    let lose = true;
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (lose && init?.method === 'POST') {
        lose = false;
        throw new TypeError('fetch failed');
      }
      return res;
    };
    const flaky = extensionClient(world, world.reviewer, { fetch: lossy });
    let all: PendingReviews = startReview({}, crId, new Date());
    all = addDraft(
      all,
      crId,
      { changeDiff: world.changes.sw2, attribute: 'rack', parent: null, parentDraft: null, text: 'sw2 in R2?' },
      new Date(),
    ).all;
    const store = {
      load: () => all[crId] as PendingReview | undefined,
      save: async (r: PendingReview | undefined) => void (all = r ? { ...all, [crId]: r } : discardReview(all, crId)),
    };
    await assert.rejects(postPendingReview(flaky, store, crId, { decision: 'approve', comment: '', reviewId: null }));
    await postPendingReview(flaky, store, crId, { decision: 'approve', comment: '', reviewId: null });
    const comments = await bob.listComments(crId);
    assert.equal(comments.filter((c) => c.text === 'sw2 in R2?').length, 1);
    assert.equal(comments.find((c) => c.text === 'sw2 in R2?')?.attribute, 'rack');
  });

  it('streams comment and check events of the requests the caller may see, resumable after the last one', async () => {
    const events: StreamEvent[] = [];
    let resets = 0;
    const stream = new LiveStream({
      open: (lastEventId, signal) => bob.openStream({ lastEventId, signal }),
      onEvents: (batch) => events.push(...batch),
      onReset: () => (resets += 1),
      onPoll: () => undefined,
      batchMs: 10,
    });
    stream.start();
    try {
      await until('the stream open', () => stream.state === 'open');
      await alice.createComment({ change_request: crId, change_diff: world.changes.sw1, text: 'Live?' });
      await reportCheck(world, 'success', 'build passed');
      await until(
        'comment_created and check_updated',
        () => events.some((e) => e.event === 'comment_created') && events.some((e) => e.event === 'check_updated'),
      );
      assert.ok(events.every((e) => e.change_request === crId || e.change_request === world.draft.id));
      const last = stream.resumeId;
      assert.ok(last);
      // Resuming after the last event sends nothing old again.
      stream.stop();
      const seen = events.length;
      await alice.createComment({ change_request: crId, change_diff: world.changes.sw1, text: 'While away.' });
      stream.start();
      await until('the missed event', () => events.length > seen);
      assert.equal(events.filter((e) => e.event === 'comment_created').length, 2);
      assert.equal(resets, 0);
    } finally {
      stream.stop();
    }
  });
});
