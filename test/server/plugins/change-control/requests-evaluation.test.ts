import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import {
  act,
  actor,
  AUTHOR,
  CHECKS,
  checkNamed,
  detail,
  DEVICES,
  expectStatus,
  group,
  ok,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  RULES,
  type Actor,
  actorsForSuite,
} from './fixtures';
import { draftRequest, evaluation, merge, patchObject, PIPELINE } from './requests-support';

const NO_RULES = 'No policy rules apply';

/** The evaluation of one rule, by rule name. */
function ruleOf(ev: any, name: string): any {
  const rule = ev.policies.flatMap((p: any) => p.rules).find((r: any) => r.name === name);
  assert.ok(rule, `rule ${name} in ${JSON.stringify(ev.policies)}`);
  return rule;
}

const usernames = (refs: Array<{ username: string }>) => refs.map((u) => u.username).sort();

describe('evaluation: General rule 2 (no applicable policy rule is not satisfied)', () => {
  const svc = suiteService();
  const [author, reviewer, pipeline] = actorsForSuite(svc, ['alice', AUTHOR], ['bob', REVIEWER], ['ci', PIPELINE]);

  it('General rule 2: a request no policy matches is not satisfied, cannot be approved, and the panel says exactly "No policy rules apply"', async () => {
    const { cr, branchId } = await draftRequest(author, 'no-policy', {}, { name: 'nothing-governs-me' });
    const submitted = await ok(act(author.client, cr.id, 'submit'));
    assert.equal(submitted.status, 'needs-review');
    assert.equal(submitted.approved, false);
    assert.deepEqual(submitted.policies, []);
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    const d = await detail(author.client, cr.id);
    assert.equal(d.status, 'needs-review');
    assert.equal(d.approved, false);
    assert.equal(d.ready_to_merge, false);
    assert.match(d.merge_blocked_reason, /No policy rules apply/);
    const ev = await evaluation(author.client, cr.id);
    assert.deepEqual(ev.reasons, [NO_RULES]);
    assert.equal(ev.approved, false);
    const refused = await merge(svc, branchId);
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /No policy rules apply/);
  });

  it('General rule 2: a policy that only names checks, as the only match, leaves the request unable to be approved even with its check passing and an approval given', async () => {
    await policy(svc, { name: 'Checks only', object_types: ['dcim.site'], checks: ['ci/site-lint'] });
    const { cr, inBranch } = await draftRequest(author, 'checks-only');
    expectStatus(await inBranch.post('/api/dcim/sites/', { name: 'site-1' }), 201);
    const d0 = await detail(author.client, cr.id);
    assert.deepEqual(
      d0.policies.map((p: any) => p.name),
      ['Checks only'],
    );
    await ok(act(author.client, cr.id, 'submit'));
    const ci = await checkNamed(pipeline.client, cr.id, 'ci/site-lint');
    await ok(pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    const d = await detail(author.client, cr.id);
    assert.equal(d.status, 'needs-review');
    assert.equal(d.approved, false);
    assert.equal(d.ready_to_merge, false);
    const ev = await evaluation(author.client, cr.id);
    assert.deepEqual(
      ev.policies.map((p: any) => [p.name, p.rules.length, p.checks]),
      [['Checks only', 0, ['ci/site-lint']]],
    );
    assert.deepEqual(ev.reasons, [NO_RULES]);
  });

  it('PolicyRule: a rule of zero approvals satisfies the policies without any review (changes gated by checks alone)', async () => {
    await policy(svc, {
      name: 'Prefixes by checks',
      object_types: ['ipam.prefix'],
      checks: ['ci/prefix'],
      rules: [{ name: 'no reviewers', min_reviews: 0 }],
    });
    const { cr, branchId, inBranch } = await draftRequest(author, 'zero');
    const prefix = await inBranch.post('/api/ipam/prefixes/', { prefix: '10.9.0.0/16' });
    expectStatus(prefix, 201);
    const submitted = await ok(act(author.client, cr.id, 'submit'));
    assert.equal(submitted.status, 'approved');
    assert.equal(submitted.approved, true);
    const ev = await evaluation(author.client, cr.id);
    const rule = ruleOf(ev, 'no reviewers');
    assert.deepEqual([rule.min_reviews, rule.approvals, rule.satisfied], [0, 0, true]);
    assert.deepEqual(ev.reasons, []);
    // Only the check gates it now (General rule 1).
    assert.equal(submitted.ready_to_merge, false);
    expectStatus(await merge(svc, branchId), 409);
    const ci = await checkNamed(pipeline.client, cr.id, 'ci/prefix');
    await ok(pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
    assert.equal((await detail(author.client, cr.id)).ready_to_merge, true);
    expectStatus(await merge(svc, branchId), 200);
  });
});

describe('evaluation: PolicyRule minimums, users and groups', () => {
  const svc = suiteService();
  const [author] = actorsForSuite(svc, ['alice', AUTHOR]);
  const rev: Record<string, Actor> = {};
  before(async () => {
    for (const name of ['u1', 'u2', 'u3', 'g1', 'g2', 'outsider']) rev[name] = await actor(svc, name, REVIEWER);
  });

  let n = 0;
  /** A submitted request governed by exactly the given rules (one policy matching only its own site name). */
  async function governedBy(
    rules: Array<{ name: string; min_reviews?: number; users?: number[]; groups?: number[] }>,
  ): Promise<{ id: number; branchId: number }> {
    const tag = `gov-${++n}`;
    await policy(svc, {
      name: `Policy ${tag}`,
      object_types: ['dcim.site'],
      conditions: { attr: 'name', value: tag },
      rules,
    });
    const { cr, branchId, inBranch } = await draftRequest(author, tag);
    expectStatus(await inBranch.post('/api/dcim/sites/', { name: tag }), 201);
    await ok(act(author.client, cr.id, 'submit'));
    return { id: cr.id, branchId };
  }

  it('PolicyRule: a minimum of two approvals needs two eligible approvers', async () => {
    const { id } = await governedBy([
      { name: 'two of three', min_reviews: 2, users: [rev.u1!.id, rev.u2!.id, rev.u3!.id] },
    ]);
    expectStatus(await review(rev.u1!.client, id, 'approve'), 201);
    let ev = await evaluation(author.client, id);
    assert.deepEqual([ruleOf(ev, 'two of three').approvals, ruleOf(ev, 'two of three').satisfied], [1, false]);
    assert.equal((await detail(author.client, id)).status, 'needs-review');
    assert.ok(
      ev.reasons.includes('Rule "two of three" of policy "Policy gov-1" has 1 of 2 required approvals.'),
      JSON.stringify(ev.reasons),
    );
    expectStatus(await review(rev.u2!.client, id, 'approve'), 201);
    ev = await evaluation(author.client, id);
    assert.deepEqual(usernames(ruleOf(ev, 'two of three').approvers), ['u1', 'u2']);
    assert.equal(ruleOf(ev, 'two of three').satisfied, true);
    assert.equal((await detail(author.client, id)).status, 'approved');
  });

  it('PolicyRule: members of a named group may approve; users and groups of one rule are both eligible', async () => {
    const g = await group(svc, 'netops', [rev.g1!.id, rev.g2!.id]);
    const { id } = await governedBy([{ name: 'netops or u3', min_reviews: 2, users: [rev.u3!.id], groups: [g] }]);
    let ev = await evaluation(author.client, id);
    const rule = ruleOf(ev, 'netops or u3');
    assert.deepEqual(usernames(rule.eligible_users), ['g1', 'g2', 'u3']);
    assert.deepEqual(rule.eligible_groups, [{ id: g, name: 'netops', empty: false }]);
    assert.deepEqual(rule.empty_groups, []);
    expectStatus(await review(rev.g1!.client, id, 'approve'), 201);
    expectStatus(await review(rev.u3!.client, id, 'approve'), 201);
    ev = await evaluation(author.client, id);
    assert.deepEqual(usernames(ruleOf(ev, 'netops or u3').approvers), ['g1', 'u3']);
    assert.equal((await detail(author.client, id)).status, 'approved');
  });

  it('PolicyRule: an empty group never satisfies a rule and is called out by name (Nobody may approve it)', async () => {
    const empty = await group(svc, 'ghost-team');
    const { id } = await governedBy([{ name: 'ghosts', min_reviews: 1, groups: [empty] }]);
    expectStatus(await review(rev.outsider!.client, id, 'approve'), 201);
    const ev = await evaluation(author.client, id);
    const rule = ruleOf(ev, 'ghosts');
    assert.deepEqual(rule.empty_groups, ['ghost-team']);
    assert.deepEqual(rule.eligible_groups, [{ id: empty, name: 'ghost-team', empty: true }]);
    assert.deepEqual(rule.eligible_users, []);
    assert.equal(rule.satisfied, false);
    assert.ok(
      ev.reasons.some((r: string) => r.includes('"ghost-team"') && /no members/.test(r)),
      JSON.stringify(ev.reasons),
    );
    assert.ok(
      ev.reasons.some((r: string) => /Nobody may approve it/.test(r)),
      JSON.stringify(ev.reasons),
    );
    const d = await detail(author.client, id);
    assert.equal(d.status, 'needs-review');
    assert.match(d.merge_blocked_reason, /ghost-team/);
  });

  it('PolicyRule: an empty group is called out even when another eligible reviewer can still satisfy the rule', async () => {
    const empty = await group(svc, 'nobody-here');
    const { id } = await governedBy([{ name: 'mixed', min_reviews: 1, users: [rev.u1!.id], groups: [empty] }]);
    expectStatus(await review(rev.u1!.client, id, 'approve'), 201);
    const ev = await evaluation(author.client, id);
    assert.equal(ruleOf(ev, 'mixed').satisfied, true);
    assert.deepEqual(ruleOf(ev, 'mixed').empty_groups, ['nobody-here']);
    assert.ok(
      ev.reasons.some((r: string) => r.includes('"nobody-here"')),
      JSON.stringify(ev.reasons),
    );
    assert.equal((await detail(author.client, id)).status, 'approved');
  });

  it('PolicyRule: a group whose members are all inactive is empty', async () => {
    const sleeper = await actor(svc, `sleeper-${++n}`, REVIEWER);
    const g = await group(svc, 'sleepers', [sleeper.id]);
    await ok(svc.admin.patch(`/api/users/users/${sleeper.id}/`, { is_active: false }));
    const { id } = await governedBy([{ name: 'sleepy', groups: [g] }]);
    const rule = ruleOf(await evaluation(author.client, id), 'sleepy');
    assert.deepEqual(rule.empty_groups, ['sleepers']);
    assert.deepEqual(rule.eligible_users, []);
  });

  it('PolicyRule: an approval counts only toward rules the approver is eligible for', async () => {
    const { id } = await governedBy([
      { name: 'first', users: [rev.u1!.id] },
      { name: 'second', users: [rev.u2!.id] },
    ]);
    expectStatus(await review(rev.u1!.client, id, 'approve'), 201);
    expectStatus(await review(rev.outsider!.client, id, 'approve'), 201);
    let ev = await evaluation(author.client, id);
    assert.deepEqual([ruleOf(ev, 'first').approvals, ruleOf(ev, 'first').satisfied], [1, true]);
    assert.deepEqual([ruleOf(ev, 'second').approvals, ruleOf(ev, 'second').satisfied], [0, false]);
    assert.deepEqual(usernames(ruleOf(ev, 'first').approvers), ['u1']);
    assert.equal((await detail(author.client, id)).status, 'needs-review');
    expectStatus(await review(rev.u2!.client, id, 'approve'), 201);
    ev = await evaluation(author.client, id);
    assert.deepEqual(usernames(ruleOf(ev, 'second').approvers), ['u2']);
    assert.equal((await detail(author.client, id)).status, 'approved');
  });

  it('PolicyRule: one approval counts toward every rule its approver is eligible for, across policies', async () => {
    const { id } = await governedBy([{ name: 'a', users: [rev.u1!.id] }]);
    await policy(svc, {
      name: `Second policy ${n}`,
      object_types: ['dcim.site'],
      conditions: { attr: 'name', value: `gov-${n}` },
      rules: [{ name: 'b', users: [rev.u1!.id, rev.u2!.id] }],
    });
    expectStatus(await review(rev.u1!.client, id, 'approve'), 201);
    const ev = await evaluation(author.client, id);
    assert.equal(ev.policies.length, 2);
    assert.ok(ruleOf(ev, 'a').satisfied && ruleOf(ev, 'b').satisfied);
    assert.equal((await detail(author.client, id)).status, 'approved');
  });

  it('PolicyRule: an inactive user named by a rule cannot approve (not eligible; Nobody may approve it)', async () => {
    const gone = await actor(svc, `gone-${++n}`, REVIEWER);
    await ok(svc.admin.patch(`/api/users/users/${gone.id}/`, { is_active: false }));
    const { id } = await governedBy([{ name: 'only gone', users: [gone.id] }]);
    const ev = await evaluation(author.client, id);
    assert.deepEqual(ruleOf(ev, 'only gone').eligible_users, []);
    assert.ok(
      ev.reasons.some((r: string) => /only gone/.test(r) && /Nobody may approve it/.test(r)),
      JSON.stringify(ev.reasons),
    );
  });

  it('PolicyRule: deactivating an approver drops their approval (the request leaves approved); reactivating restores it', async () => {
    const temp = await actor(svc, `temp-${++n}`, REVIEWER);
    const { id } = await governedBy([{ name: 'temp', users: [temp.id] }]);
    expectStatus(await review(temp.client, id, 'approve'), 201);
    assert.equal((await detail(author.client, id)).status, 'approved');
    await ok(svc.admin.patch(`/api/users/users/${temp.id}/`, { is_active: false }));
    assert.equal((await detail(author.client, id)).status, 'needs-review');
    assert.equal(ruleOf(await evaluation(author.client, id), 'temp').approvals, 0);
    await ok(svc.admin.patch(`/api/users/users/${temp.id}/`, { is_active: true }));
    assert.equal((await detail(author.client, id)).status, 'approved');
  });

  it('PolicyRule: joining a named group makes a user eligible, and their existing approval counts; leaving it drops the approval', async () => {
    const joiner = await actor(svc, `joiner-${++n}`, REVIEWER);
    const g = await group(svc, `team-${n}`, [rev.g1!.id]);
    const { id } = await governedBy([{ name: 'team', groups: [g] }]);
    expectStatus(await review(joiner.client, id, 'approve'), 201);
    assert.equal((await detail(author.client, id)).status, 'needs-review');
    await ok(svc.admin.patch(`/api/users/users/${joiner.id}/`, { groups: [g] }));
    assert.equal((await detail(author.client, id)).status, 'approved');
    await ok(svc.admin.patch(`/api/users/users/${joiner.id}/`, { groups: [] }));
    assert.equal((await detail(author.client, id)).status, 'needs-review');
  });

  it('PolicyRule: the requester is never an eligible approver of their own request, even when a rule names them', async () => {
    const { id } = await governedBy([{ name: 'self', users: [author.id] }]);
    const ev = await evaluation(author.client, id);
    assert.deepEqual(ruleOf(ev, 'self').eligible_users, []);
    assert.equal(ruleOf(ev, 'self').satisfied, false);
  });

  it("PolicyRule: raising a rule's minimum moves an approved request back to needs-review; lowering it to zero approves it", async () => {
    await policy(svc, {
      name: `Adjust ${++n}`,
      object_types: ['dcim.site'],
      conditions: { attr: 'name', value: `adjust-${n}` },
      rules: [{ name: 'adjust', users: [rev.u1!.id, rev.u2!.id] }],
    });
    const { cr, inBranch } = await draftRequest(author, `adjust-${n}`);
    expectStatus(await inBranch.post('/api/dcim/sites/', { name: `adjust-${n}` }), 201);
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(rev.u1!.client, cr.id, 'approve'), 201);
    assert.equal((await detail(author.client, cr.id)).status, 'approved');
    const ruleId = (await evaluation(author.client, cr.id)).policies[0].rules[0].id;
    await ok(svc.admin.patch(`${RULES}${ruleId}/`, { min_reviews: 2 }));
    assert.equal((await detail(author.client, cr.id)).status, 'needs-review');
    await ok(svc.admin.patch(`${RULES}${ruleId}/`, { min_reviews: 0 }));
    assert.equal((await detail(author.client, cr.id)).status, 'approved');
  });
});

