import assert from 'node:assert/strict';
import { createCtx } from '../../../../server/host/core/context';
import { evaluateChangeRequest } from '../../../../server/plugins/change-control/evaluation/load';
import { getChangeRequestRow } from '../../../../server/plugins/change-control/change-requests/repository';
import { attachedPolicies } from '../../../../server/plugins/change-control/policies/governing';
import { suiteService } from '../../../support/service';
import { forSuite } from '../../../support/prepared';
import { statementsOf as statementsOfWork } from '../../../support/quiet';
import { actor, created, detail, expectStatus, grant, ok, policy, REQUESTS, REVIEWER, REVIEWS } from './fixtures';
import { postReview, scene, world } from './reviews-comments-fixtures';

const PERMISSIONS = '/api/users/permissions/';

describe('change control: reviews are records, and an approval counts only while its reviewer may review', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  /** A reviewer the world's rule names whose review permission is a grant of its own (to take away). */
  async function reviewerOwnGrant(name: string) {
    const who = await actor(svc, name, [
      { object_types: ['change_control.changerequest', 'change_control.policy'], actions: ['view'] },
      { object_types: ['branching.branch', 'branching.changediff', 'dcim.device'], actions: ['view'] },
    ]);
    const reviewGrant = await grant(
      svc,
      { users: [who.id] },
      { object_types: ['change_control.review'], actions: ['view', 'add', 'change'] },
    );
    const rules = (await ok(svc.admin.get(`/api/plugins/change-control/policy-rules/?policy_id=${w.policyId}`)))
      .results;
    const rule = rules[0] as { id: number; users: number[] };
    await ok(
      svc.admin.patch(`/api/plugins/change-control/policy-rules/${rule.id}/`, { users: [...rule.users, who.id] }),
    );
    return { who, reviewGrant };
  }

  it('Reviews are records: an approval counts only while its reviewer holds add_review and may view the request; the evaluation says why it does not (not_permitted), the cached status follows the permission write', async () => {
    const s = await scene(w);
    const { who, reviewGrant } = await reviewerOwnGrant('fickle');
    await created(postReview(who.client, { change_request: s.cr.id, decision: 'approve' }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');

    // add_review taken away: the approval stops counting (the list's cached status too).
    await ok(svc.admin.patch(`${PERMISSIONS}${reviewGrant}/`, { actions: ['view'] }));
    const after = await detail(s.alice.client, s.cr.id);
    assert.equal(after.status, 'needs-review');
    assert.equal((await ok(s.alice.client.get(`${REQUESTS}?id=${s.cr.id}`))).results[0].status, 'needs-review');
    const evaluation = await ok(s.alice.client.get(`${REQUESTS}${s.cr.id}/evaluation/`));
    const uncounted = evaluation.policies[0].rules[0].uncounted_approvals;
    assert.deepEqual(
      uncounted.map((u: { reason: string }) => u.reason),
      ['not_permitted'],
    );
    assert.match(uncounted[0].detail, /may no longer review this change request/);

    // Given back: it counts again.
    await ok(svc.admin.patch(`${PERMISSIONS}${reviewGrant}/`, { actions: ['view', 'add', 'change'] }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');

    // The view of the request constrained away: it does not count.
    const viewGrants = (await ok(svc.admin.get(`${PERMISSIONS}?limit=1000`))).results.filter(
      (p: { users: number[]; object_types: string[] }) =>
        p.users.includes(who.id) && p.object_types.includes('change_control.changerequest'),
    );
    for (const p of viewGrants)
      await ok(svc.admin.patch(`${PERMISSIONS}${p.id}/`, { constraints: { id: -1 } }), 'constrain view');
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
  });

  it('Reviews are records: an approval by a reviewer deactivated since does not count', async () => {
    const s = await scene(w);
    const { who } = await reviewerOwnGrant('leaver');
    await created(postReview(who.client, { change_request: s.cr.id, decision: 'approve' }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
    await ok(svc.admin.patch(`/api/users/users/${who.id}/`, { is_active: false }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
  });

  it('Reviews are records: whether approvals count is decided per evaluation, not per approval (the same statements for one approval and for five)', async () => {
    const approvers = [];
    for (let i = 0; i < 5; i++) approvers.push(await actor(svc, `many-${i}`, REVIEWER));
    const p = await policy(svc, {
      name: 'Five',
      object_types: ['dcim.device'],
      rules: [{ name: 'five', min_reviews: 5, users: approvers.map((a) => a.id) }],
    });
    const one = await scene(w);
    const five = await scene(w);
    await created(postReview(approvers[0]!.client, { change_request: one.cr.id, decision: 'approve' }));
    for (const a of approvers) await created(postReview(a.client, { change_request: five.cr.id, decision: 'approve' }));
    for (const s of [one, five])
      await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    const statementsOf = async (crId: number): Promise<number> => {
      const ctx = createCtx({ host: svc.host, user: null, requestId: 'count', baseUrl: svc.url });
      const cr = (await getChangeRequestRow(ctx, crId))!;
      const governing = await attachedPolicies(ctx, crId);
      return (await statementsOfWork(svc, () => evaluateChangeRequest(ctx, cr, governing))).length;
    };
    // Each measured warm (what the service keeps between reads is then the same for both).
    await statementsOf(one.cr.id);
    await statementsOf(five.cr.id);
    assert.equal(await statementsOf(five.cr.id), await statementsOf(one.cr.id));
    assert.equal((await detail(five.alice.client, five.cr.id)).approved, true);
    expectStatus(await svc.admin.delete(`/api/plugins/change-control/policies/${p.id}/?force=true`), 204);
  });

  it('Reviews are records: a change request carrying someone else’s review is not deleted (409: abandon it instead), whoever asks, superusers included', async () => {
    const s = await scene(w);
    await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: 'No.' }));
    const refused = await svc.admin.delete(`${REQUESTS}${s.cr.id}/`);
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /review is a record/);
    assert.equal((await ok(svc.admin.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).count, 1);
    await ok(svc.admin.post(`${REQUESTS}${s.cr.id}/abandon/`, {}));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'abandoned');
  });
});
