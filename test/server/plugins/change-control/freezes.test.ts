import assert from 'node:assert/strict';
import {
  activePeriod,
  nextPeriod,
  zonedInstant,
  type FreezeSchedule,
} from '../../../../server/plugins/change-control/freezes/calendar';
import { sweepAutoMerge } from '../../../../server/plugins/change-control/gate/auto-merge';
import { serviceForSuite, type TestService } from '../../../support/service';
import { actor, CC, detail, expectStatus, ok, policy, POLICIES, REQUESTS, VIEW_ALL } from './fixtures';
import { assertRefusedMerge, branchOf, gateCast, mergeBranch, scenario, type GateCast } from './gate-support';

const FREEZES = `${CC}freezes/`;

function recurring(weekdays: number[], startTime: string, endTime: string, timeZone: string): FreezeSchedule {
  return { kind: 'recurring', start: null, end: null, weekdays, startTime, endTime, timeZone };
}

const at = (iso: string) => new Date(iso);
const iso = (p: { start: Date; end: Date } | null) => (p ? [p.start.toISOString(), p.end.toISOString()] : null);

describe('change control: freeze calendars', () => {
  describe('the calendar (time zones, daylight saving time)', () => {
    it('zonedInstant: a wall-clock time in a zone is the right instant in summer and in winter time', () => {
      assert.equal(zonedInstant(2026, 7, 3, 18, 0, 'Europe/Berlin').toISOString(), '2026-07-03T16:00:00.000Z');
      assert.equal(zonedInstant(2026, 11, 6, 18, 0, 'Europe/Berlin').toISOString(), '2026-11-06T17:00:00.000Z');
      assert.equal(zonedInstant(2026, 7, 3, 9, 30, 'America/New_York').toISOString(), '2026-07-03T13:30:00.000Z');
      assert.equal(zonedInstant(2026, 11, 6, 9, 30, 'America/New_York').toISOString(), '2026-11-06T14:30:00.000Z');
      assert.equal(zonedInstant(2026, 11, 6, 9, 30, 'UTC').toISOString(), '2026-11-06T09:30:00.000Z');
    });

    it('A recurring freeze keeps its wall-clock time across the change to winter time (Fridays 18:00-22:00 in Berlin)', () => {
      const fridays = recurring([5], '18:00', '22:00', 'Europe/Berlin');
      // 2026-10-23 is the Friday before Europe leaves summer time (2026-10-25).
      assert.deepEqual(iso(activePeriod(fridays, at('2026-10-23T17:00:00Z'))), [
        '2026-10-23T16:00:00.000Z',
        '2026-10-23T20:00:00.000Z',
      ]);
      assert.deepEqual(iso(nextPeriod(fridays, at('2026-10-23T21:00:00Z'))), [
        '2026-10-30T17:00:00.000Z',
        '2026-10-30T21:00:00.000Z',
      ]);
      assert.equal(activePeriod(fridays, at('2026-10-30T16:30:00Z')), null, '17:30 in Berlin: not yet');
      assert.ok(activePeriod(fridays, at('2026-10-30T17:00:00Z')));
    });

    it('A recurring overnight freeze spanning the night clocks go back lasts an hour longer (Saturday 22:00 to Sunday 04:00 in New York)', () => {
      // 2026-11-01 (a Sunday) is when New York leaves summer time, at 02:00.
      const nights = recurring([6], '22:00', '04:00', 'America/New_York');
      assert.deepEqual(iso(activePeriod(nights, at('2026-11-01T05:00:00Z'))), [
        '2026-11-01T02:00:00.000Z',
        '2026-11-01T09:00:00.000Z',
      ]);
      assert.deepEqual(iso(activePeriod(nights, at('2026-10-25T05:00:00Z'))), [
        '2026-10-25T02:00:00.000Z',
        '2026-10-25T08:00:00.000Z',
      ]);
    });

    it('A wall-clock start that does not exist (clocks going forward) falls just after the gap', () => {
      // 2026-03-29: Berlin skips from 02:00 to 03:00.
      const sunday = recurring([7], '02:30', '05:00', 'Europe/Berlin');
      assert.deepEqual(iso(activePeriod(sunday, at('2026-03-29T02:00:00Z'))), [
        '2026-03-29T01:30:00.000Z',
        '2026-03-29T03:00:00.000Z',
      ]);
    });

    it('Periods that touch are one: every Saturday and Sunday 00:00-00:00 runs until Monday 00:00', () => {
      const weekend = recurring([6, 7], '00:00', '00:00', 'UTC');
      assert.deepEqual(iso(activePeriod(weekend, at('2026-11-07T12:00:00Z'))), [
        '2026-11-07T00:00:00.000Z',
        '2026-11-09T00:00:00.000Z',
      ]);
      assert.equal(activePeriod(weekend, at('2026-11-09T00:00:00Z')), null, 'the end is not part of it');
    });

    it('A one-off freeze is in force from its start up to (not including) its end', () => {
      const once: FreezeSchedule = {
        kind: 'once',
        start: '2026-12-20T00:00:00.000Z',
        end: '2027-01-04T00:00:00.000Z',
        weekdays: [],
        startTime: null,
        endTime: null,
        timeZone: 'UTC',
      };
      assert.equal(activePeriod(once, at('2026-12-19T23:59:59Z')), null);
      assert.deepEqual(iso(nextPeriod(once, at('2026-12-19T23:59:59Z'))), [
        '2026-12-20T00:00:00.000Z',
        '2027-01-04T00:00:00.000Z',
      ]);
      assert.ok(activePeriod(once, at('2026-12-20T00:00:00Z')));
      assert.equal(activePeriod(once, at('2027-01-04T00:00:00Z')), null);
    });
  });

  describe('freezes/ and the merge gate', () => {
    let svc: TestService;
    let cast: GateCast;
    // The clock stands at 2026-11-01T09:00:00Z (a Sunday).
    serviceForSuite(async (started) => {
      svc = started;
      cast = await gateCast(svc);
    });
    afterEach(async () => {
      svc.clock.set('2026-11-01T09:00:00Z');
      for (const f of (await ok(svc.admin.get(`${FREEZES}?limit=1000`))).results)
        expectStatus(await svc.admin.delete(`${FREEZES}${f.id}/`), 204);
    });

    async function createFreeze(body: Record<string, unknown>): Promise<any> {
      const res = await svc.admin.post(FREEZES, body);
      expectStatus(res, 201, 'freeze');
      return res.body;
    }

    it('freezes/: a one-off and a recurring freeze are created and shown with the period in force and the next one', async () => {
      const once = await createFreeze({
        name: 'Year end',
        start: '2026-11-01T08:00:00Z',
        end: '2026-11-01T12:00:00+01:00',
      });
      assert.equal(once.kind, 'once');
      assert.equal(once.end, '2026-11-01T11:00:00.000Z');
      assert.equal(once.policy, null);
      assert.deepEqual(once.active, { start: '2026-11-01T08:00:00.000Z', end: '2026-11-01T11:00:00.000Z' });
      assert.equal(once.next, null);
      const fridays = await createFreeze({
        name: 'Friday evenings',
        weekdays: [5],
        start_time: '18:00',
        end_time: '23:00',
        time_zone: 'Europe/Berlin',
      });
      assert.equal(fridays.kind, 'recurring');
      assert.equal(fridays.active, null);
      assert.deepEqual(fridays.next, { start: '2026-11-06T17:00:00.000Z', end: '2026-11-06T22:00:00.000Z' });
      const list = await ok(svc.admin.get(`${FREEZES}?kind=recurring`));
      assert.deepEqual(
        list.results.map((f: any) => f.name),
        ['Friday evenings'],
      );
    });

    it('freezes/: global=true lists the freezes of every request (no policy), global=false those of a policy, both values every freeze', async () => {
      const everyRequest = await createFreeze({
        name: 'Everything',
        start: '2026-11-02T00:00:00Z',
        end: '2026-11-03T00:00:00Z',
      });
      const ofPolicy = await createFreeze({
        name: 'Devices',
        start: '2026-11-02T00:00:00Z',
        end: '2026-11-03T00:00:00Z',
        policy: cast.policyId,
      });
      const names = async (query: string): Promise<string[]> =>
        (await ok(svc.admin.get(`${FREEZES}?${query}&ordering=name`))).results.map((f: any) => f.name);
      assert.deepEqual(await names('global=true'), [everyRequest.name]);
      assert.deepEqual(await names('global=false'), [ofPolicy.name]);
      assert.deepEqual(await names('global=true&global=false'), [ofPolicy.name, everyRequest.name]);
      expectStatus(await svc.admin.get(`${FREEZES}?global=sometimes`), 400);
    });

    it('freezes/: malformed or incomplete freezes are 400 naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ name: 'a', start: '2026-11-02T00:00:00Z' }, 'end'],
        [{ name: 'b', start: '2026-11-02T00:00:00Z', end: '2026-11-01T00:00:00Z' }, 'end'],
        [{ name: 'c', kind: 'recurring', start_time: '10:00', end_time: '11:00' }, 'weekdays'],
        [{ name: 'd', weekdays: [8], start_time: '10:00', end_time: '11:00' }, 'weekdays'],
        [{ name: 'e', weekdays: [1], start_time: '25:00', end_time: '11:00' }, 'start_time'],
        [{ name: 'f', weekdays: [1], start_time: '10:00', end_time: '11:00', time_zone: 'Mars/Olympus' }, 'time_zone'],
        [{ name: 'g', weekdays: [1], start_time: '10:00' }, 'end_time'],
        [{ name: 'h', start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z', policy: 999999 }, 'policy'],
        [{ name: 'i', start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z', colour: 'red' }, 'colour'],
      ];
      for (const [body, field] of cases) {
        const res = await svc.admin.post(FREEZES, body);
        expectStatus(res, 400, JSON.stringify(body));
        assert.ok(JSON.stringify(res.body).includes(field), `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`);
      }
      await createFreeze({ name: 'dup', start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' });
      expectStatus(
        await svc.admin.post(FREEZES, { name: 'dup', start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' }),
        400,
      );
      const f = (await ok(svc.admin.get(`${FREEZES}?name=dup`))).results[0];
      const bad = await svc.admin.patch(`${FREEZES}${f.id}/`, { end: '2026-11-01T00:00:00Z' });
      expectStatus(bad, 400);
      assert.ok(Array.isArray(bad.body.end));
    });

    it('freezes/: managed only by holders of the freeze permissions; viewing needs view_freeze', async () => {
      const viewer = await actor(svc, 'freeze-viewer', [
        ...VIEW_ALL,
        { object_types: ['change_control.freeze'], actions: ['view'] },
      ]);
      const manager = await actor(svc, 'freeze-manager', [
        { object_types: ['change_control.freeze'], actions: ['view', 'add', 'change', 'delete'] },
      ]);
      const body = { name: 'by manager', start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' };
      expectStatus(await cast.author.client.post(FREEZES, body), 403);
      expectStatus(await viewer.client.post(FREEZES, body), 403);
      expectStatus(await cast.author.client.get(FREEZES), 403);
      const made = await manager.client.post(FREEZES, body);
      expectStatus(made, 201);
      expectStatus(await viewer.client.get(`${FREEZES}${made.body.id}/`), 200);
      expectStatus(await viewer.client.patch(`${FREEZES}${made.body.id}/`, { enabled: false }), 403);
      expectStatus(await manager.client.patch(`${FREEZES}${made.body.id}/`, { enabled: false }), 200);
    });

    it('Merge gate: a global freeze in force blocks merging with a reason naming it and when it ends; the request shows it; once it ends, the branch merges', async () => {
      const s = await scenario(cast, 'frozen-global');
      await createFreeze({ name: 'Change freeze', start: '2026-11-01T08:00:00Z', end: '2026-11-01T18:00:00Z' });
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, false);
      assert.match(cr.merge_blocked_reason, /Merging is frozen by "Change freeze" until 2026-11-01T18:00:00.000Z\./);
      assert.deepEqual(
        cr.freezes.map((f: any) => [f.name, f.active, f.end]),
        [['Change freeze', true, '2026-11-01T18:00:00.000Z']],
      );
      const listed = (await ok(cast.author.client.get(`${REQUESTS}?id=${s.cr.id}`))).results[0];
      assert.deepEqual(listed.freezes, cr.freezes);
      assert.match(listed.merge_blocked_reason, /frozen by "Change freeze"/);
      await assertRefusedMerge(
        svc,
        cast.author.client,
        s,
        /Merging is frozen by "Change freeze" until 2026-11-01T18:00:00.000Z/,
      );

      svc.clock.set('2026-11-01T18:00:00Z');
      const after = await detail(cast.author.client, s.cr.id);
      assert.deepEqual(after.freezes, []);
      assert.equal(after.ready_to_merge, true);
      expectStatus(await mergeBranch(cast.author.client, s.branch.id), 200);
    });

    it('A freeze is overridable only as the accountable override: a holder of override_gate merges through it, and the freeze is recorded as what was set aside', async () => {
      const s = await scenario(cast, 'frozen-override');
      await createFreeze({ name: 'Audit week', start: '2026-11-01T00:00:00Z', end: '2026-11-08T00:00:00Z' });
      const windowOnly = await actor(svc, 'window-overrider', [
        ...VIEW_ALL,
        { object_types: ['branching.branch'], actions: ['merge', 'change'] },
        { object_types: ['change_control.changerequest'], actions: ['override_window'] },
      ]);
      await assertRefusedMerge(svc, windowOnly.client, s, /frozen by "Audit week"/);
      const holder = await actor(svc, 'freeze-overrider', [
        ...VIEW_ALL,
        { object_types: ['branching.branch'], actions: ['merge', 'change'] },
        { object_types: ['change_control.gate'], actions: ['override'] },
      ]);
      const cr = await ok(holder.client.post(`${REQUESTS}${s.cr.id}/override/`, { reason: 'Security fix' }));
      assert.equal(cr.status, 'completed');
      assert.match(cr.override.overridden_reason, /Merging is frozen by "Audit week" until 2026-11-08T00:00:00.000Z/);
    });

    it('An upcoming freeze (within 7 days) is shown on the request without blocking it; one further away is not shown', async () => {
      const s = await scenario(cast, 'frozen-upcoming');
      await createFreeze({
        name: 'Friday evenings',
        weekdays: [5],
        start_time: '18:00',
        end_time: '23:00',
        time_zone: 'Europe/Berlin',
      });
      await createFreeze({ name: 'Much later', start: '2026-12-20T00:00:00Z', end: '2026-12-27T00:00:00Z' });
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, true);
      assert.deepEqual(cr.freezes, [
        {
          id: cr.freezes[0].id,
          name: 'Friday evenings',
          active: false,
          start: '2026-11-06T17:00:00.000Z',
          end: '2026-11-06T22:00:00.000Z',
          kind: 'recurring',
          weekdays: [5],
          start_time: '18:00',
          end_time: '23:00',
          time_zone: 'Europe/Berlin',
        },
      ]);
    });

    it('A freeze of a policy blocks only the requests that policy governs; a disabled freeze blocks nothing', async () => {
      const other = await policy(svc, {
        name: 'Sites only',
        object_types: ['dcim.site'],
        rules: [{ name: 'any', users: [cast.reviewer.id] }],
      });
      const governed = await scenario(cast, 'frozen-policy');
      const perPolicy = await createFreeze({
        name: 'Device freeze',
        start: '2026-11-01T00:00:00Z',
        end: '2026-11-02T00:00:00Z',
        policy: cast.policyId,
      });
      await createFreeze({
        name: 'Site freeze',
        start: '2026-11-01T00:00:00Z',
        end: '2026-11-02T00:00:00Z',
        policy: other.id,
      });
      const cr = await detail(cast.author.client, governed.cr.id);
      assert.deepEqual(
        cr.freezes.map((f: any) => f.name),
        ['Device freeze'],
      );
      assert.equal(cr.ready_to_merge, false);
      await ok(svc.admin.patch(`${FREEZES}${perPolicy.id}/`, { enabled: false }));
      const thawed = await detail(cast.author.client, governed.cr.id);
      assert.deepEqual(thawed.freezes, []);
      assert.equal(thawed.ready_to_merge, true);
    });

    it('A freeze of a policy on trial (enforcement "evaluate") blocks nothing: such a policy never blocks', async () => {
      const trial = await policy(svc, {
        name: 'Devices on trial',
        object_types: ['dcim.device'],
        rules: [{ name: 'any', users: [cast.reviewer.id] }],
      });
      await ok(svc.admin.patch(`${POLICIES}${trial.id}/`, { enforcement: 'evaluate' }));
      try {
        const governed = await scenario(cast, 'frozen-trial');
        await createFreeze({
          name: 'Trial freeze',
          start: '2026-11-01T00:00:00Z',
          end: '2026-11-02T00:00:00Z',
          policy: trial.id,
        });
        const cr = await detail(cast.author.client, governed.cr.id);
        assert.ok(
          cr.policies.some((p: any) => p.id === trial.id && p.enforcement === 'evaluate'),
          'the trial policy governs the request',
        );
        assert.deepEqual(cr.freezes, []);
        assert.equal(cr.ready_to_merge, true);
        const listed = (await ok(cast.author.client.get(`${REQUESTS}?id=${governed.cr.id}`))).results[0];
        assert.deepEqual(listed.freezes, []);
      } finally {
        expectStatus(await svc.admin.delete(`${POLICIES}${trial.id}/?force=true`), 204);
      }
    });

    it('Automatic merge waits out a freeze: the request merges once the freeze has ended (the sweep), not during it', async () => {
      await createFreeze({
        name: 'Sunday morning',
        weekdays: [7],
        start_time: '08:00',
        end_time: '12:00',
        time_zone: 'UTC',
      });
      const s = await scenario(cast, 'frozen-auto', { fields: { auto_merge: true } });
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      await sweepAutoMerge(svc.host);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      svc.clock.set('2026-11-01T12:00:00Z');
      await sweepAutoMerge(svc.host);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
    });

    it('blocked_until: when only time holds a request (freezes in force, a window not yet open) the instant it may merge, freezes in a row followed; null when something else blocks or the window closes first', async () => {
      const s = await scenario(cast, 'until');
      const until = async () => [
        (await detail(cast.author.client, s.cr.id)).blocked_until,
        (await ok(cast.author.client.get(`${REQUESTS}?id=${s.cr.id}`))).results[0].blocked_until,
      ];
      assert.deepEqual(await until(), [null, null], 'ready: nothing holds it');
      await createFreeze({ name: 'First', start: '2026-11-01T08:00:00Z', end: '2026-11-01T10:00:00Z' });
      assert.deepEqual(await until(), ['2026-11-01T10:00:00.000Z', '2026-11-01T10:00:00.000Z']);
      await createFreeze({ name: 'Second', start: '2026-11-01T10:00:00Z', end: '2026-11-01T11:30:00Z' });
      assert.deepEqual(await until(), ['2026-11-01T11:30:00.000Z', '2026-11-01T11:30:00.000Z'], 'one after the other');
      await ok(cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { scheduled_start: '2026-11-01T12:00:00Z' }));
      assert.deepEqual(
        await until(),
        ['2026-11-01T12:00:00.000Z', '2026-11-01T12:00:00.000Z'],
        'the window opens later',
      );
      await ok(
        cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, {
          scheduled_start: '2026-11-01T09:00:00Z',
          scheduled_end: '2026-11-01T11:00:00Z',
        }),
      );
      assert.deepEqual(await until(), [null, null], 'the window closes before the freezes end: it never may');
      await ok(cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { scheduled_start: null, scheduled_end: null }));
      const other = await scenario(cast, 'until-review', { upTo: 'needs-review' });
      assert.equal((await detail(cast.author.client, other.cr.id)).blocked_until, null, 'a review is missing too');
    });

    it('A request shows a recurring freeze with its rule (weekdays, times, time zone), so that a reader can say it as written', async () => {
      const s = await scenario(cast, 'rule');
      await createFreeze({
        name: 'Monday mornings',
        weekdays: [1],
        start_time: '08:00',
        end_time: '12:00',
        time_zone: 'America/New_York',
      });
      const [notice] = (await detail(cast.author.client, s.cr.id)).freezes;
      assert.deepEqual(notice, {
        id: notice.id,
        name: 'Monday mornings',
        active: false,
        start: '2026-11-02T13:00:00.000Z',
        end: '2026-11-02T17:00:00.000Z',
        kind: 'recurring',
        weekdays: [1],
        start_time: '08:00',
        end_time: '12:00',
        time_zone: 'America/New_York',
      });
    });
  });
});