describe('evaluation: GET change-requests/{id}/evaluation/ (contract 4.4)', () => {
  const svc = suiteService();
  const [author, x, y, z] = actorsForSuite(
    svc,
    ['alice', AUTHOR],
    ['xavier', REVIEWER],
    ['yann', REVIEWER],
    ['zoe', REVIEWER],
  );
  let crId: number;
  let deviceId: number;
  let inBranch: any;
  let groupId: number;
  before(async () => {
    groupId = await group(svc, 'core-team', [y.id]);
    const empty = await group(svc, 'vacant');
    await policy(svc, {
      name: 'Core',
      object_types: ['dcim.device'],
      checks: ['ci/core'],
      rules: [{ name: 'core two', min_reviews: 2, users: [x.id], groups: [groupId, empty] }],
    });
    await policy(svc, { name: 'Zoe', object_types: ['dcim.device'], rules: [{ name: 'zoe', users: [z.id] }] });
    const made = await draftRequest(author, 'panel');
    crId = made.cr.id;
    inBranch = made.inBranch;
    deviceId = made.device.id;
    await ok(act(author.client, crId, 'submit'));
  });

  it('contract 4.4: per policy and rule, the required count, counted approvals and who may approve (groups by name, the empty group called out)', async () => {
    expectStatus(await review(x.client, crId, 'approve'), 201);
    const ev = await evaluation(author.client, crId);
    assert.equal(ev.change_request, crId);
    assert.equal(ev.status, 'needs-review');
    assert.equal(ev.approved, false);
    assert.deepEqual(
      ev.policies.map((p: any) => [p.name, p.matched_object_types, p.checks]),
      [
        ['Core', ['dcim.device'], ['ci/core']],
        ['Zoe', ['dcim.device'], []],
      ],
    );
    const core = ruleOf(ev, 'core two');
    assert.equal(core.min_reviews, 2);
    assert.equal(core.approvals, 1);
    assert.deepEqual(usernames(core.approvers), ['xavier']);
    assert.deepEqual(usernames(core.eligible_users), ['xavier', 'yann']);
    assert.deepEqual(
      core.eligible_groups.map((g: any) => [g.name, g.empty]),
      [
        ['core-team', false],
        ['vacant', true],
      ],
    );
    assert.deepEqual(core.empty_groups, ['vacant']);
    assert.deepEqual(usernames(core.outstanding_reviewers), ['yann']);
    assert.ok(
      ev.reasons.some((r: string) => r.includes('"vacant"')),
      JSON.stringify(ev.reasons),
    );
    assert.ok(
      ev.reasons.includes('Rule "core two" of policy "Core" has 1 of 2 required approvals.'),
      JSON.stringify(ev.reasons),
    );
    assert.ok(
      ev.reasons.includes('Rule "zoe" of policy "Zoe" has 0 of 1 required approval.'),
      JSON.stringify(ev.reasons),
    );
  });

  it('contract 4.4: live rejections by an eligible reviewer are listed with their comment (rendered safely) and named in reasons', async () => {
    expectStatus(
      await review(z.client, crId, 'reject', 'Please add a **rollback** plan <script>alert(1)</script>'),
      201,
    );
    const ev = await evaluation(author.client, crId);
    assert.equal(ev.status, 'rejected');
    assert.equal(ev.rejections.length, 1);
    assert.equal(ev.rejections[0].reviewer.username, 'zoe');
    assert.match(ev.rejections[0].comment, /rollback/);
    assert.match(ev.rejections[0].comment_html, /<strong>rollback<\/strong>/);
    assert.doesNotMatch(ev.rejections[0].comment_html, /<script>/);
    assert.ok(ev.reasons.includes('Changes requested by zoe.'), JSON.stringify(ev.reasons));
  });

  it('contract 4.4: a rejection by someone eligible for no governing rule is not a live rejection', async () => {
    const bystander = await actor(svc, 'bystander', REVIEWER);
    expectStatus(await review(bystander.client, crId, 'reject', 'I do not like it'), 201);
    const ev = await evaluation(author.client, crId);
    assert.deepEqual(
      ev.rejections.map((r: any) => r.reviewer.username),
      ['zoe'],
    );
  });

  it('contract 4.4: after a branch edit the reviews are listed as stale, stale approvals no longer count, stale rejections no longer reject', async () => {
    await patchObject(inBranch, DEVICES, deviceId, { status: 'planned' });
    const ev = await evaluation(author.client, crId);
    assert.deepEqual(ev.stale_reviews.map((r: any) => [r.reviewer.username, r.decision]).sort(), [
      ['bystander', 'reject'],
      ['xavier', 'approve'],
      ['zoe', 'reject'],
    ]);
    assert.equal(ruleOf(ev, 'core two').approvals, 0);
    assert.deepEqual(ev.rejections, []);
    assert.equal(ev.status, 'needs-review');
    assert.deepEqual(usernames(ruleOf(ev, 'core two').outstanding_reviewers), ['xavier', 'yann']);
  });

  it('contract 4.4: the panel of a request with every rule satisfied has no reasons and says approved', async () => {
    const xr = (await ok(x.client.get(`/api/plugins/change-control/reviews/?change_request_id=${crId}&reviewer_id=me`)))
      .results[0];
    const zr = (await ok(z.client.get(`/api/plugins/change-control/reviews/?change_request_id=${crId}&reviewer_id=me`)))
      .results[0];
    await ok(x.client.patch(`/api/plugins/change-control/reviews/${xr.id}/`, { decision: 'approve' }));
    await ok(
      z.client.patch(`/api/plugins/change-control/reviews/${zr.id}/`, { decision: 'approve', comment: 'ok now' }),
    );
    expectStatus(await review(y.client, crId, 'approve'), 201);
    const ev = await evaluation(author.client, crId);
    assert.equal(ev.approved, true);
    assert.equal(ev.status, 'approved');
    // Only the empty group is still called out.
    assert.deepEqual(
      ev.reasons.filter((r: string) => !r.includes('"vacant"')),
      [],
    );
    assert.equal((await detail(author.client, crId)).approved, true);
  });

  it('contract 4.4: the evaluation needs view_changerequest (403 without; 404 under a constraint that excludes the request)', async () => {
    const none = await actor(svc, 'no-view', [{ object_types: ['change_control.review'], actions: ['view'] }]);
    expectStatus(await none.client.get(`${REQUESTS}${crId}/evaluation/`), 403);
    const own = await actor(svc, 'own-view', [
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { requester: '$user' } },
    ]);
    expectStatus(await own.client.get(`${REQUESTS}${crId}/evaluation/`), 404);
    expectStatus(await svc.anonymous.get(`${REQUESTS}${crId}/evaluation/`), 403);
    expectStatus(await author.client.get(`${REQUESTS}999999/evaluation/`), 404);
  });
});
