import assert from 'node:assert/strict';
import { drainMergeQueue } from '../../../../server/plugins/change-control/gate/auto-merge';
import { settled } from '../../../support/quiet';
import { claimQueue, releaseQueue } from '../../../../server/plugins/change-control/gate/queue-repository';
import { createCtx } from '../../../../server/host';
import { suiteService } from '../../../support/service';
import {
  act,
  actor,
  branch,
  CC,
  ccDb,
  created,
  detail,
  DEVICES,
  expectStatus,
  ok,
  openRequest,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  VIEW_ALL,
} from './fixtures';
import { branchOf, MERGER, mergeJobs, type Scenario } from './gate-support';

const QUEUE = `${CC}merge-queue/`;

describe('change control: the merge queue', () => {
  const svc = suiteService();
  let author: Awaited<ReturnType<typeof actor>>;
  let reviewer: Awaited<ReturnType<typeof actor>>;
  let shared: any;
  before(async () => {
    author = await actor(svc, 'queue-author', MERGER);
    reviewer = await actor(svc, 'queue-reviewer', REVIEWER);
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      checks: ['mergeable'],
      rules: [{ name: 'netops', users: [reviewer.id] }],
    });
    shared = await device(svc.admin, { name: 'shared-core', status: 'active' });
  });

  async function device(client: typeof svc.admin, attrs: Record<string, unknown>): Promise<any> {
    return created(client.post(DEVICES, attrs));
  }

  /** A request set to merge automatically, approved: it joins the queue. `edit` changes its branch. */
  async function readyRequest(
    name: string,
    edit: (inBranch: typeof svc.admin) => Promise<unknown>,
    ref = '',
  ): Promise<Scenario> {
    const work = await branch(author.client, name);
    await edit(work.inBranch);
    const cr = await openRequest(author.client, work.branch.id, { auto_merge: true, ref });
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    return { ...work, cr: await detail(author.client, cr.id) };
  }

  /** Another service instance holds the queue: nothing here runs it until the claim is given back. */
  async function holdQueueElsewhere(): Promise<void> {
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: '' });
    assert.equal(
      await claimQueue(
        ctx,
        'other-instance',
        svc.clock.now().toISOString(),
        new Date(svc.clock.now().getTime() + 60_000).toISOString(),
      ),
      true,
    );
  }

  async function releaseElsewhere(): Promise<void> {
    await releaseQueue(createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: '' }), 'other-instance');
  }

  it('Merge queue: ready requests set to merge automatically wait in a visible order (queue_position, merge-queue/), then merge one at a time, re-validated after each merge: one that would now conflict leaves the queue saying why', async () => {
    await holdQueueElsewhere();
    const first = await readyRequest('q-first', (b) => b.patch(`${DEVICES}${shared.id}/`, { status: 'planned' }));
    const second = await readyRequest(
      'q-second',
      (b) => b.patch(`${DEVICES}${shared.id}/`, { status: 'offline' }),
      'HIDDEN',
    );
    const third = await readyRequest('q-third', (b) => device(b, { name: 'q-third-dev' }));
    for (const s of [first, second, third])
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready', 'nothing merges while the queue is held');

    assert.deepEqual(
      [first, second, third].map((s) => s.cr.queue_position),
      [1, 2, 3],
    );
    const listed = await ok(
      author.client.get(`${REQUESTS}?id=${first.cr.id}&id=${second.cr.id}&id=${third.cr.id}&ordering=id`),
    );
    assert.deepEqual(
      listed.results.map((r: any) => r.queue_position),
      [1, 2, 3],
    );
    const queue = await ok(author.client.get(QUEUE));
    assert.deepEqual(
      queue.results.map((e: any) => [e.position, e.id, e.state]),
      [
        [1, first.cr.id, 'pending'],
        [2, second.cr.id, 'pending'],
        [3, third.cr.id, 'pending'],
      ],
    );

    // A caller sees only the requests it may view; positions still count the whole queue.
    const narrow = await actor(svc, 'queue-narrow', [
      ...VIEW_ALL.filter((g) => !g.object_types.includes('change_control.changerequest')),
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: '' } },
    ]);
    const seen = await ok(narrow.client.get(QUEUE));
    assert.deepEqual(
      seen.results.map((e: any) => [e.position, e.id]),
      [
        [1, first.cr.id],
        [3, third.cr.id],
      ],
    );
    assert.equal(seen.count, 2);
    assert.deepEqual((await ok(author.client.get(`${QUEUE}?ordering=-position&brief=true&limit=1`))).results, [
      { id: third.cr.id, url: third.cr.url, display: third.cr.display },
    ]);
    assert.deepEqual((await ok(author.client.get(`${QUEUE}?q=q-sec&fields=position`))).results, [{ position: 2 }]);
    expectStatus(await narrow.client.get(`${REQUESTS}${second.cr.id}/`), 404);

    await releaseElsewhere();
    await drainMergeQueue(svc.host, 'test-drain', svc.url);
    assert.equal((await branchOf(svc, first.branch.id)).status, 'merged');
    assert.equal(
      (await branchOf(svc, second.branch.id)).status,
      'ready',
      'the merge before it made it conflict: it did not go',
    );
    assert.equal((await branchOf(svc, third.branch.id)).status, 'merged');
    const [job] = await mergeJobs(svc, second.branch.id);
    assert.equal(job!.state, 'failed');
    assert.match(
      job!.detail,
      /^left the merge queue: .*Required check "Merges cleanly" failed \(1 object would conflict or fail to apply\)\. The branch conflicts with main \(shared-core: status\)/,
    );
    const after = await detail(author.client, second.cr.id);
    assert.equal(after.queue_position, null);
    assert.equal((await detail(author.client, first.cr.id)).queue_position, null);
    assert.deepEqual((await ok(author.client.get(QUEUE))).results, []);
  });

  it('merge-queue/: takes limit, offset, q, ordering, brief and fields; an unknown parameter or a malformed value is 400 naming it; anonymous callers are refused', async () => {
    expectStatus(await author.client.get(`${QUEUE}?limit=5&offset=0&q=x&ordering=position&brief=true&fields=id`), 200);
    const unknown = await author.client.get(`${QUEUE}?position=1`);
    expectStatus(unknown, 400);
    assert.ok(Array.isArray(unknown.body.position));
    const bad = await author.client.get(`${QUEUE}?limit=abc`);
    expectStatus(bad, 400);
    assert.ok(Array.isArray(bad.body.limit));
    expectStatus(await svc.anonymous.get(QUEUE), 403);
  });

  it('The queue head is claimed in the database: one holder at a time; an expired claim can be taken over; only the holder gives it back', async () => {
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: '' });
    const t0 = '2026-11-01T09:00:00.000Z';
    assert.equal(await claimQueue(ctx, 'a', t0, '2026-11-01T09:05:00.000Z'), true);
    assert.equal(await claimQueue(ctx, 'b', t0, '2026-11-01T09:05:00.000Z'), false);
    assert.equal(await claimQueue(ctx, 'a', t0, '2026-11-01T09:06:00.000Z'), true, 'the holder renews');
    await releaseQueue(ctx, 'b');
    assert.equal(await claimQueue(ctx, 'b', '2026-11-01T09:05:59.000Z', '2026-11-01T09:10:00.000Z'), false);
    assert.equal(
      await claimQueue(ctx, 'b', '2026-11-01T09:06:01.000Z', '2026-11-01T09:10:00.000Z'),
      true,
      'a lapsed claim is taken over',
    );
    await releaseQueue(ctx, 'b');
    const row = await ccDb(svc).selectFrom('cc_merge_queue_claim').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.holder, null);
  });

  it('A job left running by a holder whose claim lapsed is failed as interrupted by the next holder, and the queue goes on', async () => {
    svc.clock.set('2026-11-01T09:00:00Z');
    const crashed = await readyRequest('q-crashed', (b) => device(b, { name: 'q-crashed-dev' }));
    await holdQueueElsewhere();
    const waiting = await readyRequest('q-waiting', (b) => device(b, { name: 'q-waiting-dev' }));
    // The other instance took q-waiting's job and stopped while merging it.
    await ccDb(svc)
      .updateTable('cc_merge_jobs')
      .set({ state: 'running' })
      .where('change_request_id', '=', waiting.cr.id)
      .execute();
    const next = await readyRequest('q-next', (b) => device(b, { name: 'q-next-dev' }));
    assert.equal((await detail(author.client, next.cr.id)).queue_position, 2);
    await drainMergeQueue(svc.host, 'test-drain', svc.url);
    assert.equal((await branchOf(svc, next.branch.id)).status, 'ready', 'the claim still holds');

    svc.clock.set('2026-11-01T09:02:00Z');
    await drainMergeQueue(svc.host, 'test-drain', svc.url);
    assert.equal((await branchOf(svc, next.branch.id)).status, 'merged', 'the lapsed claim was taken over');
    const [job] = await mergeJobs(svc, waiting.branch.id);
    assert.equal(job!.state, 'failed');
    assert.match(job!.detail, /^interrupted/);
    assert.equal((await branchOf(svc, crashed.branch.id)).status, 'merged');
    svc.clock.set('2026-11-01T09:00:00Z');
  });

  it('A freeze holds the queue without emptying it: a queued request keeps its place, merge-queue/ says it waits for the freeze (waiting_for_freeze) until when, and it merges when the gate clock sees the freeze end', async () => {
    svc.clock.set('2026-11-01T09:00:00Z');
    await holdQueueElsewhere();
    const held = await readyRequest('q-frozen', (b) => device(b, { name: 'q-frozen-dev' }));
    assert.equal(held.cr.queue_position, 1);
    const freeze = await created(
      svc.admin.post(`${CC}freezes/`, {
        name: 'Queue freeze',
        start: '2026-11-01T08:00:00Z',
        end: '2026-11-01T10:00:00Z',
      }),
    );
    await releaseElsewhere();
    await drainMergeQueue(svc.host, 'test-drain', svc.url);
    assert.equal((await branchOf(svc, held.branch.id)).status, 'ready', 'nothing merges while frozen');
    const [job] = await mergeJobs(svc, held.branch.id);
    assert.equal(job!.state, 'pending', 'it did not leave the queue');
    const entry = (await ok(author.client.get(QUEUE))).results[0];
    assert.equal(entry.id, held.cr.id);
    assert.deepEqual(entry.waiting_for_freeze, {
      id: freeze.id,
      name: 'Queue freeze',
      end: '2026-11-01T10:00:00.000Z',
    });
    const frozen = await detail(author.client, held.cr.id);
    assert.equal(frozen.queue_position, 1);
    assert.equal(frozen.blocked_until, '2026-11-01T10:00:00.000Z');

    svc.clock.set('2026-11-01T10:00:00Z');
    await settled(svc);
    assert.equal((await branchOf(svc, held.branch.id)).status, 'merged', 'the freeze ended: the queue went on');
    assert.deepEqual((await ok(author.client.get(QUEUE))).results, []);
    expectStatus(await svc.admin.delete(`${CC}freezes/${freeze.id}/`), 204);
    svc.clock.set('2026-11-01T09:00:00Z');
  });

  it('A request completed by an override leaves the merge queue: queue_position null, absent from merge-queue/, its job done saying so', async () => {
    svc.clock.set('2026-11-01T09:00:00Z');
    const overrider = await actor(svc, 'queue-overrider', [
      ...MERGER,
      { object_types: ['change_control.gate'], actions: ['override'] },
    ]);
    await holdQueueElsewhere();
    const queued = await readyRequest('q-overridden', (b) => device(b, { name: 'q-overridden-dev' }));
    assert.equal(queued.cr.queue_position, 1);
    const freeze = await created(
      svc.admin.post(`${CC}freezes/`, {
        name: 'Override freeze',
        start: '2026-11-01T08:00:00Z',
        end: '2026-11-02T08:00:00Z',
      }),
    );
    const done = await ok(
      overrider.client.post(`${REQUESTS}${queued.cr.id}/override/`, { reason: 'Outage fix during the freeze' }),
    );
    assert.equal(done.status, 'completed');
    assert.equal(done.queue_position, null);
    assert.equal((await detail(author.client, queued.cr.id)).queue_position, null);
    assert.deepEqual((await ok(author.client.get(QUEUE))).results, []);
    const [job] = await mergeJobs(svc, queued.branch.id);
    assert.equal(job!.state, 'completed');
    assert.match(job!.detail, /merged by an override/);
    await releaseElsewhere();
    expectStatus(await svc.admin.delete(`${CC}freezes/${freeze.id}/`), 204);
  });
});
