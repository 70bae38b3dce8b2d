import assert from 'node:assert/strict';
import { webhookDeliveryWorker } from '../../../../server/host/events/webhook-delivery';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { gateClock, MAX_WAIT_MS } from '../../../../server/plugins/change-control/gate/gate-clock';
import {
  announcedThrough,
  claimAnnouncing,
} from '../../../../server/plugins/change-control/gate/gate-clock-repository';
import { eachTestService, instancesForEachTest, type TestService } from '../../../support/service';
import { SseStream, type SseEvent } from '../../../support/sse';
import { settled, statementsOf } from '../../../support/quiet';
import { actor, CC, ccDb, created, detail, ok, policy, REQUESTS } from './fixtures';
import { gateCast, scenario, type GateCast } from './gate-support';

const FREEZES = `${CC}freezes/`;
const STREAM = `${CC}stream/`;

/** The service starts at 2026-11-01T09:00:00Z (test/support/service.ts). */
const AT = (hhmm: string) => `2026-11-01T${hhmm}:00.000Z`;

const gateEvents = (events: SseEvent[]) =>
  events
    .filter((e) => e.event === 'gate_changed')
    .map((e) => `${e.json.change_request ?? '*'} ${e.json.object_type}:${e.json.object_id}`);

/** Moves the service's manual clock and waits for what its timers started. */
async function moveTo(svc: TestService, iso: string): Promise<void> {
  svc.clock.set(iso);
  await settled(svc);
}

