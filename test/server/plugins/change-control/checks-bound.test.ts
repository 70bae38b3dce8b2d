import assert from 'node:assert/strict';
import { eachTestService, startService, withService, type TestService } from '../../../support/service';
import { settled } from '../../../support/quiet';
import {
  REQUESTS,
  actor,
  checkNamed,
  CHECKS,
  detail,
  DEVICES,
  expectStatus,
  group,
  ok,
  POLICIES,
  REVIEWS,
  VIEW_ALL,
} from './fixtures';
import { gateCast, mergeBranch, scenario, type Scenario } from './gate-support';
import { forEachTest } from '../../../support/prepared';

/** A pipeline's grants: view and report checks. */
const PIPELINE = [...VIEW_ALL, { object_types: ['change_control.mergecheck'], actions: ['view', 'change'] }];

describe('change control: check results bound to what they checked', () => {
  const svc = eachTestService();
  const cast = forEachTest(() => gateCast(svc));

  async function withCheck(settings: Record<string, unknown> = {}): Promise<void> {
    await ok(
      svc.admin.patch(`${POLICIES}${cast.policyId}/`, {
        checks: ['ci/build'],
        check_settings: { 'ci/build': settings },
      }),
    );
  }
  const report = (client: TestService['admin'], id: number, body: Record<string, unknown>) =>
    client.patch(`${CHECKS}${id}/`, body);

  async function editBranch(s: Scenario): Promise<void> {
    const dev = (await ok(s.inBranch.get(`${DEVICES}?name=${s.branch.name}-dev`))).results[0];
    await ok(s.inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'active' }));
    // The approval went stale with the edit; the reviewer approves the new content.
    const r = (await ok(cast.reviewer.client.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).results[0];
    await ok(cast.reviewer.client.patch(`${REVIEWS}${r.id}/`, {}));
  }

  it('Digest on a result: a report takes the digest at report time; after the branch moves the result is outdated, blocks, and the gate says why', async () => {
    await withCheck();
    const s = await scenario(cast, 'bound-outdated');
    const pipeline = await actor(svc, 'pipeline', PIPELINE);
    const check = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    const passed = await ok(report(pipeline.client, check.id, { status: 'success' }));
    const cr = await detail(cast.author.client, s.cr.id);
    assert.equal(passed.digest, cr.digest);
    assert.equal(passed.outdated, false);
    assert.equal(cr.ready_to_merge, true, cr.merge_blocked_reason);

    await editBranch(s);
    const moved = await detail(cast.author.client, s.cr.id);
    assert.equal(moved.status, 'approved');
    const stale = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    assert.equal(stale.status, 'success');
    assert.equal(stale.outdated, true);
    assert.equal(stale.blocks_merge, true);
    assert.equal(moved.ready_to_merge, false);
    assert.match(moved.merge_blocked_reason, /"ci\/build" passed on an earlier version of the branch/);
    // The request says which check blocks for being outdated: on its detail and on its row in lists.
    const outdated = [{ name: 'ci/build', label: 'ci/build', reason: 'outdated' }];
    assert.deepEqual(moved.stale_checks, outdated);
    assert.deepEqual((await ok(cast.author.client.get(`${REQUESTS}?id=${s.cr.id}`))).results[0].stale_checks, outdated);
    expectStatus(await mergeBranch(cast.author.client, s.branch.id), 409);

    // The pipeline ran on the old content: sending that digest keeps the result outdated.
    const old = await ok(report(pipeline.client, check.id, { status: 'success', summary: 'rerun', digest: cr.digest }));
    assert.equal(old.outdated, true);
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, false);
    // On the current content it clears the gate.
    const current = await ok(report(pipeline.client, check.id, { status: 'success', digest: moved.digest }));
    assert.equal(current.outdated, false);
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
    await ok(mergeBranch(cast.author.client, s.branch.id));
  });

  it('Digest on a result: a digest that is not 64 lowercase hex digits is a 400 naming digest, nothing written', async () => {
    await withCheck();
    const s = await scenario(cast, 'bound-bad-digest');
    const check = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    for (const digest of ['abc', 'X'.repeat(64), 42, '']) {
      const res = await report(svc.admin, check.id, { status: 'success', digest });
      expectStatus(res, 400, String(digest));
      assert.ok(res.body.digest, JSON.stringify(res.body));
    }
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).status, 'pending');
  });

  it('Reporter: a check naming its reporter refuses every other caller (403), superusers included; its reporter and members of its group report', async () => {
    const ci = await actor(svc, 'ci-bot', PIPELINE);
    const bots = await actor(svc, 'bot-two', PIPELINE);
    const gid = await group(svc, 'ci-bots', [bots.id]);
    await withCheck({ reporter: { users: [ci.id], groups: [gid] } });
    const s = await scenario(cast, 'bound-reporter');
    const check = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    const other = await actor(svc, 'other-pipeline', PIPELINE);
    for (const client of [other.client, svc.admin]) {
      const res = await report(client, check.id, { status: 'success' });
      expectStatus(res, 403);
      assert.match(res.body.detail, /Only the declared reporter may report check "ci\/build"/);
    }
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).status, 'pending', 'nothing written');
    await ok(report(ci.client, check.id, { status: 'running' }));
    await ok(report(bots.client, check.id, { status: 'success' }));
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
  });

  it("Reporter: check_settings may name only the policy's checks and existing users and groups (400)", async () => {
    const bad = await svc.admin.patch(`${POLICIES}${cast.policyId}/`, {
      checks: ['ci/build'],
      check_settings: { 'ci/lint': { timeout_minutes: 5 } },
    });
    expectStatus(bad, 400);
    assert.ok(bad.body.check_settings, JSON.stringify(bad.body));
    expectStatus(
      await svc.admin.patch(`${POLICIES}${cast.policyId}/`, {
        checks: ['ci/build'],
        check_settings: { 'ci/build': { reporter: { users: [9999] } } },
      }),
      400,
    );
    expectStatus(
      await svc.admin.patch(`${POLICIES}${cast.policyId}/`, {
        checks: ['ci/build'],
        check_settings: { 'ci/build': { timeout_minutes: 0 } },
      }),
      400,
    );
    const p = await ok(
      svc.admin.patch(`${POLICIES}${cast.policyId}/`, {
        checks: ['ci/build'],
        check_settings: { 'ci/build': { timeout_minutes: 30 } },
      }),
    );
    assert.deepEqual(p.check_settings, { 'ci/build': { reporter: null, timeout_minutes: 30 } });
  });

  it('Reporter in the configuration: required_external_checks names it by username', async () => {
    await withService(
      startService({
        config: {
          change_control: {
            required_external_checks: [{ name: 'sec/scan', label: 'Security scan', reporter: { users: ['scanner'] } }],
          },
        },
      }),
      async (other) => {
        const c = await gateCast(other);
        const s = await scenario(c, 'bound-config');
        const check = await checkNamed(other.admin, s.cr.id, 'sec/scan');
        const intruder = await actor(other, 'intruder', PIPELINE);
        expectStatus(await intruder.client.patch(`${CHECKS}${check.id}/`, { status: 'success' }), 403);
        const scanner = await actor(other, 'scanner', PIPELINE);
        await ok(scanner.client.patch(`${CHECKS}${check.id}/`, { status: 'success' }));
      },
    );
  });

  it('timeout_minutes: a required reported check pending longer than that becomes failure saying it never reported, at its deadline', async () => {
    await withCheck({ timeout_minutes: 30 });
    const s = await scenario(cast, 'bound-timeout');
    const pending = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    const deadline = new Date(Date.parse(pending.last_updated) + 30 * 60_000).toISOString();
    assert.equal(pending.deadline, deadline);
    assert.equal(pending.timed_out, false);
    svc.clock.set(new Date(Date.parse(deadline) - 1000));
    await settled(svc);
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).status, 'pending');
    // The gate's clock waits for the deadline itself: moving the clock there fails the check.
    svc.clock.set(deadline);
    await settled(svc);
    const failed = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    assert.equal(failed.status, 'failure');
    assert.equal(failed.timed_out, true);
    assert.equal(failed.deadline, null);
    const timedOut = [{ name: 'ci/build', label: 'ci/build', reason: 'timed_out' }];
    assert.deepEqual((await detail(cast.author.client, s.cr.id)).stale_checks, timedOut);
    assert.deepEqual((await ok(cast.author.client.get(`${REQUESTS}?id=${s.cr.id}`))).results[0].stale_checks, timedOut);
    assert.match(failed.summary, /Never reported: still pending after 30 minutes/);
    assert.match(
      (await detail(cast.author.client, s.cr.id)).merge_blocked_reason,
      /"ci\/build" failed \(Never reported/,
    );
    // A later report replaces it as usual (and it no longer says it timed out).
    await ok(report(svc.admin, failed.id, { status: 'success' }));
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).timed_out, false);
    assert.deepEqual((await ok(cast.author.client.get(`${REQUESTS}?id=${s.cr.id}`))).results[0].stale_checks, []);
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
  });
});
