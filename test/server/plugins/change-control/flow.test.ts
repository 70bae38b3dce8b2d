import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import {
  act,
  actor,
  AUTHOR,
  branch,
  CHECKS,
  checkNamed,
  detail,
  device,
  expectStatus,
  ok,
  openRequest,
  policy,
  REQUESTS,
  review,
  REVIEWER,
} from './fixtures';

describe('change control: a request from draft to merged', () => {
  const svc = eachTestService({ config: { change_control: { required_external_checks: [['ci/build', 'CI build']] } } });

  it('matches policies, derives status from reviews, blocks on a pending reported check, and merges', async () => {
    const author = await actor(svc, 'alice', [...AUTHOR, { object_types: ['branching.branch'], actions: ['merge'] }]);
    const reviewer = await actor(svc, 'bob', REVIEWER);
    const pipeline = await actor(svc, 'ci', [
      { object_types: ['change_control.mergecheck', 'change_control.changerequest'], actions: ['view', 'change'] },
    ]);
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      checks: ['has-changes'],
      rules: [{ name: 'netops', users: [reviewer.id] }],
    });

    const { branch: b, inBranch } = await branch(author.client, 'add-router');
    await device(inBranch, { name: 'router1', status: 'planned' });
    const cr = await openRequest(author.client, b.id, { ref: 'CHG-1' });
    assert.equal(cr.status, 'draft');
    assert.deepEqual(
      cr.policies.map((p: any) => p.name),
      ['Devices'],
    );

    const submitted = await ok(act(author.client, cr.id, 'submit'));
    assert.equal(submitted.status, 'needs-review');
    assert.equal(submitted.ready_to_merge, false);

    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    const approved = await detail(author.client, cr.id);
    assert.equal(approved.status, 'approved');
    assert.equal(approved.approved, true);
    assert.equal(approved.ready_to_merge, false);
    assert.match(approved.merge_blocked_reason, /CI build/);

    const refused = await author.client.post(`/api/plugins/branching/branches/${b.id}/merge/`, { commit: true });
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /CI build/);

    const ci = await checkNamed(pipeline.client, cr.id, 'ci/build');
    assert.equal(ci.status, 'pending');
    assert.equal(ci.required, true);
    await ok(pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'running' }));
    await ok(pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success', summary: 'green', required: false }));
    assert.equal((await checkNamed(pipeline.client, cr.id, 'has-changes')).status, 'success');

    const ready = await detail(author.client, cr.id);
    assert.equal(ready.ready_to_merge, true, ready.merge_blocked_reason);
    assert.equal(ready.gates_cleared, true);
    const listed = await ok(author.client.get(`${REQUESTS}?gates_cleared=true`));
    assert.deepEqual(
      listed.results.map((r: any) => r.id),
      [cr.id],
    );

    await ok(author.client.post(`/api/plugins/branching/branches/${b.id}/merge/`, { commit: true }));
    const done = await detail(author.client, cr.id);
    assert.equal(done.status, 'completed');
  });
});
