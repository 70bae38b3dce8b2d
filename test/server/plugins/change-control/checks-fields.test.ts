import assert from 'node:assert/strict';
import type { TestService } from '../../../support/service';
import { actor, CHECKS, detail, expectStatus, ok, POLICIES, REQUESTS } from './fixtures';
import {
  approve,
  assertCheck,
  checkChangelog,
  checksByName,
  CheckResult,
  ccTables,
  PIPELINE,
  setup,
  startWithChecks,
  type Setup,
} from './checks-support';

/**
 * The MergeCheck resource (specification "MergeCheck", contract 4.1), the endpoints rows of
 * `checks/`, Notes 1 and 2 (the pipeline flow), Authentication rule 4 and the check statuses.
 */
describe('change control checks: the MergeCheck resource', () => {
  let svc: TestService;
  before(async () => {
    svc = await startWithChecks({
      config: { change_control: { required_external_checks: [['ci/build', 'CI build'], 'lint'] } },
      ready: (registry) => {
        registry.registerCheck({
          name: 'advisory-lint',
          label: 'Advisory lint',
          fn: () => CheckResult.failed('3 warnings'),
          required: false,
        });
        registry.registerCheck({ name: 'always-ok', label: 'Always fine', fn: () => CheckResult.passed('fine') });
      },
    });
  });
  after(async () => svc.close());

  /** A submitted, approved request whose only blockers are the two reported checks. */
  async function approvedRequest(): Promise<Setup> {
    const s = await setup(svc, { policy: {} });
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    await approve(s.reviewer, s.cr.id);
    const d = await detail(s.author.client, s.cr.id);
    assert.equal(d.status, 'approved');
    return s;
  }

  async function reportAll(s: Setup, status: string): Promise<void> {
    const checks = await checksByName(s.pipeline.client, s.cr.id);
    for (const name of ['ci/build', 'lint'])
      await ok(s.pipeline.client.patch(`${CHECKS}${checks[name].id}/`, { status }));
  }

  describe('fields', () => {
    it('MergeCheck fields: id, change_request, name, status, summary, details_url, required, completed, with label and blocks_merge (contract 4.1)', async () => {
      const s = await setup(svc);
      const checks = await checksByName(s.pipeline.client, s.cr.id);
      assert.deepEqual(Object.keys(checks).sort(), ['advisory-lint', 'always-ok', 'ci/build', 'lint']);
      const ci = await ok(s.pipeline.client.get(`${CHECKS}${checks['ci/build'].id}/`));
      assert.equal(typeof ci.id, 'number');
      assert.equal(ci.change_request, s.cr.id);
      assert.equal(ci.name, 'ci/build');
      assert.equal(ci.label, 'CI build');
      assert.equal(ci.status, 'pending');
      assert.equal(ci.summary, '');
      assert.equal(ci.details_url, '');
      assert.equal(ci.required, true);
      assert.equal(ci.blocks_merge, true);
      assert.equal(ci.completed, null, 'a check never reported has no result yet');
      assert.match(ci.url, new RegExp(`${CHECKS}${ci.id}/$`));
    });

    it('MergeCheck name: a registered check is stored under its registered name, the stable key, with its label', async () => {
      const s = await setup(svc);
      const checks = await checksByName(s.pipeline.client, s.cr.id);
      assertCheck(checks['always-ok'], {
        label: 'Always fine',
        status: 'success',
        summary: 'fine',
        required: true,
        blocks_merge: false,
      });
      assertCheck(checks['advisory-lint'], {
        label: 'Advisory lint',
        status: 'failure',
        summary: '3 warnings',
        required: false,
        blocks_merge: false,
      });
    });

    it('MergeCheck status: writable by a reporter, with summary and details_url', async () => {
      const s = await setup(svc);
      const ci = (await checksByName(s.pipeline.client, s.cr.id))['ci/build'];
      const res = await ok(
        s.pipeline.client.patch(`${CHECKS}${ci.id}/`, {
          status: 'failure',
          summary: '2 tests failed',
          details_url: 'https://ci.example.com/builds/7',
        }),
      );
      assertCheck(res, { status: 'failure', summary: '2 tests failed', blocks_merge: true });
      assert.equal(res.details_url, 'https://ci.example.com/builds/7');
      const again = await ok(s.pipeline.client.get(`${CHECKS}${ci.id}/`));
      assert.equal(again.status, 'failure');
      assert.equal(again.details_url, 'https://ci.example.com/builds/7');
    });

    it('MergeCheck status: a value outside the six statuses, or a details_url that is not a URL, is a 400 naming the field', async () => {
      const s = await setup(svc);
      const ci = (await checksByName(s.pipeline.client, s.cr.id))['ci/build'];
      const bad = await s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'passed' });
      expectStatus(bad, 400);
      assert.ok(bad.body.status, JSON.stringify(bad.body));
      const badUrl = await s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { details_url: 'not a url' });
      expectStatus(badUrl, 400);
      assert.ok(badUrl.body.details_url, JSON.stringify(badUrl.body));
      assert.equal((await ok(s.pipeline.client.get(`${CHECKS}${ci.id}/`))).status, 'pending');
    });

    it('MergeCheck details_url: only an absolute http:// or https:// URL (or empty); javascript:, data:, relative and other schemes are 400 naming the field', async () => {
      const s = await setup(svc);
      const ci = (await checksByName(s.pipeline.client, s.cr.id))['ci/build'];
      for (const url of [
        'javascript:alert(document.cookie)',
        'JavaScript:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        'vbscript:x',
        'file:///etc/passwd',
        'ftp://ci.example.com/x',
        '/builds/7',
        '//ci.example.com/7',
        'https://',
        'mailto:ci@example.com',
      ]) {
        const res = await s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure', details_url: url });
        expectStatus(res, 400, url);
        assert.deepEqual(res.body, { details_url: ['Enter an absolute http:// or https:// URL.'] }, url);
        const created = await svc.admin.post(CHECKS, {
          change_request: s.cr.id,
          name: `hand-${url.length}`,
          details_url: url,
        });
        expectStatus(created, 400, url);
        assert.ok(created.body.details_url, url);
      }
      assert.equal((await ok(s.pipeline.client.get(`${CHECKS}${ci.id}/`))).status, 'pending', 'nothing written');
      assert.equal(
        (await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { details_url: 'http://ci.example.com/7' })))
          .details_url,
        'http://ci.example.com/7',
      );
      assert.equal((await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { details_url: '' }))).details_url, '');
    });

    it('MergeCheck change_request: read-only; writing it is ignored (PATCH and PUT)', async () => {
      const s = await setup(svc);
      const other = await setup(svc);
      const ci = (await checksByName(s.pipeline.client, s.cr.id))['ci/build'];
      const res = await ok(
        s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { change_request: other.cr.id, status: 'running' }),
      );
      assert.equal(res.change_request, s.cr.id);
      assert.equal(res.status, 'running');
      const put = await ok(
        s.pipeline.client.put(`${CHECKS}${ci.id}/`, { change_request: other.cr.id, status: 'success' }),
      );
      assert.equal(put.change_request, s.cr.id);
      const otherChecks = await checksByName(other.pipeline.client, other.cr.id);
      assert.equal(otherChecks['ci/build'].status, 'pending', "the other request's check is untouched");
    });

    it('MergeCheck label and blocks_merge: read-only (contract 4.1); writing them is ignored', async () => {
      const s = await setup(svc);
      const ci = (await checksByName(s.pipeline.client, s.cr.id))['ci/build'];
      const res = await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { label: 'Renamed', blocks_merge: false }));
      assertCheck(res, { label: 'CI build', blocks_merge: true });
    });

    it('MergeCheck completed: marks when the result last changed, not when a check last ran or was last reported', async () => {
      const s = await setup(svc);
      const ci = (await checksByName(s.pipeline.client, s.cr.id))['ci/build'];
      const t1 = svc.clock.now().toISOString();
      const first = await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success', summary: 'green' }));
      assert.equal(first.completed, t1);
      svc.clock.advance(60_000);
      const same = await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success', summary: 'green' }));
      assert.equal(same.completed, t1, 'the same result again moves nothing');
      svc.clock.advance(60_000);
      const t3 = svc.clock.now().toISOString();
      const moved = await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure', summary: 'red' }));
      assert.equal(moved.completed, t3);

      // A registered check that re-runs with the same answer keeps its completed time.
      const always = (await checksByName(s.pipeline.client, s.cr.id))['always-ok'];
      svc.clock.advance(60_000);
      await ok(s.pipeline.client.post(`${REQUESTS}${s.cr.id}/run-checks/`, {}));
      const rerun = (await checksByName(s.pipeline.client, s.cr.id))['always-ok'];
      assert.equal(rerun.completed, always.completed);
      svc.clock.advance(60_000);
    });
  });

  describe('required comes from the declarations, never from the stored row', () => {
    it('MergeCheck required: read-only on the API; PATCH required=false is ignored and the gate stays closed', async () => {
      const s = await approvedRequest();
      const checks = await checksByName(s.pipeline.client, s.cr.id);
      const res = await ok(s.pipeline.client.patch(`${CHECKS}${checks['ci/build'].id}/`, { required: false }));
      assert.equal(res.required, true);
      const res2 = await ok(
        s.pipeline.client.patch(`${CHECKS}${checks['lint'].id}/`, { required: false, status: 'failure' }),
      );
      assertCheck(res2, { required: true, blocks_merge: true, status: 'failure' });
      const d = await detail(s.author.client, s.cr.id);
      assert.equal(d.ready_to_merge, false);
      assert.match(d.merge_blocked_reason, /CI build/);
    });

    it('Authentication rule 4: a reporting pipeline cannot decide whether its own check counts (required and change_request read-only, no delete, no policy edit)', async () => {
      const s = await approvedRequest();
      const ci = (await checksByName(s.pipeline.client, s.cr.id))['ci/build'];
      const res = await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { required: false, change_request: 999999 }));
      assertCheck(res, { required: true, blocks_merge: true });
      assert.equal(res.change_request, s.cr.id);
      expectStatus(await s.pipeline.client.delete(`${CHECKS}${ci.id}/`), 403, 'deleting its check');
      const policies = await svc.admin.get(POLICIES);
      expectStatus(
        await s.pipeline.client.patch(`${POLICIES}${policies.body.results[0].id}/`, { checks: [] }),
        403,
        'editing the policy',
      );
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, false);
    });

    it('Deleting a required check row through the API does not open the gate: the reported check is declared again, pending', async () => {
      const s = await approvedRequest();
      await reportAll(s, 'success');
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
      const checks = await checksByName(s.pipeline.client, s.cr.id);
      expectStatus(await svc.admin.delete(`${CHECKS}${checks['ci/build'].id}/`), 204);
      const d = await detail(s.author.client, s.cr.id);
      assert.equal(d.ready_to_merge, false);
      assert.equal(d.gates_cleared, false);
      assert.match(d.merge_blocked_reason, /Required check "CI build" is pending/);
      const again = await checksByName(s.pipeline.client, s.cr.id);
      assert.notEqual(again['ci/build'].id, checks['ci/build'].id);
      assertCheck(again['ci/build'], { status: 'pending', required: true, blocks_merge: true });
      assert.equal(again['ci/build'].completed, null);
      const refused = await s.author.client.post(`/api/plugins/branching/branches/${s.branchId}/merge/`, {
        commit: true,
      });
      expectStatus(refused, 409);
      assert.match(refused.body.detail, /CI build/);
    });

    it('A required check with no result is treated as not run and blocks (row gone from storage)', async () => {
      const s = await approvedRequest();
      await reportAll(s, 'success');
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
      await ccTables(svc)
        .deleteFrom('cc_merge_checks')
        .where('change_request_id', '=', s.cr.id)
        .where('name', 'in', ['ci/build', 'always-ok'])
        .execute();
      const d = await detail(s.author.client, s.cr.id);
      assert.equal(d.ready_to_merge, false);
      assert.match(d.merge_blocked_reason, /Required check "CI build" has not run/);
      assert.match(d.merge_blocked_reason, /Required check "Always fine" has not run/);
      const refused = await s.author.client.post(`/api/plugins/branching/branches/${s.branchId}/merge/`, {
        commit: true,
      });
      expectStatus(refused, 409);
      assert.match(refused.body.detail, /"CI build" has not run/);
    });

    it('A check with required false is advisory: it shows its failing result and never blocks', async () => {
      const s = await approvedRequest();
      await reportAll(s, 'success');
      const checks = await checksByName(s.pipeline.client, s.cr.id);
      assertCheck(checks['advisory-lint'], {
        status: 'failure',
        summary: '3 warnings',
        required: false,
        blocks_merge: false,
      });
      const d = await detail(s.author.client, s.cr.id);
      assert.equal(d.ready_to_merge, true, d.merge_blocked_reason);
      assert.doesNotMatch(d.merge_blocked_reason, /Advisory/);
    });

    it('A row nothing declares (created by hand) is advisory: its failure does not block', async () => {
      const s = await approvedRequest();
      await reportAll(s, 'success');
      const made = await svc.admin.post(CHECKS, {
        change_request: s.cr.id,
        name: 'manual/extra',
        status: 'failure',
        required: true,
      });
      expectStatus(made, 201);
      assertCheck(made.body, { required: false, blocks_merge: false, status: 'failure' });
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
    });

    it('General rule 1: a required check that is not passing blocks the merge on its own, whatever the reviews say', async () => {
      const s = await approvedRequest();
      const d = await detail(s.author.client, s.cr.id);
      assert.equal(d.approved, true);
      assert.equal(d.ready_to_merge, false);
      await reportAll(s, 'success');
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
    });
  });

  describe('check statuses', () => {
    const table: Array<[string, boolean]> = [
      ['success', true],
      ['skipped', true],
      ['pending', false],
      ['running', false],
      ['failure', false],
      ['error', false],
    ];
    for (const [status, clears] of table) {
      it(`Check statuses row "${status}": ${clears ? 'clears' : 'does not clear'} the gate`, async () => {
        const s = await approvedRequest();
        // Move away from the status first, so the report is a real change.
        await reportAll(s, status === 'running' ? 'failure' : 'running');
        await reportAll(s, status);
        const checks = await checksByName(s.pipeline.client, s.cr.id);
        assertCheck(checks['ci/build'], { status, blocks_merge: !clears });
        const d = await detail(s.author.client, s.cr.id);
        assert.equal(d.ready_to_merge, clears, d.merge_blocked_reason);
        assert.equal(d.gates_cleared, clears);
        if (!clears) assert.match(d.merge_blocked_reason, /Required check "CI build"/);
      });
    }
  });

  describe('GET checks/ and PATCH checks/{id}/ (Endpoints rows, Notes 1 and 2)', () => {
    it('Endpoints GET checks/: filters change_request_id and name, alone and together', async () => {
      const a = await setup(svc);
      const b = await setup(svc);
      const byRequest = await ok(a.pipeline.client.get(`${CHECKS}?change_request_id=${a.cr.id}`));
      assert.equal(byRequest.count, 4);
      assert.ok(byRequest.results.every((c: any) => c.change_request === a.cr.id));
      const byName = await ok(
        a.pipeline.client.get(`${CHECKS}?name=ci/build&change_request_id=${a.cr.id}&change_request_id=${b.cr.id}`),
      );
      assert.deepEqual(byName.results.map((c: any) => c.change_request).sort(), [a.cr.id, b.cr.id].sort());
      const both = await ok(a.pipeline.client.get(`${CHECKS}?change_request_id=${b.cr.id}&name=lint`));
      assert.equal(both.count, 1);
      assertCheck(both.results[0], { name: 'lint', label: 'lint', change_request: b.cr.id });
      const none = await ok(a.pipeline.client.get(`${CHECKS}?change_request_id=${b.cr.id}&name=nope`));
      assert.equal(none.count, 0);
      const bad = await a.pipeline.client.get(`${CHECKS}?change_request_id=abc`);
      expectStatus(bad, 400);
      assert.match(JSON.stringify(bad.body), /change_request_id/);
    });

    it('Note 2: the pipeline flow: find the check by change_request_id and name, take results[0].id, PATCH running then the result', async () => {
      const s = await approvedRequest();
      const found = await ok(
        s.pipeline.client.get(`${CHECKS}?change_request_id=${s.cr.id}&name=${encodeURIComponent('ci/build')}`),
      );
      const id = found.results[0].id;
      const running = await ok(
        s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'running', details_url: 'https://ci.example.com/1' }),
      );
      assertCheck(running, { status: 'running', blocks_merge: true });
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, false);
      const lint = await ok(s.pipeline.client.get(`${CHECKS}?change_request_id=${s.cr.id}&name=lint`));
      await ok(
        s.pipeline.client.patch(`${CHECKS}${lint.results[0].id}/`, { status: 'skipped', summary: 'no lintable files' }),
      );
      const done = await ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success', summary: 'all green' }));
      assertCheck(done, { status: 'success', summary: 'all green', blocks_merge: false });
      const d = await detail(s.author.client, s.cr.id);
      assert.equal(d.ready_to_merge, true, d.merge_blocked_reason);
      const listed = await ok(s.author.client.get(`${REQUESTS}?gates_cleared=true&id=${s.cr.id}`));
      assert.equal(listed.count, 1, 'the cached gates_cleared follows the report');
    });

    it("Note 1: a policy's checks are replaced whole; reading first and sending the combined list adds a name, and the request then carries it pending", async () => {
      const s = await approvedRequest();
      await reportAll(s, 'success');
      const mine = (await ok(svc.admin.get(`${REQUESTS}${s.cr.id}/`))).policies[0];
      await ok(svc.admin.patch(`${POLICIES}${mine.id}/`, { checks: ['ci/extra'] }));
      const current = await ok(svc.admin.get(`${POLICIES}${mine.id}/`));
      assert.deepEqual(current.checks, ['ci/extra']);
      const combined = [...current.checks, 'security/scan'];
      const patched = await ok(svc.admin.patch(`${POLICIES}${mine.id}/`, { checks: combined }));
      assert.deepEqual(patched.checks, ['ci/extra', 'security/scan']);
      const found = await ok(s.pipeline.client.get(`${CHECKS}?change_request_id=${s.cr.id}&name=security/scan`));
      assert.equal(found.count, 1, 'the newly named reported check is there for the pipeline to find');
      assertCheck(found.results[0], { status: 'pending', required: true, blocks_merge: true });
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, false);
      // Sending only the new name drops the rest: the list is replaced whole.
      const replaced = await ok(svc.admin.patch(`${POLICIES}${mine.id}/`, { checks: ['other/scan'] }));
      assert.deepEqual(replaced.checks, ['other/scan']);
    });
  });

  describe('permission matrix', () => {
    it('PATCH checks/{id}/ without change_mergecheck: 403', async () => {
      const s = await setup(svc);
      const viewer = await actor(svc, `viewer-${s.cr.id}`, [
        { object_types: ['change_control.mergecheck', 'change_control.changerequest'], actions: ['view'] },
      ]);
      const ci = (await checksByName(viewer.client, s.cr.id))['ci/build'];
      expectStatus(await viewer.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }), 403);
      assert.equal((await ok(viewer.client.get(`${CHECKS}${ci.id}/`))).status, 'pending');
    });

    it('PATCH checks/{id}/ with a constraint that excludes the check: 404 (and absent from the list)', async () => {
      const s = await setup(svc);
      const narrow = await actor(svc, `narrow-${s.cr.id}`, [
        { object_types: ['change_control.changerequest'], actions: ['view'] },
        { object_types: ['change_control.mergecheck'], actions: ['view', 'change'], constraints: { name: 'lint' } },
      ]);
      const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
      expectStatus(await narrow.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }), 404);
      const visible = await checksByName(narrow.client, s.cr.id);
      assert.deepEqual(Object.keys(visible), ['lint']);
      await ok(narrow.client.patch(`${CHECKS}${visible['lint'].id}/`, { status: 'success' }));
      assert.equal((await checksByName(svc.admin, s.cr.id))['ci/build'].status, 'pending');
    });

    it('PATCH checks/{id}/ on a visible check the change constraint excludes: 403 (host rule), nothing written', async () => {
      const s = await setup(svc);
      const narrow = await actor(svc, `visible-${s.cr.id}`, [
        { object_types: ['change_control.changerequest', 'change_control.mergecheck'], actions: ['view'] },
        {
          object_types: ['change_control.mergecheck'],
          actions: ['change'],
          constraints: { change_request: s.cr.id + 100000 },
        },
      ]);
      const ci = (await checksByName(narrow.client, s.cr.id))['ci/build'];
      expectStatus(await narrow.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }), 403);
      assert.equal((await checksByName(svc.admin, s.cr.id))['ci/build'].status, 'pending');
    });

    it('PATCH checks/{id}/ with change_mergecheck: 200 and the updated check', async () => {
      const s = await setup(svc);
      const reporter = await actor(svc, `reporter-${s.cr.id}`, PIPELINE);
      const ci = (await checksByName(reporter.client, s.cr.id))['ci/build'];
      const res = await ok(reporter.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
      assert.equal(res.status, 'success');
    });

    it('POST checks/ (declaring a check by hand) without add_mergecheck: 403; with it: 201; an add constraint excluding the new check: 403 and nothing written', async () => {
      const s = await setup(svc);
      const body = { change_request: s.cr.id, name: 'manual/review-board', label: 'Review board' };
      expectStatus(await s.pipeline.client.post(CHECKS, body), 403);
      const narrow = await actor(svc, `add-narrow-${s.cr.id}`, [
        ...PIPELINE,
        { object_types: ['change_control.mergecheck'], actions: ['add'], constraints: { name: 'manual/other' } },
      ]);
      expectStatus(await narrow.client.post(CHECKS, body), 403);
      assert.equal((await checksByName(svc.admin, s.cr.id))['manual/review-board'], undefined);
      const adder = await actor(svc, `adder-${s.cr.id}`, [
        ...PIPELINE,
        { object_types: ['change_control.mergecheck'], actions: ['add'] },
      ]);
      const made = await adder.client.post(CHECKS, body);
      expectStatus(made, 201);
      assertCheck(made.body, {
        name: 'manual/review-board',
        label: 'Review board',
        status: 'pending',
        required: false,
      });
      expectStatus(await adder.client.post(CHECKS, body), 400, 'a second check of that name on the request');
    });

    it('POST checks/ onto a change request the caller cannot see: 400 naming change_request (as if it did not exist)', async () => {
      const s = await setup(svc);
      const blind = await actor(svc, `blind-${s.cr.id}`, [
        { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: 'OTHER' } },
        { object_types: ['change_control.mergecheck'], actions: ['view', 'add'] },
      ]);
      const res = await blind.client.post(CHECKS, { change_request: s.cr.id, name: 'manual/x' });
      expectStatus(res, 400);
      assert.ok(res.body.change_request, JSON.stringify(res.body));
    });

    it('DELETE checks/{id}/ without delete_mergecheck: 403; with a constraint that excludes the check: 404; with it: 204', async () => {
      const s = await setup(svc);
      const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
      expectStatus(await s.pipeline.client.delete(`${CHECKS}${ci.id}/`), 403);
      const narrow = await actor(svc, `del-narrow-${s.cr.id}`, [
        { object_types: ['change_control.mergecheck'], actions: ['view', 'delete'], constraints: { name: 'lint' } },
      ]);
      expectStatus(await narrow.client.delete(`${CHECKS}${ci.id}/`), 404);
      const deleter = await actor(svc, `deleter-${s.cr.id}`, [
        { object_types: ['change_control.mergecheck', 'change_control.changerequest'], actions: ['view', 'delete'] },
      ]);
      expectStatus(await deleter.client.delete(`${CHECKS}${ci.id}/`), 204);
      expectStatus(await deleter.client.get(`${CHECKS}${ci.id}/`), 404);
    });

    it('POST run-checks/ without change_mergecheck: 403; with it: 200 and the change request', async () => {
      const s = await setup(svc);
      const viewer = await actor(svc, `rc-viewer-${s.cr.id}`, [
        { object_types: ['change_control.mergecheck', 'change_control.changerequest'], actions: ['view'] },
      ]);
      const refused = await viewer.client.post(`${REQUESTS}${s.cr.id}/run-checks/`, {});
      expectStatus(refused, 403);
      assert.ok(refused.body.detail);
      const res = await ok(s.pipeline.client.post(`${REQUESTS}${s.cr.id}/run-checks/`, {}));
      assert.equal(res.id, s.cr.id);
      assert.equal(res.actions.run_checks.allowed, true);
      const viewed = await ok(viewer.client.get(`${REQUESTS}${s.cr.id}/`));
      assert.equal(viewed.actions.run_checks.allowed, false);
    });

    it('POST run-checks/ says per check whether it ran and, if not, why (check_run)', async () => {
      const s = await setup(svc, { policy: { name: `rerun-${Date.now()}`, checks: ['no-conflicts', 'manual/qa'] } });
      const res = await ok(s.pipeline.client.post(`${REQUESTS}${s.cr.id}/run-checks/`, {}));
      const byName = Object.fromEntries(res.check_run.map((e: any) => [e.name, e]));
      // Registered checks the request carries ran, with their result now.
      assert.deepEqual(byName['always-ok'], {
        name: 'always-ok',
        label: 'Always fine',
        ran: true,
        status: 'success',
        reason: null,
      });
      assert.deepEqual([byName['advisory-lint'].ran, byName['advisory-lint'].status], [true, 'failure']);
      assert.deepEqual([byName['no-conflicts'].ran, byName['no-conflicts'].status], [true, 'success']);
      // Reported checks never run here: they wait for a report; the answer names where they come from.
      assert.equal(byName['ci/build'].ran, false);
      assert.equal(byName['ci/build'].status, 'pending');
      assert.match(byName['ci/build'].reason, /reported check \(declared by required_external_checks\).*never runs it/);
      assert.match(byName['manual/qa'].reason, /declared by policy "rerun-\d+"/);
      // A built-in no governing policy names does not apply, and says so.
      assert.equal(byName['has-changes'].ran, false);
      assert.equal(byName['has-changes'].status, null);
      assert.match(byName['has-changes'].reason, /none of its policies \("rerun-\d+"\) does/);
      assert.equal(res.id, s.cr.id);
    });

    it('POST run-checks/ with a constraint that excludes the change request: 404', async () => {
      const s = await setup(svc);
      const narrow = await actor(svc, `rc-narrow-${s.cr.id}`, [
        { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: 'OTHER-1' } },
        { object_types: ['change_control.mergecheck'], actions: ['view', 'change'] },
      ]);
      expectStatus(await narrow.client.post(`${REQUESTS}${s.cr.id}/run-checks/`, {}), 404);
    });

    it("POST run-checks/ when the change_mergecheck constraint excludes the request's checks: 403, nothing runs", async () => {
      const s = await setup(svc);
      const narrow = await actor(svc, `rc-checks-${s.cr.id}`, [
        { object_types: ['change_control.changerequest', 'change_control.mergecheck'], actions: ['view'] },
        {
          object_types: ['change_control.mergecheck'],
          actions: ['change'],
          constraints: { change_request: s.cr.id + 100000 },
        },
      ]);
      const before = await checksByName(svc.admin, s.cr.id);
      svc.clock.advance(1000);
      const res = await narrow.client.post(`${REQUESTS}${s.cr.id}/run-checks/`, {});
      expectStatus(res, 403);
      assert.match(
        res.body.detail,
        /change_control.change_mergecheck, for the checks of this change request, to re-run them/,
      );
      assert.deepEqual(await checksByName(svc.admin, s.cr.id), before);
      // A constraint admitting this request's checks lets the same kind of caller re-run them.
      const admitted = await actor(svc, `rc-admitted-${s.cr.id}`, [
        { object_types: ['change_control.changerequest', 'change_control.mergecheck'], actions: ['view'] },
        { object_types: ['change_control.mergecheck'], actions: ['change'], constraints: { change_request: s.cr.id } },
      ]);
      await ok(admitted.client.post(`${REQUESTS}${s.cr.id}/run-checks/`, {}));
    });

    it('POST run-checks/ on a request that is not open: 409 with the reason in detail', async () => {
      const s = await setup(svc);
      await ok(svc.admin.post(`${REQUESTS}${s.cr.id}/abandon/`, {}));
      const res = await s.pipeline.client.post(`${REQUESTS}${s.cr.id}/run-checks/`, {});
      expectStatus(res, 409);
      assert.match(res.body.detail, /abandoned/);
    });
  });

  describe('concurrency', () => {
    it('parallel check reports: 20 concurrent PATCHes to different checks all land', async () => {
      const names = Array.from({ length: 20 }, (_, i) => `pipeline/job-${i}`);
      const s = await setup(svc, { policy: { checks: names } });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      await approve(s.reviewer, s.cr.id);
      await reportAll(s, 'success');
      const checks = await checksByName(s.pipeline.client, s.cr.id);
      const responses = await Promise.all(
        names.map((n, i) =>
          s.pipeline.client.patch(`${CHECKS}${checks[n].id}/`, { status: 'success', summary: `job ${i}` }),
        ),
      );
      for (const r of responses) expectStatus(r, 200);
      const after = await checksByName(s.pipeline.client, s.cr.id);
      names.forEach((n, i) => assertCheck(after[n], { status: 'success', summary: `job ${i}`, blocks_merge: false }));
      for (const n of names)
        assert.equal((await checkChangelog(svc.admin, checks[n].id)).filter((e) => e.action === 'update').length, 1, n);
      const d = await detail(s.author.client, s.cr.id);
      assert.equal(d.ready_to_merge, true, d.merge_blocked_reason);
      assert.equal(d.gates_cleared, true);
    });
  });
});