describe('change control: time moves the views (the gate clock)', () => {
  const svc = eachTestService();
  let cast: GateCast;
  const streams: SseStream[] = [];
  const watch = async (token: string) => {
    const s = await SseStream.open(`${svc.url}${STREAM}`, { token });
    assert.equal(s.status, 200);
    streams.push(s);
    return s;
  };
  beforeEach(async () => {
    // The host clock's one other timer is the webhook outbox's poll: stopped, its timers are the gate clock's.
    await webhookDeliveryWorker(svc.host)!.stop();
    cast = await gateCast(svc);
    await settled(svc);
  });
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });

  /**
   * Someone who may view only requests with the ref "OUTSIDE": an abandoned one of those, on
   * which a comment is the marker that everything before it reached their stream or never will.
   */
  async function outsider() {
    const who = await actor(svc, 'outsider', [
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: 'OUTSIDE' } },
      { object_types: ['change_control.changecomment'], actions: ['view'] },
    ]);
    const s = await scenario(cast, 'outside', { upTo: 'draft', fields: { ref: 'OUTSIDE' } });
    await ok(svc.admin.post(`${REQUESTS}${s.cr.id}/abandon/`, {}));
    let n = 0;
    const marker = async (): Promise<(e: SseEvent) => boolean> => {
      await ok(svc.admin.patch(`${REQUESTS}${s.cr.id}/`, { description: `marker ${++n}` }));
      return (e) => e.event === 'change_request_updated' && e.json.change_request === s.cr.id;
    };
    return { who, marker };
  }

  it('A freeze said on the stream when it is written and at the instants it begins and ends, by the clock alone: one gate_changed naming the freeze, to whoever may view an open request it applies to', async () => {
    const s = await scenario(cast, 'frozen');
    const out = await outsider();
    const viewer = await watch(cast.reviewer.key);
    const stranger = await watch(out.who.key);
    const freeze = await created(
      svc.admin.post(FREEZES, { name: 'Quarter close', start: AT('10:00'), end: AT('11:00') }),
    );
    await viewer.nextUntil((e) => e.event === 'gate_changed');
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
    // The clock waits for the freeze to begin (looking again within a minute meanwhile): one timer.
    assert.equal((await gateClock(svc.host).nextChange(svc.clock.now()))?.toISOString(), AT('10:00'));
    await moveTo(svc, AT('09:59'));
    assert.equal(gateClock(svc.host).nextInstant?.toISOString(), AT('10:00'));
    assert.equal(svc.clock.pendingTimers, 1);

    await moveTo(svc, AT('10:00'));
    const begun = await viewer.nextUntil((e) => e.event === 'gate_changed');
    assert.deepEqual(gateEvents(begun), [`* change_control.freeze:${freeze.id}`]);
    assert.equal(begun.at(-1)!.json.change_request, null);
    const frozen = await detail(cast.author.client, s.cr.id);
    assert.equal(frozen.ready_to_merge, false);
    assert.match(frozen.merge_blocked_reason, /Merging is frozen by "Quarter close"/);

    await moveTo(svc, AT('11:00'));
    const ended = await viewer.nextUntil((e) => e.event === 'gate_changed');
    assert.deepEqual(gateEvents(ended), [`* change_control.freeze:${freeze.id}`]);
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);

    // Someone who may view no open request heard none of it (the marker comes after all of it).
    const heard = await stranger.nextUntil(await out.marker());
    assert.deepEqual(gateEvents(heard), []);
  });

  it('A freeze of a policy reaches only those who may view an open request that policy governs actively', async () => {
    const g = await scenario(cast, 'governed');
    const other = await policy(svc, { name: 'Sites', object_types: ['dcim.site'] });
    const out = await outsider();
    const viewer = await watch(cast.reviewer.key);
    const stranger = await watch(out.who.key);
    const devices = await created(
      svc.admin.post(FREEZES, { name: 'Devices only', start: AT('10:00'), end: AT('11:00'), policy: cast.policyId }),
    );
    const sites = await created(
      svc.admin.post(FREEZES, { name: 'Sites only', start: AT('10:00'), end: AT('11:00'), policy: other.id }),
    );
    await moveTo(svc, AT('10:00'));
    await ok(cast.author.client.patch(`${REQUESTS}${g.cr.id}/`, { description: 'after' }));
    const heard = await viewer.nextUntil(
      (e) => e.event === 'change_request_updated' && e.json.change_request === g.cr.id,
    );
    // The sites freeze governs no request: nobody hears of it.
    assert.deepEqual(gateEvents(heard), [
      `* change_control.freeze:${devices.id}`,
      `* change_control.freeze:${devices.id}`,
    ]);
    assert.ok(!gateEvents(heard).some((e) => e.endsWith(`:${sites.id}`)));
    assert.deepEqual(gateEvents(await stranger.nextUntil(await out.marker())), []);
  });

  it('A change window opening and closing says gate_changed naming the request at those instants, to those who may view it only', async () => {
    const s = await scenario(cast, 'windowed', {
      fields: { scheduled_start: AT('12:00'), scheduled_end: AT('13:00') },
    });
    const out = await outsider();
    const viewer = await watch(cast.reviewer.key);
    const stranger = await watch(out.who.key);
    await settled(svc);
    assert.equal(
      gateClock(svc.host).nextInstant?.toISOString(),
      new Date(Date.parse(AT('09:00')) + MAX_WAIT_MS).toISOString(),
      'it looks again within a minute',
    );
    await moveTo(svc, AT('11:59'));
    assert.equal(gateClock(svc.host).nextInstant?.toISOString(), AT('12:00'));
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, false);

    await moveTo(svc, AT('12:00'));
    assert.deepEqual(gateEvents(await viewer.nextUntil((e) => e.event === 'gate_changed')), [
      `${s.cr.id} change_control.changerequest:${s.cr.id}`,
    ]);
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
    await moveTo(svc, AT('13:00'));
    assert.deepEqual(gateEvents(await viewer.nextUntil((e) => e.event === 'gate_changed')), [
      `${s.cr.id} change_control.changerequest:${s.cr.id}`,
    ]);
    const closed = await detail(cast.author.client, s.cr.id);
    assert.equal(closed.ready_to_merge, false);
    assert.match(closed.merge_blocked_reason, /The change window closed/);
    assert.deepEqual(gateEvents(await stranger.nextUntil(await out.marker())), []);
  });

  it('The next instant is read from indexes, whatever the number of requests: one timer, and the same statements with 300 windows as with none', async () => {
    const statementsOfNext = async () =>
      (await statementsOf(svc, () => gateClock(svc.host).nextChange(svc.clock.now()))).length;
    const before = await statementsOfNext();
    const now = Date.parse(AT('09:00'));
    const rows = Array.from({ length: 300 }, (_, i) => ({
      title: `windowed ${i}`,
      description: '',
      ref: '',
      priority: 'medium' as const,
      comments: '',
      approved: 0,
      gates_cleared: 0,
      has_conflicts: 0,
      digest: null,
      branch_id: null,
      branch_name: `gone-${i}`,
      branch_deleted: 1,
      status: 'needs-review' as const,
      requester_id: cast.author.id,
      scheduled_start: new Date(now + (i + 2) * 3_600_000).toISOString(),
      scheduled_end: new Date(now + (i + 3) * 3_600_000).toISOString(),
      auto_merge: 0,
      created: AT('09:00'),
      last_updated: AT('09:00'),
    }));
    await ccDb(svc).insertInto('cc_change_requests').values(rows).execute();
    assert.equal(await statementsOfNext(), before);
    assert.equal(
      (await gateClock(svc.host).nextChange(svc.clock.now()))?.toISOString(),
      new Date(now + 2 * 3_600_000).toISOString(),
    );
    gateClock(svc.host).rearm();
    await settled(svc);
    assert.equal(svc.clock.pendingTimers, 1);
  });

  it('A check deadline: the check fails at that instant and the stream says so (check_updated), no sweep needed', async () => {
    await ok(
      svc.admin.patch(`${CC}policies/${cast.policyId}/`, {
        checks: ['ci/build'],
        check_settings: { 'ci/build': { timeout_minutes: 2 } },
      }),
    );
    const s = await scenario(cast, 'deadline');
    const viewer = await watch(cast.reviewer.key);
    const check = (await ok(cast.author.client.get(`${CC}checks/?change_request_id=${s.cr.id}&name=ci/build`)))
      .results[0];
    assert.equal(check.status, 'pending');
    assert.equal((await gateClock(svc.host).nextChange(svc.clock.now()))?.toISOString(), check.deadline);
    await moveTo(svc, check.deadline);
    const heard = await viewer.nextUntil((e) => e.event === 'check_updated' && e.json.object_id === check.id);
    assert.ok(heard.length > 0);
    const failed = await ok(cast.author.client.get(`${CC}checks/${check.id}/`));
    assert.equal(failed.status, 'failure');
    assert.equal(failed.timed_out, true);
  });
});

