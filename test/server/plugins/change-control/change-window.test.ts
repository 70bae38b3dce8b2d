import assert from 'node:assert/strict';
import { serviceForSuite, type TestService } from '../../../support/service';
import { actor, branch, detail, expectStatus, grant, ok, REQUESTS, VIEW_ALL } from './fixtures';
import { assertRefusedMerge, gateCast, mainDeviceNames, mergeBranch, scenario, type GateCast } from './gate-support';

/** The action of change_control.override_window_changerequest. */
const OVERRIDE = 'override_window';
/** Someone who may merge branches but is not the author. */
const MERGE_ONLY = [...VIEW_ALL, { object_types: ['branching.branch'], actions: ['merge', 'change'] }];

describe('change control: change windows', () => {
  let svc: TestService;
  let cast: GateCast;
  // The clock stands at 2026-11-01T09:00:00Z.
  serviceForSuite(async (started) => {
    svc = started;
    cast = await gateCast(svc);
  });
  afterEach(() => svc.clock.set('2026-11-01T09:00:00Z'));

  describe('fields (contract 4.1)', () => {
    it('ChangeRequest scheduled_start / scheduled_end: written on create and PATCH, shown as ISO instants, cleared with null', async () => {
      const s = await scenario(cast, 'window-fields', {
        upTo: 'draft',
        fields: { scheduled_start: '2026-11-02T23:00:00+01:00', scheduled_end: '2026-11-03T01:00:00Z' },
      });
      assert.equal(s.cr.scheduled_start, '2026-11-02T22:00:00.000Z');
      assert.equal(s.cr.scheduled_end, '2026-11-03T01:00:00.000Z');
      const moved = await ok(
        cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { scheduled_end: '2026-11-03T03:00:00Z' }),
      );
      assert.equal(moved.scheduled_start, '2026-11-02T22:00:00.000Z');
      assert.equal(moved.scheduled_end, '2026-11-03T03:00:00.000Z');
      const cleared = await ok(
        cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { scheduled_start: null, scheduled_end: null }),
      );
      assert.equal(cleared.scheduled_start, null);
      assert.equal(cleared.scheduled_end, null);
    });

    it('ChangeRequest window_warning: "Window too short" when the window is shorter than the automatic-merge interval; null otherwise (read-only)', async () => {
      const interval = svc.config.change_control.auto_merge_interval;
      const s = await scenario(cast, 'window-short', {
        upTo: 'draft',
        fields: { scheduled_start: '2026-11-02T22:00:00Z', scheduled_end: '2026-11-02T22:05:00Z' },
      });
      assert.ok(interval > 5);
      assert.match(
        s.cr.window_warning,
        /^Window too short: the change window lasts 5 minutes, less than the automatic-merge interval of \d+ minutes/,
      );
      const listedCr = (await ok(cast.author.client.get(`${REQUESTS}?id=${s.cr.id}`))).results[0];
      assert.equal(listedCr.window_warning, s.cr.window_warning);
      const long = await ok(
        cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, {
          scheduled_end: '2026-11-03T02:00:00Z',
          window_warning: 'ignored',
        }),
      );
      assert.equal(long.window_warning, null);
      const open = await ok(cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { scheduled_end: null }));
      assert.equal(open.window_warning, null);
    });

    it('ChangeRequest scheduled_end must be after scheduled_start (400 naming scheduled_end), on create and on PATCH', async () => {
      const s = await scenario(cast, 'window-order', {
        upTo: 'draft',
        fields: { scheduled_start: '2026-11-02T22:00:00Z' },
      });
      const same = await cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { scheduled_end: '2026-11-02T22:00:00Z' });
      expectStatus(same, 400);
      assert.ok(Array.isArray(same.body.scheduled_end), JSON.stringify(same.body));
      const earlier = await cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, {
        scheduled_end: '2026-11-02T21:00:00Z',
      });
      expectStatus(earlier, 400);
      assert.ok(earlier.body.scheduled_end);
      assert.equal((await detail(cast.author.client, s.cr.id)).scheduled_end, null, 'nothing written');

      const { branch: b } = await branch(cast.author.client, 'window-order-create');
      const refused = await cast.author.client.post(REQUESTS, {
        branch: b.id,
        scheduled_start: '2026-11-03T00:00:00Z',
        scheduled_end: '2026-11-02T00:00:00Z',
      });
      expectStatus(refused, 400);
      assert.ok(refused.body.scheduled_end);
    });

    it('ChangeRequest scheduled_start: a value that is not a date-time is a 400 naming the field, never a 5xx', async () => {
      const s = await scenario(cast, 'window-bad', { upTo: 'draft' });
      for (const bad of ['tomorrow', '2026-13-01T00:00:00Z', '2026-02-30T10:00:00Z', 12345, true, '']) {
        const res = await cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { scheduled_start: bad });
        expectStatus(res, 400, `scheduled_start ${JSON.stringify(bad)}`);
        assert.ok(res.body.scheduled_start, JSON.stringify(res.body));
      }
    });
  });

  describe('the window gates the merge', () => {
    it('Change window: before scheduled_start the merge is refused (409) naming the window; inside it the branch merges', async () => {
      const s = await scenario(cast, 'window-before', {
        fields: { scheduled_start: '2026-11-01T22:00:00Z', scheduled_end: '2026-11-02T02:00:00Z' },
      });
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.approved, true);
      assert.equal(cr.ready_to_merge, false);
      await assertRefusedMerge(svc, cast.author.client, s, /change window opens at 2026-11-01T22:00:00\.000Z/);

      svc.clock.set('2026-11-01T22:00:00Z');
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true, 'open from scheduled_start on');
      await ok(mergeBranch(cast.author.client, s.branch.id));
      assert.deepEqual(await mainDeviceNames(svc), ['window-before-dev']);
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
    });

    it('Change window: from scheduled_end on the merge is refused (409) naming the closed window', async () => {
      const s = await scenario(cast, 'window-after', {
        fields: { scheduled_start: '2026-11-01T08:00:00Z', scheduled_end: '2026-11-01T10:00:00Z' },
      });
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
      svc.clock.set('2026-11-01T10:00:00Z');
      await assertRefusedMerge(svc, cast.author.client, s, /change window closed at 2026-11-01T10:00:00\.000Z/);
    });

    it('Change window: only scheduled_start set: open from then on with no end', async () => {
      const s = await scenario(cast, 'window-open-ended', { fields: { scheduled_start: '2026-11-01T12:00:00Z' } });
      await assertRefusedMerge(svc, cast.author.client, s, /opens at 2026-11-01T12:00:00\.000Z/);
      svc.clock.set('2030-01-01T00:00:00Z');
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
    });

    it('Change window: no window set means no time restriction', async () => {
      const s = await scenario(cast, 'window-none');
      svc.clock.set('2031-06-01T03:00:00Z');
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, true, cr.merge_blocked_reason);
    });
  });

  describe('the override permission (change_control.override_window_changerequest, contract 4.3)', () => {
    it('Window override: a caller without the override gets 409 naming the window; a holder merges outside the window', async () => {
      const s = await scenario(cast, 'override-holder', {
        fields: { scheduled_start: '2026-11-05T00:00:00Z', scheduled_end: '2026-11-05T04:00:00Z' },
      });
      const plain = await actor(svc, 'plain-merger', MERGE_ONLY);
      await assertRefusedMerge(svc, plain.client, s, /change window opens at 2026-11-05T00:00:00\.000Z/);
      assert.equal((await detail(plain.client, s.cr.id)).actions.merge.allowed, false);

      const holder = await actor(svc, 'window-overrider', [
        ...MERGE_ONLY,
        { object_types: ['change_control.changerequest'], actions: [OVERRIDE] },
      ]);
      const shown = await detail(holder.client, s.cr.id);
      assert.equal(shown.ready_to_merge, false, 'the request itself is still outside its window');
      assert.equal(shown.actions.merge.allowed, true);
      assert.match(shown.actions.merge.reason, /override the change window/);
      await ok(mergeBranch(holder.client, s.branch.id));
      assert.ok((await mainDeviceNames(svc)).includes('override-holder-dev'));
      assert.equal((await detail(holder.client, s.cr.id)).status, 'completed');
    });

    it('Window override: a holder whose constraint excludes the request is treated as not holding it (409 naming the window)', async () => {
      const s = await scenario(cast, 'override-constrained', { fields: { scheduled_end: '2026-11-01T08:00:00Z' } });
      const other = await actor(svc, 'constrained-overrider', [
        ...MERGE_ONLY,
        { object_types: ['change_control.changerequest'], actions: [OVERRIDE], constraints: { ref: 'CHG-OTHER' } },
      ]);
      await assertRefusedMerge(svc, other.client, s, /change window closed at 2026-11-01T08:00:00\.000Z/);
      assert.equal((await detail(other.client, s.cr.id)).actions.merge.allowed, false);

      await ok(cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { ref: 'CHG-OTHER' }));
      await ok(mergeBranch(other.client, s.branch.id), 'the constraint now includes the request');
    });

    it('Window override: it overrides only the window; other gates still refuse the merge', async () => {
      const s = await scenario(cast, 'override-review', {
        upTo: 'needs-review',
        fields: { scheduled_start: '2026-11-05T00:00:00Z' },
      });
      const holder = await actor(svc, 'override-not-approval', [
        ...MERGE_ONLY,
        { object_types: ['change_control.changerequest'], actions: [OVERRIDE] },
      ]);
      const detailText = await assertRefusedMerge(
        svc,
        holder.client,
        s,
        /Rule "netops" of policy "Devices" has 0 of 1 required approval/,
      );
      assert.doesNotMatch(detailText, /change window/, 'the window is not what blocks this holder');
      assert.equal((await detail(holder.client, s.cr.id)).actions.merge.allowed, false);
    });

    it('Window override: the override alone does not grant merging (branching.merge_branch is still needed: 403)', async () => {
      const s = await scenario(cast, 'override-no-merge', { fields: { scheduled_start: '2026-11-05T00:00:00Z' } });
      const holder = await actor(svc, 'override-only', [
        ...VIEW_ALL,
        { object_types: ['change_control.changerequest'], actions: [OVERRIDE] },
      ]);
      expectStatus(await mergeBranch(holder.client, s.branch.id), 403);
      await grant(svc, { users: [holder.id] }, { object_types: ['branching.branch'], actions: ['merge', 'change'] });
      await ok(mergeBranch(holder.client, s.branch.id));
    });
  });
});
