import assert from 'node:assert/strict';
import { eachTestService, type TestService } from '../../../support/service';
import { forEachTest } from '../../../support/prepared';
import {
  actor,
  checkNamed,
  CHECKS,
  created,
  detail,
  expectStatus,
  grant,
  ok,
  POLICIES,
  VIEW_ALL,
  type Actor,
} from './fixtures';
import { gateCast, scenario, type GateCast } from './gate-support';

const RULES = '/api/extras/event-rules/';
const ACTION = 'change_control.report_check';
/** A pipeline's grants: view everything, report checks. */
const PIPELINE = [...VIEW_ALL, { object_types: ['change_control.mergecheck'], actions: ['view', 'change'] }];
/** Event rules, and nothing that writes checks. */
const RULE_WRITER = [...VIEW_ALL, { object_types: ['extras.eventrule'], actions: ['view', 'add', 'change'] }];

/** A rule that, whenever a check of a request is updated, reports `status` on ci/build. */
function forgingRule(name: string, status = 'success') {
  return {
    name,
    object_types: ['change_control.mergecheck'],
    event_types: ['object_updated'],
    action_type: ACTION,
    action_data: { check: 'ci/build', status, summary: `by ${name}` },
  };
}

describe("change control: event-rule actions act with their creator's authority", () => {
  const svc = eachTestService();
  const cast = forEachTest(() => gateCast(svc));

  async function declareCi(c: GateCast, reporter?: Actor): Promise<void> {
    await ok(
      svc.admin.patch(`${POLICIES}${c.policyId}/`, {
        checks: ['ci/build'],
        check_settings: { 'ci/build': reporter ? { reporter: { users: [reporter.id] } } : {} },
      }),
    );
  }
  const report = (client: TestService['admin'], id: number, body: Record<string, unknown>) =>
    client.patch(`${CHECKS}${id}/`, body);

  it('Event-rule authority: creating or changing a rule whose action writes (report_check) needs the permission the write needs (change_mergecheck), 403 otherwise; a webhook rule does not', async () => {
    const writer = await actor(svc, 'rule-writer', RULE_WRITER);
    const refused = await writer.client.post(RULES, forgingRule('forge'));
    expectStatus(refused, 403);
    assert.match(refused.body.detail, /change_control\.change_mergecheck/);
    const hook = await created(
      svc.admin.post('/api/extras/webhooks/', { name: 'hook', payload_url: 'https://example.net/hook' }),
    );
    const plain = await writer.client.post(RULES, {
      name: 'notify',
      object_types: ['change_control.mergecheck'],
      event_types: ['object_updated'],
      action_type: 'webhook',
      action_object_id: hook.id,
    });
    expectStatus(plain, 201);
    assert.equal(plain.body.created_by, writer.id);
    const turned = await writer.client.patch(`${RULES}${plain.body.id}/`, {
      action_type: ACTION,
      action_object_id: null,
      action_data: { check: 'ci/build', status: 'success' },
    });
    expectStatus(turned, 403);
    assert.equal((await ok(svc.admin.get(`${RULES}${plain.body.id}/`))).action_type, 'webhook');
  });

  it('Event-rule authority, the attack reported: a rule cannot write a check result under the declared reporter’s name; when ci reports running the rule’s success is refused and nothing merges', async () => {
    const ci = await actor(svc, 'ci', PIPELINE);
    await declareCi(cast, ci);
    const s = await scenario(cast, 'forged');
    // The attacker holds what a rule needs, but is not ci.
    const attacker = await actor(svc, 'attacker', [...RULE_WRITER, ...PIPELINE]);
    expectStatus(await attacker.client.post(RULES, forgingRule('forge')), 201);
    const check = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    const mark = svc.log.lines.length;
    await ok(report(ci.client, check.id, { status: 'running' }));
    const after = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    assert.equal(after.status, 'running', 'the rule did not write success');
    assert.equal(after.reported_by, ci.id);
    assert.equal(after.source, null);
    assert.match(svc.log.lines.slice(mark).join('\n'), /Only the declared reporter may report check "ci\/build"/);
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, false);
    assert.equal((await ok(svc.admin.get(`/api/plugins/branching/branches/${s.branch.id}/`))).status, 'ready');
  });

  it("Event-rule authority: a rule's report acts as its creator, never the triggering user: reported_by and the changelog name the creator, source names the rule; a check whose declared reporter is the creator takes it", async () => {
    const ci = await actor(svc, 'ci', [...PIPELINE, ...RULE_WRITER]);
    await declareCi(cast, ci);
    const s = await scenario(cast, 'by-rule');
    const rule = await created(ci.client.post(RULES, forgingRule('ci-follows')));
    assert.equal(rule.created_by, ci.id);
    // Another pipeline's write of another check triggers it: the rule still acts as ci.
    const other = await actor(svc, 'jenkins', PIPELINE);
    await ok(svc.admin.patch(`${POLICIES}${cast.policyId}/`, { checks: ['ci/build', 'ci/lint'] }));
    const lint = await checkNamed(svc.admin, s.cr.id, 'ci/lint');
    await ok(report(other.client, lint.id, { status: 'success' }));
    const build = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    assert.equal(build.status, 'success');
    assert.equal(build.reported_by, ci.id);
    assert.deepEqual(build.source, { event_rule: rule.id });
    const log = (
      await ok(
        svc.admin.get(
          `/api/core/object-changes/?changed_object_type=change_control.mergecheck&changed_object_id=${build.id}&ordering=-id&limit=1`,
        ),
      )
    ).results[0];
    assert.equal(log.user_name, 'ci', 'the changelog names the creator, not the triggering user');
    assert.deepEqual(log.postchange_data.source, { event_rule: rule.id });
  });

  it('Event-rule authority: a rule runs only while its creator is active and holds change_mergecheck whose constraints admit the check; otherwise it reports nothing and logs why', async () => {
    await declareCi(cast);
    const s = await scenario(cast, 'revoked');
    const creator = await actor(svc, 'creator', [...RULE_WRITER]);
    const pid = await grant(
      svc,
      { users: [creator.id] },
      { object_types: ['change_control.mergecheck'], actions: ['change'] },
    );
    expectStatus(await creator.client.post(RULES, forgingRule('conditional', 'failure')), 201);
    const pipeline = await actor(svc, 'pipeline', PIPELINE);
    const check = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    const tick = async (status: string) => ok(report(pipeline.client, check.id, { status }));

    // Constrained away from this check: nothing reported.
    await ok(svc.admin.patch(`/api/users/permissions/${pid}/`, { constraints: { name: 'other/check' } }));
    let mark = svc.log.lines.length;
    await tick('running');
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).status, 'running');
    assert.match(svc.log.lines.slice(mark).join('\n'), /its creator "creator" may not report check "ci\/build"/);

    // Admitted again: the rule reports (as its creator).
    await ok(svc.admin.patch(`/api/users/permissions/${pid}/`, { constraints: null }));
    await tick('success');
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).status, 'failure');

    // Deactivated: nothing.
    await ok(svc.admin.patch(`/api/users/users/${creator.id}/`, { is_active: false }));
    mark = svc.log.lines.length;
    await tick('success');
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).status, 'success');
    assert.match(svc.log.lines.slice(mark).join('\n'), /its creator is gone or inactive; nothing reported/);
  });

  it('Reporter: a declared or changed reporter makes earlier results from anyone else outdated (they stop clearing the gate); the declared reporter’s result counts', async () => {
    await declareCi(cast);
    const s = await scenario(cast, 'reporter-later');
    const jenkins = await actor(svc, 'jenkins', PIPELINE);
    const ci = await actor(svc, 'ci', PIPELINE);
    const check = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    await ok(report(jenkins.client, check.id, { status: 'success' }));
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);

    await declareCi(cast, ci);
    const stale = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    assert.equal(stale.status, 'success');
    assert.equal(stale.outdated, true);
    assert.equal(stale.blocks_merge, true);
    const cr = await detail(cast.author.client, s.cr.id);
    assert.equal(cr.ready_to_merge, false);
    assert.match(cr.merge_blocked_reason, /"ci\/build" passed by someone other than its declared reporter/);

    await ok(report(ci.client, check.id, { status: 'success' }));
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).outdated, false);
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);

    // Changed to jenkins: ci's result is now from someone else.
    await declareCi(cast, jenkins);
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).outdated, true);
    assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, false);
  });
});
