import assert from 'node:assert/strict';
import type { TestService } from '../../../support/service';
import {
  BRANCHES,
  changesOf,
  CHECKS,
  COMMENTS,
  created,
  detail,
  DEVICES,
  expectStatus,
  ok,
  POLICIES,
  policy,
  REQUESTS,
  review,
} from './fixtures';
import {
  allCheckChangelog,
  approve,
  assertCheck,
  checkChangelog,
  checksByName,
  CheckResult,
  counting,
  RUN_CHECKS,
  setup,
  startWithChecks,
  type Setup,
} from './checks-support';

/**
 * "When checks are refreshed": the eight triggers, several arriving together collapsed into one
 * run per request that completes before the response, the changelog of changed results, and
 * externally reported checks never overwritten by a refresh.
 */
describe('change control checks: when checks are refreshed', () => {
  let svc: TestService;
  const probe = counting();
  before(async () => {
    svc = await startWithChecks({
      config: { change_control: { required_external_checks: [['ci/build', 'CI build']] } },
      ready: (r) => r.registerCheck({ name: 'probe', label: 'Probe', fn: probe.fn }),
    });
  });
  after(async () => svc.close());
  beforeEach(() => {
    probe.answer = () => CheckResult.passed('ok');
    probe.reset();
  });

  /** Invocations of the probe for one request. */
  const runsFor = (crId: number) => probe.views.filter((v) => v.id === crId).length;

  async function approved(options: Parameters<typeof setup>[1] = {}): Promise<Setup> {
    const s = await setup(svc, { policy: {}, ...options });
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    await approve(s.reviewer, s.cr.id);
    return s;
  }

  describe('the eight triggers', () => {
    it('Trigger 1: when the change request is created, its checks run once, before the response', async () => {
      const s = await setup(svc, { open: false });
      probe.reset();
      probe.answer = () => CheckResult.failed('found on create');
      const cr = await created(s.author.client.post(REQUESTS, { branch: s.branchId }));
      assert.equal(runsFor(cr.id), 1);
      assert.match(cr.merge_blocked_reason, /Required check "Probe" failed \(found on create\)/);
      const checks = await checksByName(svc.admin, cr.id);
      assertCheck(checks['probe'], { status: 'failure', summary: 'found on create' });
      assertCheck(checks['ci/build'], { status: 'pending' });
    });

    it('Trigger 2: when it is submitted for review', async () => {
      const s = await setup(svc, { policy: {} });
      probe.reset();
      probe.answer = () => CheckResult.failed('found on submit');
      const res = await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      assert.equal(res.status, 'needs-review');
      assert.equal(runsFor(s.cr.id), 1);
      assert.equal(probe.views[0]!.status, 'needs-review', 'the run sees the submitted request');
      assert.match(res.merge_blocked_reason, /found on submit/);
    });

    it('Trigger 3: when it reaches approved, a stale stored result is re-run so nothing merges against it', async () => {
      const s = await setup(svc, { policy: {} });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
      await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
      assertCheck((await checksByName(svc.admin, s.cr.id))['probe'], { status: 'success' });

      // The world moved on without a trigger: the stored success is stale.
      probe.reset();
      probe.answer = () => CheckResult.failed('inventory drifted');
      const note = await review(s.reviewer.client, s.cr.id, 'comment', 'looks fine so far');
      expectStatus(note, 201);
      assert.equal(runsFor(s.cr.id), 0, 'a review that does not reach approved runs nothing');
      assertCheck((await checksByName(svc.admin, s.cr.id))['probe'], { status: 'success' });

      await ok(
        s.reviewer.client.patch(`/api/plugins/change-control/reviews/${note.body.id}/`, { decision: 'approve' }),
      );
      assert.equal(runsFor(s.cr.id), 1);
      assert.equal(probe.views[0]!.status, 'approved');
      const d = await detail(s.author.client, s.cr.id);
      assert.equal(d.status, 'approved');
      assert.equal(d.ready_to_merge, false);
      assert.match(d.merge_blocked_reason, /Required check "Probe" failed \(inventory drifted\)/);
      const refused = await s.author.client.post(`${BRANCHES}${s.branchId}/merge/`, { commit: true });
      expectStatus(refused, 409);
      assert.match(refused.body.detail, /inventory drifted/);
    });

    it('Trigger 4: when a policy attaches or detaches (created, disabled, deleted); a policy that does not attach runs nothing', async () => {
      const s = await setup(svc);
      probe.reset();
      await policy(svc, { name: `unrelated-${s.cr.id}`, object_types: ['ipam.prefix'] });
      assert.equal(runsFor(s.cr.id), 0);

      const p = await policy(svc, {
        name: `attaching-${s.cr.id}`,
        object_types: ['dcim.device'],
        conditions: { attr: 'name', value: s.device.name },
        checks: ['ext/attached'],
      });
      assert.equal(runsFor(s.cr.id), 1, 'attached');
      assert.deepEqual(
        (await detail(svc.admin, s.cr.id)).policies.map((x: any) => x.id),
        [p.id],
      );
      assertCheck((await checksByName(svc.admin, s.cr.id))['ext/attached'], { status: 'pending', required: true });

      probe.reset();
      await ok(svc.admin.patch(`${POLICIES}${p.id}/`, { enabled: false }));
      assert.equal(runsFor(s.cr.id), 1, 'detached by disabling');
      assert.deepEqual((await detail(svc.admin, s.cr.id)).policies, []);

      probe.reset();
      await ok(svc.admin.patch(`${POLICIES}${p.id}/`, { enabled: true }));
      assert.equal(runsFor(s.cr.id), 1, 'attached again');
      probe.reset();
      expectStatus(await svc.admin.delete(`${POLICIES}${p.id}/?force=true`), 204);
      assert.equal(runsFor(s.cr.id), 1, 'detached by deletion');
    });

    it('Trigger 5: when the branch is synced', async () => {
      const s = await setup(svc);
      probe.reset();
      svc.clock.advance(60_000);
      const res = await s.author.client.post(`${BRANCHES}${s.branchId}/sync/`, { commit: true });
      expectStatus(res, 200);
      assert.equal(runsFor(s.cr.id), 1);
      assert.equal(probe.views[0]!.branch?.last_sync, svc.clock.now().toISOString(), 'the run sees the synced branch');
    });

    it('Trigger 5: a dry-run sync writes nothing and runs nothing', async () => {
      const s = await setup(svc);
      probe.reset();
      expectStatus(await s.author.client.post(`${BRANCHES}${s.branchId}/sync/`, { commit: false }), 200);
      assert.equal(runsFor(s.cr.id), 0);
    });

    it('Trigger 5: when the branch is reverted, the checks run against the branch as it stands again', async () => {
      const s = await approved();
      const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
      await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
      await ok(s.author.client.post(`${BRANCHES}${s.branchId}/merge/`, { commit: true }));
      assert.equal((await detail(svc.admin, s.cr.id)).status, 'completed');
      probe.reset();
      probe.answer = (v) => CheckResult.passed(`branch ${v.branch?.status}`);
      const res = await s.author.client.post(`${BRANCHES}${s.branchId}/revert/`, { commit: true });
      expectStatus(res, 200);
      assert.equal(runsFor(s.cr.id), 1);
      assertCheck((await checksByName(svc.admin, s.cr.id))['probe'], { status: 'success', summary: 'branch ready' });
      assert.equal((await detail(svc.admin, s.cr.id)).status, 'completed', 'completed stays terminal');
      assertCheck((await checksByName(svc.admin, s.cr.id))['ci/build'], { status: 'success' });
    });

    it('Trigger 6: when a branch diff changes (an object created, updated or deleted in the branch)', async () => {
      const s = await setup(svc);
      for (const [what, write] of [
        ['update', () => s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' })],
        ['create', () => s.inBranch.post(DEVICES, { name: `${s.device.name}-b` })],
        ['delete', () => s.inBranch.delete(`${DEVICES}${s.device.id}/`)],
      ] as const) {
        probe.reset();
        const res = await write();
        assert.ok(res.status < 300, `${what}: ${JSON.stringify(res.body)}`);
        assert.equal(runsFor(s.cr.id), 1, what);
      }
      probe.reset();
      await ok(s.inBranch.get(`${DEVICES}`));
      assert.equal(runsFor(s.cr.id), 0, 'a read moves nothing');
    });

    it("Trigger 6: a write on main that moves a branch diff (main changes an object the branch changed) re-runs that request's checks", async () => {
      const base = await created(
        svc.admin.post(DEVICES, { name: `main-dev-${Date.now()}`, status: 'active', serial: 'A' }),
      );
      const s = await setup(svc);
      await ok(s.inBranch.patch(`${DEVICES}${base.id}/`, { status: 'planned' }));
      probe.reset();
      probe.answer = (v) => {
        const conflicting = v.changes.filter((c) => c.conflicts !== null).length;
        return conflicting ? CheckResult.failed(`${conflicting} conflicting`) : CheckResult.passed('clean');
      };
      await ok(svc.admin.patch(`${DEVICES}${base.id}/`, { serial: 'B' }));
      assert.equal(runsFor(s.cr.id), 1, 'main moved an object the branch touches');
      assertCheck((await checksByName(svc.admin, s.cr.id))['probe'], { status: 'success', summary: 'clean' });
      probe.reset();
      await ok(svc.admin.patch(`${DEVICES}${base.id}/`, { status: 'offline' }));
      assert.equal(runsFor(s.cr.id), 1);
      assertCheck((await checksByName(svc.admin, s.cr.id))['probe'], { status: 'failure', summary: '1 conflicting' });
      assert.equal(
        (await ok(svc.admin.get(`${REQUESTS}?id=${s.cr.id}&has_conflicts=true`))).count,
        1,
        'the cached has_conflicts follows too',
      );

      probe.reset();
      await created(svc.admin.post(DEVICES, { name: `unrelated-${Date.now()}` }));
      assert.equal(runsFor(s.cr.id), 0, 'a main write no branch diff involves runs nothing');
    });

    it('Trigger 7: when a comment thread is opened, resolved (or reopened) or removed; a reply is not a new thread', async () => {
      const s = await setup(svc);
      const change = (await changesOf(svc, s.branchId))[0];
      probe.reset();
      probe.answer = (v) => CheckResult.passed(`${v.threads.filter((t) => !t.resolved).length} open`);
      const root = await created(
        s.reviewer.client.post(COMMENTS, { change_request: s.cr.id, change_diff: change.id, text: 'Why planned?' }),
      );
      assert.equal(runsFor(s.cr.id), 1, 'opened');
      assertCheck((await checksByName(svc.admin, s.cr.id))['probe'], { summary: '1 open' });

      probe.reset();
      await created(
        s.author.client.post(COMMENTS, {
          change_request: s.cr.id,
          change_diff: change.id,
          text: 'It is new.',
          parent: root.id,
        }),
      );
      assert.equal(runsFor(s.cr.id), 0, 'a reply does not open a thread');

      probe.reset();
      await ok(s.reviewer.client.patch(`${COMMENTS}${root.id}/`, { resolved: true }));
      assert.equal(runsFor(s.cr.id), 1, 'resolved');
      assertCheck((await checksByName(svc.admin, s.cr.id))['probe'], { summary: '0 open' });

      probe.reset();
      await ok(s.reviewer.client.patch(`${COMMENTS}${root.id}/`, { resolved: false }));
      assert.equal(runsFor(s.cr.id), 1, 'reopened');

      probe.reset();
      expectStatus(await svc.admin.delete(`${COMMENTS}${root.id}/`), 204);
      assert.equal(runsFor(s.cr.id), 1, 'removed');
      assertCheck((await checksByName(svc.admin, s.cr.id))['probe'], { summary: '0 open' });
    });

    it('Trigger 8: when someone triggers Re-run checks (POST change-requests/{id}/run-checks/), returning the request', async () => {
      const s = await setup(svc);
      probe.reset();
      probe.answer = () => CheckResult.failed('re-run found it');
      const res = await ok(s.pipeline.client.post(RUN_CHECKS(s.cr.id), {}));
      assert.equal(res.id, s.cr.id);
      assert.equal(runsFor(s.cr.id), 1);
      assert.match(res.merge_blocked_reason, /re-run found it/);
    });

    it('Writes that are no trigger run nothing: a check report, a field edit of the request, a review that moves nothing', async () => {
      const s = await setup(svc, { policy: {} });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
      probe.reset();
      await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'running' }));
      await ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { ref: 'CHG-9' }));
      expectStatus(await review(s.reviewer.client, s.cr.id, 'comment', 'a note'), 201);
      assert.equal(runsFor(s.cr.id), 0);
    });
  });

  describe('several triggers arriving together', () => {
    it('are collapsed into one run per request: submit that attaches a policy and reaches approved at once (triggers 2, 3 and 4)', async () => {
      const s = await setup(svc);
      // A zero-approval policy for this device, created behind the refresh's back so that submit attaches it.
      await policy(svc, {
        name: `zero-${s.cr.id}`,
        object_types: ['dcim.device'],
        conditions: { attr: 'name', value: s.device.name },
        rules: [{ name: 'none needed', min_reviews: 0 }],
      });
      probe.reset();
      probe.answer = () => CheckResult.failed('one run');
      const res = await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      assert.equal(res.status, 'approved');
      assert.equal(runsFor(s.cr.id), 1);
      assert.match(
        res.merge_blocked_reason,
        /Required check "Probe" failed \(one run\)/,
        'the run completed before the response',
      );
    });

    it('are collapsed into one run per request: a branch write that newly touches a type a policy names (triggers 6 and 4)', async () => {
      const s = await setup(svc);
      await policy(svc, {
        name: `sites-${s.cr.id}`,
        object_types: ['dcim.site'],
        conditions: { attr: 'name', value: `site-${s.cr.id}` },
      });
      probe.reset();
      await created(s.inBranch.post('/api/dcim/sites/', { name: `site-${s.cr.id}` }));
      assert.equal(runsFor(s.cr.id), 1);
      assert.deepEqual(
        (await detail(svc.admin, s.cr.id)).policies.map((p: any) => p.name),
        [`sites-${s.cr.id}`],
      );
    });

    it("one policy attaching to several requests runs each request's checks once", async () => {
      const a = await setup(svc);
      const b = await setup(svc);
      probe.reset();
      await policy(svc, {
        name: `both-${a.cr.id}-${b.cr.id}`,
        object_types: ['dcim.device'],
        conditions: { attr: 'name', op: 'in', value: [a.device.name, b.device.name] },
      });
      assert.equal(runsFor(a.cr.id), 1);
      assert.equal(runsFor(b.cr.id), 1);
      assert.equal(probe.calls, 2);
    });

    it('a review reaching approved runs the checks once, though its refresh also re-matches the policies', async () => {
      const s = await setup(svc, { policy: {} });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      probe.reset();
      await approve(s.reviewer, s.cr.id);
      assert.equal(runsFor(s.cr.id), 1);
    });
  });

  describe('changelog of results', () => {
    it("A changed result is recorded in the check's changelog (/api/core/object-changes/), with both sides", async () => {
      const s = await setup(svc);
      const probeRow = (await checksByName(svc.admin, s.cr.id))['probe'];
      const before = await checkChangelog(svc.admin, probeRow.id);
      assert.deepEqual(
        before.map((e) => e.action),
        ['create'],
      );
      probe.answer = () => CheckResult.failed('now failing');
      await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
      const after = await checkChangelog(svc.admin, probeRow.id);
      assert.equal(after.length, 2);
      const entry = after[1];
      assert.equal(entry.action, 'update');
      assert.equal(entry.changed_object_type, 'change_control.mergecheck');
      assert.equal(entry.prechange_data.status, 'success');
      assert.equal(entry.postchange_data.status, 'failure');
      assert.equal(entry.postchange_data.summary, 'now failing');
      assert.equal(entry.user_name, 'admin');
    });

    it('A re-run that finds the same answer writes nothing: no changelog entry, no new completed or last_updated', async () => {
      const s = await setup(svc);
      const rows = await checksByName(svc.admin, s.cr.id);
      const logBefore = await allCheckChangelog(svc.admin);
      svc.clock.advance(3_600_000);
      probe.reset();
      await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
      assert.equal(runsFor(s.cr.id), 1, 'it did run');
      assert.deepEqual(await allCheckChangelog(svc.admin), logBefore);
      const again = await checksByName(svc.admin, s.cr.id);
      assert.equal(again['probe'].completed, rows['probe'].completed);
      assert.equal(again['probe'].last_updated, rows['probe'].last_updated);
    });

    it('A pipeline report that changes a result is recorded; the same report again writes nothing', async () => {
      const s = await setup(svc);
      const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
      await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure', summary: 'red' }));
      const once = await checkChangelog(svc.admin, ci.id);
      assert.deepEqual(
        once.map((e) => e.action),
        ['create', 'update'],
      );
      assert.equal(once[1].user_name, s.pipeline.username);
      await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure', summary: 'red' }));
      assert.equal((await checkChangelog(svc.admin, ci.id)).length, 2);
    });
  });

  describe('externally reported checks', () => {
    it('are never overwritten by a refresh: run-checks, branch edits, sync and approval keep the reported result', async () => {
      const s = await setup(svc, { policy: { checks: ['ext/scan'] } });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      const checks = await checksByName(svc.admin, s.cr.id);
      await ok(
        s.pipeline.client.patch(`${CHECKS}${checks['ci/build'].id}/`, {
          status: 'failure',
          summary: 'red build',
          details_url: 'https://ci.example.com/9',
        }),
      );
      await ok(
        s.pipeline.client.patch(`${CHECKS}${checks['ext/scan'].id}/`, { status: 'success', summary: 'scanned' }),
      );
      const reported = await checksByName(svc.admin, s.cr.id);
      svc.clock.advance(60_000);

      await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
      await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
      expectStatus(await s.author.client.post(`${BRANCHES}${s.branchId}/sync/`, { commit: true }), 200);
      await approve(s.reviewer, s.cr.id);
      assert.equal((await detail(svc.admin, s.cr.id)).status, 'approved');

      const after = await checksByName(svc.admin, s.cr.id);
      for (const name of ['ci/build', 'ext/scan']) {
        for (const field of ['id', 'status', 'summary', 'details_url', 'completed', 'last_updated']) {
          assert.equal(after[name][field], reported[name][field], `${name}.${field}`);
        }
      }
    });

    it('a reported check a policy no longer names is kept by the refresh (advisory from then on)', async () => {
      const s = await setup(svc, { policy: { checks: ['ext/dropped'] } });
      const row = (await checksByName(svc.admin, s.cr.id))['ext/dropped'];
      await ok(s.pipeline.client.patch(`${CHECKS}${row.id}/`, { status: 'failure', summary: 'kept' }));
      const pol = (await detail(svc.admin, s.cr.id)).policies[0];
      await ok(svc.admin.patch(`${POLICIES}${pol.id}/`, { checks: [] }));
      await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
      const kept = (await checksByName(svc.admin, s.cr.id))['ext/dropped'];
      assertCheck(kept, { status: 'failure', summary: 'kept', required: false, blocks_merge: false });
    });
  });
});