describe('change control: the gate clock on several instances', () => {
  const [a, b] = instancesForEachTest();

  it('Two instances on one database announce each instant once', async () => {
    const cast = await gateCast(a);
    const s = await scenario(cast, 'shared', { fields: { scheduled_start: AT('12:00') } });
    await created(b.admin.post(FREEZES, { name: 'Shared', start: AT('12:00'), end: AT('13:00') }));
    await Promise.all([settled(a), settled(b)]);
    const count = async () =>
      (
        await ccDb(a)
          .selectFrom('cc_stream_events')
          .select('object_type')
          .where('event', '=', 'gate_changed')
          .where('time', '>=', AT('12:00'))
          .execute()
      ).map((r) => r.object_type);
    a.clock.set(AT('12:00'));
    b.clock.set(AT('12:00'));
    await Promise.all([settled(a), settled(b)]);
    assert.deepEqual((await count()).sort(), ['change_control.changerequest', 'change_control.freeze']);
    // And a stream on either instance hears it: the events are rows, read by every instance.
    const stream = await SseStream.open(`${b.url}${STREAM}`, { token: cast.reviewer.key, lastEventId: '0' });
    const heard = await stream.nextUntil((e) => e.event === 'gate_changed' && e.json.change_request === s.cr.id);
    assert.ok(heard.length > 0);
    stream.close();
  });

  it('Of two instances that read the same stretch of time to announce, exactly one takes it (the row moves only from what was read)', async () => {
    await Promise.all([settled(a), settled(b)]);
    const ctxOf = (svc: TestService) => createCtx({ host: svc.host, user: null, requestId: 't', baseUrl: '' });
    // Nothing announced yet on this database: the row holds null, and nothing was written at start.
    const previous = await announcedThrough(ctxOf(a));
    assert.equal(previous, null);
    // The second read what the first read, and writes after it (on PostgreSQL its update waits for the first's commit).
    assert.equal(await inTransaction(ctxOf(a), (tx) => claimAnnouncing(tx, previous, AT('12:00'))), true);
    assert.equal(await inTransaction(ctxOf(b), (tx) => claimAnnouncing(tx, previous, AT('12:00'))), false);
    assert.equal(await announcedThrough(ctxOf(b)), AT('12:00'));
  });
});
