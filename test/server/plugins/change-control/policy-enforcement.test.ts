import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import {
  actor,
  branch,
  checkNamed,
  CC,
  created,
  detail,
  device,
  expectStatus,
  ok,
  policy,
  POLICIES,
  REQUESTS,
  review,
  REVIEWER,
  VIEW_ALL,
  type PermissionGrant,
} from './fixtures';
import { gateCast, scenario } from './gate-support';
import { forEachTest } from '../../../support/prepared';

const PREVIEW = `${CC}preview/`;

describe('change control: policies you can try before they bite (enforcement, preview)', () => {
  const svc = eachTestService();
  const cast = forEachTest(() => gateCast(svc));

  async function trialPolicy(users: number[]): Promise<number> {
    const p = await policy(svc, {
      name: 'Trial',
      object_types: ['dcim.device'],
      checks: ['trial/scan'],
      rules: [{ name: 'security', users }],
    });
    await ok(svc.admin.patch(`${POLICIES}${p.id}/`, { enforcement: 'evaluate' }));
    return p.id;
  }

  it('enforcement "evaluate": the policy is matched and evaluated, its would-be blocking reasons shown, and it never blocks', async () => {
    const sec = await actor(svc, 'security', REVIEWER);
    const trialId = await trialPolicy([sec.id]);
    assert.equal((await ok(svc.admin.get(`${POLICIES}${trialId}/`))).enforcement, 'evaluate');
    const s = await scenario(cast, 'enf-evaluate');
    const cr = await detail(cast.author.client, s.cr.id);
    assert.deepEqual(
      cr.policies.map((p: any) => [p.name, p.enforcement]),
      [
        ['Devices', 'active'],
        ['Trial', 'evaluate'],
      ],
    );
    assert.equal(cr.status, 'approved');
    assert.equal(cr.ready_to_merge, true, cr.merge_blocked_reason);
    assert.equal(
      (await checkNamed(svc.admin, s.cr.id, 'trial/scan')).required,
      false,
      "an evaluating policy's check is advisory",
    );

    const ev = await ok(cast.author.client.get(`${REQUESTS}${s.cr.id}/evaluation/`));
    const trial = ev.policies.find((p: any) => p.name === 'Trial');
    assert.equal(trial.enforcement, 'evaluate');
    assert.ok(
      trial.blocking_reasons.some((r: string) =>
        /Rule "security" of policy "Trial" has 0 of 1 required approval/.test(r),
      ),
      trial.blocking_reasons.join(' | '),
    );
    assert.ok(
      trial.blocking_reasons.some((r: string) => /Check "trial\/scan" is pending/.test(r)),
      trial.blocking_reasons.join(' | '),
    );
    assert.deepEqual(ev.reasons, []);

    // A rejection by someone only the evaluating policy makes eligible does not reject.
    expectStatus(await review(sec.client, s.cr.id, 'reject', 'Not yet scanned.'), 201);
    const after = await detail(cast.author.client, s.cr.id);
    assert.equal(after.status, 'approved');
    assert.ok(
      (await ok(cast.author.client.get(`${REQUESTS}${s.cr.id}/evaluation/`))).policies
        .find((p: any) => p.name === 'Trial')
        .blocking_reasons.includes('Changes requested by security.'),
    );

    // Made active, it blocks with the same words.
    await ok(svc.admin.patch(`${POLICIES}${trialId}/`, { enforcement: 'active' }));
    const active = await detail(cast.author.client, s.cr.id);
    assert.equal(active.ready_to_merge, false);
    assert.match(active.merge_blocked_reason, /Changes requested by security/);
    assert.match(active.merge_blocked_reason, /Required check "trial\/scan" is pending/);
  });

  it('Advisory reviews: a reviewer only a policy on trial names is listed under advisory_reviewer=me (not reviewer=me), their review says advisory; one an active rule names too is not advisory', async () => {
    const sec = await actor(svc, 'security', REVIEWER);
    await trialPolicy([sec.id, cast.reviewer.id]);
    const s = await scenario(cast, 'advisory', { upTo: 'needs-review' });
    const ids = async (who: typeof sec, filter: string) =>
      (await ok(who.client.get(`${REQUESTS}?${filter}=me`))).results.map((r: any) => r.id);
    assert.deepEqual(await ids(sec, 'advisory_reviewer'), [s.cr.id]);
    assert.deepEqual(await ids(sec, 'reviewer'), [], 'not "needs my review": it decides nothing');
    assert.deepEqual(await ids(cast.reviewer, 'reviewer'), [s.cr.id]);
    assert.deepEqual(await ids(cast.reviewer, 'advisory_reviewer'), [], 'an active rule names them: binding');

    const advisory = await created(sec.client.post(`${CC}reviews/`, { change_request: s.cr.id, decision: 'approve' }));
    assert.equal(advisory.advisory, true);
    const binding = await created(
      cast.reviewer.client.post(`${CC}reviews/`, { change_request: s.cr.id, decision: 'approve' }),
    );
    assert.equal(binding.advisory, false);
    const listed = (await ok(cast.author.client.get(`${CC}reviews/?change_request_id=${s.cr.id}&ordering=id`))).results;
    assert.deepEqual(
      listed.map((r: any) => [r.reviewer.username, r.advisory]),
      [
        ['security', true],
        ['reviewer', false],
      ],
    );
    assert.deepEqual(await ids(sec, 'advisory_reviewer'), [], 'reviewed: no longer waited for');
    // Closed, it waits for nobody.
    const other = await scenario(cast, 'advisory-closed', { upTo: 'needs-review' });
    assert.deepEqual(await ids(sec, 'advisory_reviewer'), [other.cr.id]);
    await ok(svc.admin.post(`${REQUESTS}${other.cr.id}/abandon/`, {}));
    assert.deepEqual(await ids(sec, 'advisory_reviewer'), []);
  });

  it('enforcement: only "active" or "evaluate" (400 naming enforcement)', async () => {
    const res = await svc.admin.patch(`${POLICIES}${cast.policyId}/`, { enforcement: 'dry-run' });
    expectStatus(res, 400);
    assert.ok(res.body.enforcement, JSON.stringify(res.body));
  });

  it('Preview: for a branch without a change request, the policies and rules that would govern it, the checks it would need, what would block it', async () => {
    const sec = await actor(svc, 'security', REVIEWER);
    await trialPolicy([sec.id]);
    await ok(
      svc.admin.patch(`${POLICIES}${cast.policyId}/`, {
        checks: ['ci/build', 'has-changes'],
        check_settings: { 'ci/build': { reporter: { users: [sec.id] }, timeout_minutes: 15 } },
      }),
    );
    const work = await branch(cast.author.client, 'preview-branch');
    await device(work.inBranch, { name: 'preview-dev', status: 'planned' });
    const p = await ok(cast.author.client.get(`${PREVIEW}?branch_id=${work.branch.id}`));
    assert.deepEqual(p.branch, { id: work.branch.id, name: 'preview-branch', status: 'ready' });
    assert.match(p.digest, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      p.policies.map((x: any) => [x.name, x.enforcement]),
      [
        ['Devices', 'active'],
        ['Trial', 'evaluate'],
      ],
    );
    assert.deepEqual(
      p.policies[0].rules[0].eligible_users.map((u: any) => u.username),
      ['reviewer'],
    );
    assert.deepEqual(
      p.checks.map((c: any) => [c.name, c.required, c.registered, c.reporter_restricted, c.timeout_minutes]),
      [
        ['ci/build', true, false, true, 15],
        ['has-changes', true, true, false, null],
        ['trial/scan', false, false, false, null],
      ],
    );
    assert.ok(
      p.reasons.some((r: string) => /Rule "netops" of policy "Devices" has 0 of 1 required approval/.test(r)),
      p.reasons.join(' | '),
    );
    assert.ok(p.reasons.includes('Required check "ci/build" waits for a report.'), p.reasons.join(' | '));
    assert.ok(!p.reasons.some((r: string) => /Trial/.test(r)), 'an evaluating policy blocks nothing');
    const requests = await ok(svc.admin.get(`${REQUESTS}?branch_id=${work.branch.id}`));
    assert.equal(requests.count, 0, 'the preview wrote nothing');
  });

  it('Preview: lists the freezes that would apply (global and of its active policies, in force or next, with their rule); a registered check is not said to block before it could run; a conflict with main is said', async () => {
    const freeze = await created(
      svc.admin.post(`${CC}freezes/`, { name: 'Year end', start: '2026-11-01T08:00:00Z', end: '2026-11-02T00:00:00Z' }),
    );
    await created(
      svc.admin.post(`${CC}freezes/`, {
        name: 'Mondays',
        weekdays: [1],
        start_time: '08:00',
        end_time: '12:00',
        time_zone: 'America/New_York',
        policy: cast.policyId,
      }),
    );
    const other = await policy(svc, { name: 'Sites', object_types: ['dcim.site'] });
    await created(
      svc.admin.post(`${CC}freezes/`, {
        name: 'Sites only',
        start: '2026-11-01T08:00:00Z',
        end: '2026-11-02T00:00:00Z',
        policy: other.id,
      }),
    );
    await ok(svc.admin.patch(`${POLICIES}${cast.policyId}/`, { checks: ['mergeable'] }));
    const shared = await created(svc.admin.post('/api/dcim/devices/', { name: 'shared-sw', status: 'active' }));
    const work = await branch(cast.author.client, 'preview-frozen');
    await ok(work.inBranch.patch(`/api/dcim/devices/${shared.id}/`, { status: 'planned' }));
    await ok(svc.admin.patch(`/api/dcim/devices/${shared.id}/`, { status: 'offline' }));
    const p = await ok(cast.author.client.get(`${PREVIEW}?branch_id=${work.branch.id}`));
    assert.deepEqual(
      p.freezes.map((f: any) => [f.name, f.active, f.kind, f.time_zone]),
      [
        ['Year end', true, 'once', 'UTC'],
        ['Mondays', false, 'recurring', 'America/New_York'],
      ],
    );
    assert.ok(
      p.reasons.includes(`Merging is frozen by "Year end" until 2026-11-02T00:00:00.000Z.`),
      p.reasons.join(' | '),
    );
    assert.ok(!p.reasons.some((r: string) => /has not run/.test(r)), p.reasons.join(' | '));
    assert.ok(
      p.reasons.some((r: string) => /^The branch conflicts with main \(shared-sw: status\)/.test(r)),
      p.reasons.join(' | '),
    );
    expectStatus(await svc.admin.delete(`${CC}freezes/${freeze.id}/`), 204);
  });

  it('Preview: reveals no branch, policy or object the caller cannot view; needs view_policy; branch_id is required and checked', async () => {
    const work = await branch(cast.author.client, 'preview-secret');
    await device(work.inBranch, { name: 'preview-secret-dev', status: 'planned', role: 'core' });
    await policy(svc, {
      name: 'Core devices',
      object_types: ['dcim.device'],
      conditions: { attr: 'role', value: 'core' },
      rules: [{ name: 'core-team', users: [cast.reviewer.id] }],
    });

    const restricted: PermissionGrant[] = [
      { object_types: ['change_control.policy'], actions: ['view'], constraints: { name: 'Core devices' } },
      { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] },
      { object_types: ['dcim.device'], actions: ['view'], constraints: { role: 'edge' } },
    ];
    const limited = await actor(svc, 'limited', restricted);
    const seen = await ok(limited.client.get(`${PREVIEW}?branch_id=${work.branch.id}`));
    assert.deepEqual(
      seen.policies,
      [],
      'Devices is not viewable; Core devices matches only through an object the caller cannot see',
    );
    assert.ok(!JSON.stringify(seen).includes('Devices'));
    const all = await ok(svc.admin.get(`${PREVIEW}?branch_id=${work.branch.id}`));
    assert.deepEqual(all.policies.map((x: any) => x.name).sort(), ['Core devices', 'Devices']);

    const noBranch = await actor(svc, 'no-branch', [{ object_types: ['change_control.policy'], actions: ['view'] }]);
    const hidden = await noBranch.client.get(`${PREVIEW}?branch_id=${work.branch.id}`);
    const missing = await noBranch.client.get(`${PREVIEW}?branch_id=999999`);
    expectStatus(hidden, 404);
    expectStatus(missing, 404);
    assert.deepEqual(hidden.body, missing.body, 'a hidden branch answers as one that does not exist');

    const noPolicy = await actor(
      svc,
      'no-policy',
      VIEW_ALL.filter((g) => !g.object_types.includes('change_control.policy')),
    );
    expectStatus(await noPolicy.client.get(`${PREVIEW}?branch_id=${work.branch.id}`), 403);
    for (const q of ['', '?branch_id=abc', `?branch_id=${work.branch.id}&branch_id=1`]) {
      const res = await svc.admin.get(`${PREVIEW}${q}`);
      expectStatus(res, 400, q);
      assert.ok(res.body.branch_id, JSON.stringify(res.body));
    }
  });
});
