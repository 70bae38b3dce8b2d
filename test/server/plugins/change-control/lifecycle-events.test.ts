import assert from 'node:assert/strict';
import { Receiver } from '../../../support/receiver';
import { startService, withService, type TestService } from '../../../support/service';
import {
  act,
  actor,
  CHECKS,
  created,
  detail,
  expectStatus,
  grant,
  ok,
  REQUESTS,
  review,
  REVIEWER,
  REVIEWS,
} from './fixtures';
import {
  eventsOf,
  gateCast,
  hookLifecycleEvents,
  LIFECYCLE_EVENT_NAMES,
  mergeBranch,
  outboxPayloads,
  scenario,
  type GateCast,
} from './gate-support';

describe('change control: lifecycle events (Events 1, 2, 5; contract 3.5 and 4.5)', () => {
  let svc: TestService;
  let cast: GateCast;
  let receiver: Receiver;
  before(async () => {
    receiver = await Receiver.start();
    svc = await startService();
    cast = await gateCast(svc);
    await grant(
      svc,
      { users: [cast.author.id] },
      { object_types: ['change_control.changerequest'], actions: ['abandon', 'reopen'] },
    );
    await grant(svc, { users: [cast.author.id] }, { object_types: ['change_control.review'], actions: ['add'] });
    await hookLifecycleEvents(svc, receiver.url());
  });
  after(async () => {
    await svc.close();
    await receiver.close();
  });

  it('Events 1: the six lifecycle events are event types event rules attach to; an unknown one is refused (400)', async () => {
    const w = await ok(svc.admin.get('/api/extras/webhooks/'));
    for (const name of LIFECYCLE_EVENT_NAMES) {
      const r = await svc.admin.post('/api/extras/event-rules/', {
        name: `only-${name}`,
        object_types: ['change_control.changerequest'],
        event_types: [name],
        action_type: 'webhook',
        action_object_id: w.results[0].id,
        enabled: false,
      });
      expectStatus(r, 201, name);
      expectStatus(await svc.admin.delete(`/api/extras/event-rules/${r.body.id}/`), 204);
    }
    const bad = await svc.admin.post('/api/extras/event-rules/', {
      name: 'bad',
      object_types: [],
      event_types: ['change_request_merged'],
      action_type: 'webhook',
      action_object_id: w.results[0].id,
    });
    expectStatus(bad, 400);
  });

  it('Events 1: submit fires change_request_submitted and change_request_review_requested, an approval review_submitted and change_request_approved, the merge change_request_completed: each once, delivered to the receiver', async () => {
    const before = receiver.requests.length;
    const s = await scenario(cast, 'journey', { upTo: 'draft' });
    assert.deepEqual(await eventsOf(svc, s.cr.id), [], 'creating a draft fires nothing');
    await ok(act(cast.author.client, s.cr.id, 'submit'));
    assert.deepEqual(await eventsOf(svc, s.cr.id), ['change_request_submitted', 'change_request_review_requested']);
    expectStatus(await review(cast.reviewer.client, s.cr.id, 'approve'), 201);
    assert.deepEqual((await eventsOf(svc, s.cr.id)).slice(2), ['review_submitted', 'change_request_approved']);
    await ok(mergeBranch(cast.author.client, s.branch.id));
    const all = await eventsOf(svc, s.cr.id);
    assert.deepEqual(all, [
      'change_request_submitted',
      'change_request_review_requested',
      'review_submitted',
      'change_request_approved',
      'change_request_completed',
    ]);

    const delivered = await receiver.waitFor(before + 5);
    const received = delivered
      .slice(before)
      .map((r) => JSON.parse(r.body))
      .filter((p) => p.data.id === s.cr.id)
      .map((p) => p.event);
    assert.deepEqual([...received].sort(), [...all].sort(), 'the receiver got each once');
  });

  it('Events 1: a rejection fires review_submitted and change_request_rejected; the reviewer changing their mind fires review_submitted and change_request_approved', async () => {
    const s = await scenario(cast, 'rejecting', { upTo: 'needs-review' });
    const start = (await eventsOf(svc, s.cr.id)).length;
    const rejected = await review(cast.reviewer.client, s.cr.id, 'reject', 'rename the device');
    expectStatus(rejected, 201);
    assert.equal((await detail(cast.author.client, s.cr.id)).status, 'rejected');
    assert.deepEqual((await eventsOf(svc, s.cr.id)).slice(start), ['review_submitted', 'change_request_rejected']);
    await ok(cast.reviewer.client.patch(`${REVIEWS}${rejected.body.id}/`, { decision: 'approve' }));
    assert.deepEqual((await eventsOf(svc, s.cr.id)).slice(start + 2), ['review_submitted', 'change_request_approved']);
  });

  it('Contract 4.5: no event without a real transition: edits, re-runs and comment reviews move nothing; review_submitted fires once per review write', async () => {
    const s = await scenario(cast, 'quiet', { upTo: 'approved' });
    const start = (await eventsOf(svc, s.cr.id)).length;
    await ok(cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { title: 'Quiet change', priority: 'high' }));
    await ok(svc.admin.post(`${REQUESTS}${s.cr.id}/run-checks/`, {}));
    assert.deepEqual(
      (await eventsOf(svc, s.cr.id)).slice(start),
      [],
      'no lifecycle event for a field edit or a re-run',
    );

    const other = await actor(svc, 'commenter', REVIEWER);
    expectStatus(await review(other.client, s.cr.id, 'comment', 'looks fine to me'), 201);
    assert.deepEqual(
      (await eventsOf(svc, s.cr.id)).slice(start),
      ['review_submitted'],
      'a comment review changes no status',
    );
    assert.equal((await detail(cast.author.client, s.cr.id)).status, 'approved');
  });

  it('Contract 4.5: return-to-draft, abandon and reopen fire no lifecycle event; resubmitting fires change_request_submitted again with the derived transition', async () => {
    const s = await scenario(cast, 'round-trip', { upTo: 'approved' });
    const start = (await eventsOf(svc, s.cr.id)).length;
    await ok(act(cast.author.client, s.cr.id, 'return-to-draft'));
    await ok(act(cast.author.client, s.cr.id, 'abandon'));
    await ok(act(cast.author.client, s.cr.id, 'reopen'));
    assert.deepEqual((await eventsOf(svc, s.cr.id)).slice(start), []);
    const resubmitted = await ok(act(cast.author.client, s.cr.id, 'submit'));
    // Reopen keeps the reviews, so the derived state after submit depends on them; the events follow it.
    const expected = resubmitted.status === 'approved' ? 'change_request_approved' : 'change_request_review_requested';
    assert.deepEqual((await eventsOf(svc, s.cr.id)).slice(start), ['change_request_submitted', expected]);
  });

  it('Contract 4.5: a refused action (409) fires nothing', async () => {
    const s = await scenario(cast, 'refused', { upTo: 'needs-review' });
    const start = (await eventsOf(svc, s.cr.id)).length;
    expectStatus(await act(cast.author.client, s.cr.id, 'submit'), 409);
    expectStatus(await act(cast.author.client, s.cr.id, 'reopen'), 409);
    expectStatus(await review(cast.author.client, s.cr.id, 'approve'), 400);
    assert.deepEqual((await eventsOf(svc, s.cr.id)).slice(start), []);
  });

  it('Contract 4.5: an approval dropped by a branch edit moves the request back under review and fires change_request_review_requested once', async () => {
    const s = await scenario(cast, 'stale', { upTo: 'approved' });
    const start = (await eventsOf(svc, s.cr.id)).length;
    expectStatus(await s.inBranch.post('/api/dcim/devices/', { name: 'stale-second' }), 201);
    assert.equal((await detail(cast.author.client, s.cr.id)).status, 'needs-review');
    assert.deepEqual((await eventsOf(svc, s.cr.id)).slice(start), ['change_request_review_requested']);
  });

  it('Events 2, Versioning 5, contract 3.5: the payload is {event, timestamp, object_type, data, snapshots, request{id, user}} with no top-level username or request_id', async () => {
    svc.clock.set('2026-11-01T09:30:00Z');
    try {
      const s = await scenario(cast, 'payload', { upTo: 'draft', fields: { ref: 'CHG-77' } });
      const countBefore = (await outboxPayloads(svc)).length;
      const submitted = await ok(act(cast.author.client, s.cr.id, 'submit'));
      const payloads = (await outboxPayloads(svc)).slice(countBefore);
      const submittedEvent = payloads.find((p) => p.event === 'change_request_submitted');
      assert.ok(submittedEvent, JSON.stringify(payloads.map((p) => p.event)));
      const p = submittedEvent;
      assert.deepEqual(Object.keys(p).sort(), ['data', 'event', 'object_type', 'request', 'snapshots', 'timestamp']);
      assert.equal(p.username, undefined);
      assert.equal(p.request_id, undefined);
      assert.equal(p.object_type, 'change_control.changerequest');
      assert.equal(p.timestamp, '2026-11-01T09:30:00.000Z');
      assert.deepEqual(Object.keys(p.request).sort(), ['id', 'user']);
      assert.equal(p.request.user, 'author');
      assert.deepEqual(Object.keys(p.snapshots).sort(), ['postchange', 'prechange']);
      assert.equal(p.snapshots.prechange.status, 'draft');
      assert.equal(p.snapshots.postchange.status, 'needs-review');
      // data is the change request as the API shows it.
      assert.equal(p.data.id, s.cr.id);
      assert.equal(p.data.ref, 'CHG-77');
      assert.equal(p.data.status, 'needs-review');
      assert.equal(p.data.branch_name, 'payload');
      assert.equal(p.data.url, submitted.url);
      for (const field of [
        'approved',
        'ready_to_merge',
        'merge_blocked_reason',
        'has_conflicts',
        'branch',
        'branch_deleted',
        'scheduled_start',
      ]) {
        assert.ok(field in p.data, `data.${field}`);
      }

      // request.id ties the event to the changelog entry of the same API request.
      const changes = await ok(
        svc.admin.get(
          `/api/core/object-changes/?changed_object_type=change_control.changerequest&changed_object_id=${s.cr.id}&action=update`,
        ),
      );
      const ids = changes.results.map((c: { request_id: string }) => c.request_id);
      assert.ok(ids.includes(p.request.id), `${p.request.id} among ${ids.join(', ')}`);
      const reviewRequested = payloads.find((x) => x.event === 'change_request_review_requested');
      assert.equal(reviewRequested.request.id, p.request.id, 'both events of one submit share the request id');

      // The receiver gets the same body.
      const arrived = await waitForBody(
        receiver,
        (body) => body.event === 'change_request_submitted' && body.data.id === s.cr.id,
      );
      assert.deepEqual(arrived, p);
    } finally {
      svc.clock.set('2026-11-01T09:00:00Z');
    }
  });

  it('Events 2: review_submitted carries the reviewer as request.user and the change request as data; change_request_completed the merger', async () => {
    const s = await scenario(cast, 'who', { upTo: 'needs-review' });
    const countBefore = (await outboxPayloads(svc)).length;
    expectStatus(await review(cast.reviewer.client, s.cr.id, 'approve'), 201);
    const merger = await actor(svc, 'merger', [
      { object_types: ['branching.branch'], actions: ['view', 'merge', 'change'] },
    ]);
    await ok(mergeBranch(merger.client, s.branch.id));
    const payloads = (await outboxPayloads(svc)).slice(countBefore).filter((p) => p.data.id === s.cr.id);
    const submittedReview = payloads.find((p) => p.event === 'review_submitted')!;
    assert.equal(submittedReview.request.user, 'reviewer');
    assert.equal(submittedReview.object_type, 'change_control.changerequest');
    const completed = payloads.find((p) => p.event === 'change_request_completed')!;
    assert.equal(completed.request.user, 'merger');
    assert.equal(completed.data.status, 'completed');
    assert.equal(completed.snapshots.prechange.status, 'approved');
    assert.equal(completed.snapshots.postchange.status, 'completed');
  });

  it('Events 1: event-rule conditions apply to lifecycle events (only high-priority requests reach a second hook)', async () => {
    const second = await Receiver.start();
    try {
      const w = await created(
        svc.admin.post('/api/extras/webhooks/', { name: 'high-only', payload_url: second.url('/high') }),
      );
      expectStatus(
        await svc.admin.post('/api/extras/event-rules/', {
          name: 'high-only',
          object_types: ['change_control.changerequest'],
          event_types: ['change_request_submitted'],
          conditions: { attr: 'priority', op: 'eq', value: 'high' },
          action_type: 'webhook',
          action_object_id: w.id,
        }),
        201,
      );
      const low = await scenario(cast, 'cond-low', { upTo: 'needs-review', fields: { priority: 'low' } });
      const high = await scenario(cast, 'cond-high', { upTo: 'needs-review', fields: { priority: 'high' } });
      const [only] = await second.waitFor(1);
      assert.equal(JSON.parse(only!.body).data.id, high.cr.id);
      const queued = (await outboxPayloads(svc)).filter(
        (p) => p.event === 'change_request_submitted' && p.data.id === low.cr.id,
      );
      assert.equal(queued.length, 1, 'the low one went to the first hook only');
      await svc.admin.delete(`/api/extras/webhooks/${w.id}/`);
    } finally {
      await second.close();
    }
  });

  it('Contract 4.5: a pipeline report that clears the last gate fires no lifecycle event by itself (only status transitions do)', async () => {
    await withService(
      startService({ config: { change_control: { required_external_checks: ['ci/build'] } } }),
      async (s2) => {
        const c2 = await gateCast(s2);
        await hookLifecycleEvents(s2, receiver.url());
        const s = await scenario(c2, 'report-quiet', { upTo: 'approved' });
        const start = (await eventsOf(s2, s.cr.id)).length;
        const ci = (await ok(s2.admin.get(`${CHECKS}?change_request_id=${s.cr.id}&name=ci/build`))).results[0];
        await ok(s2.admin.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
        assert.deepEqual((await eventsOf(s2, s.cr.id)).slice(start), []);
        assert.equal((await detail(c2.author.client, s.cr.id)).ready_to_merge, true);
      },
    );
  });
});

/** The first delivered body matching `match`, waiting for more deliveries while none does. */
async function waitForBody(receiver: Receiver, match: (body: any) => boolean): Promise<any> {
  for (;;) {
    const hit = receiver.requests.map((r) => JSON.parse(r.body)).find(match);
    if (hit) return hit;
    await receiver.waitFor(receiver.requests.length + 1, 5000);
  }
}
