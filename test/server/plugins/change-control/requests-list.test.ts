import assert from 'node:assert/strict';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { withTables } from '../../../../server/host/db/database';
import { listMainObjects, putMainObject } from '../../../../server/host/objects/main-repository';
import type { ChangeControlTables } from '../../../../server/plugins/change-control/db/tables';
import { suiteService } from '../../../support/service';
import {
  act,
  actor,
  AUTHOR,
  branch,
  BRANCHES,
  CHECKS,
  checkNamed,
  detail,
  DEVICES,
  expectStatus,
  group,
  ok,
  openRequest,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  actorsForSuite,
} from './fixtures';
import { draftRequest, listed, mainDevice, merge, patchObject, PIPELINE } from './requests-support';

describe('change request list: status, check_status and ref filters', () => {
  const svc = suiteService({ config: { change_control: { required_external_checks: [['ext/build', 'Build']] } } });
  const [author, reviewer, pipeline] = actorsForSuite(
    svc,
    ['alice', [...AUTHOR, { object_types: ['change_control.changerequest'], actions: ['abandon'] }]],
    ['bob', REVIEWER],
    ['ci', PIPELINE],
  );
  const req: Record<string, number> = {};

  before(async () => {
    await policy(svc, { name: 'All', rules: [{ name: 'bob', users: [reviewer.id] }] });
    const specs: Array<[string, string, string]> = [
      ['draft', 'CHG-1001', ''],
      ['review', 'chg-1002', 'submit'],
      ['approved', 'INC_77', 'approve'],
      ['rejected', 'INC-77', 'reject'],
      ['abandoned', '50% done', 'abandon'],
      ['noref', '', ''],
      ['unicode', 'ÄNDERUNG-Ø7', ''],
    ];
    for (const [key, ref, what] of specs) {
      const { cr } = await draftRequest(author, `list-${key}`, { ref });
      req[key] = cr.id;
      if (what === 'abandon') await ok(act(author.client, cr.id, 'abandon'));
      if (['submit', 'approve', 'reject'].includes(what)) await ok(act(author.client, cr.id, 'submit'));
      if (what === 'approve') expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
      if (what === 'reject') expectStatus(await review(reviewer.client, cr.id, 'reject', 'no'), 201);
    }
    const report = async (id: number, status: string) => {
      const check = await checkNamed(pipeline.client, id, 'ext/build');
      await ok(pipeline.client.patch(`${CHECKS}${check.id}/`, { status }));
    };
    await report(req.review!, 'running');
    await report(req.approved!, 'success');
    await report(req.rejected!, 'failure');
  });

  it('List filter status: matches the status value', async () => {
    assert.deepEqual(await listed(author.client, 'status=draft'), [req.draft, req.noref, req.unicode]);
    assert.deepEqual(await listed(author.client, 'status=needs-review'), [req.review]);
    assert.deepEqual(await listed(author.client, 'status=approved'), [req.approved]);
    assert.deepEqual(await listed(author.client, 'status=rejected'), [req.rejected]);
    assert.deepEqual(await listed(author.client, 'status=abandoned'), [req.abandoned]);
    assert.deepEqual(await listed(author.client, 'status=completed'), []);
  });

  it('List filter status: several values are OR', async () => {
    assert.deepEqual(await listed(author.client, 'status=approved&status=rejected'), [req.approved, req.rejected]);
  });

  it('List filter status: an unknown status is 400 naming the filter', async () => {
    const res = await author.client.get(`${REQUESTS}?status=merged`);
    expectStatus(res, 400);
    assert.ok(res.body.status, JSON.stringify(res.body));
  });

  it('List filter check_status: requests having a check with that status; several values are OR', async () => {
    assert.deepEqual(await listed(author.client, 'check_status=success'), [req.approved]);
    assert.deepEqual(await listed(author.client, 'check_status=failure'), [req.rejected]);
    assert.deepEqual(await listed(author.client, 'check_status=running'), [req.review]);
    assert.deepEqual(await listed(author.client, 'check_status=pending'), [
      req.draft,
      req.abandoned,
      req.noref,
      req.unicode,
    ]);
    assert.deepEqual(await listed(author.client, 'check_status=success&check_status=failure'), [
      req.approved,
      req.rejected,
    ]);
    assert.deepEqual(await listed(author.client, 'check_status=error'), []);
    expectStatus(await author.client.get(`${REQUESTS}?check_status=green`), 400);
  });

  it('List filter ref: partial and case-insensitive', async () => {
    assert.deepEqual(await listed(author.client, 'ref=chg'), [req.draft, req.review]);
    assert.deepEqual(await listed(author.client, 'ref=CHG-100'), [req.draft, req.review]);
    assert.deepEqual(await listed(author.client, 'ref=1002'), [req.review]);
    assert.deepEqual(await listed(author.client, 'ref=inc'), [req.approved, req.rejected]);
    assert.deepEqual(await listed(author.client, 'ref=nothing-like-it'), []);
  });

  it('List filter ref: case-insensitive beyond ASCII letters', async () => {
    assert.deepEqual(await listed(author.client, `ref=${encodeURIComponent('änderung-ø')}`), [req.unicode]);
    assert.deepEqual(await listed(author.client, `ref=${encodeURIComponent('ÄNDERUNG')}`), [req.unicode]);
  });

  it('List filter ref: several values combine as OR', async () => {
    assert.deepEqual(await listed(author.client, 'ref=1001&ref=inc-'), [req.draft, req.rejected]);
    assert.deepEqual(await listed(author.client, 'ref=1001&ref=1002&ref=DONE'), [req.draft, req.review, req.abandoned]);
  });

  it('List filter ref: % and _ are matched literally, not as wildcards', async () => {
    assert.deepEqual(await listed(author.client, 'ref=inc_'), [req.approved]);
    assert.deepEqual(await listed(author.client, `ref=${encodeURIComponent('50%')}`), [req.abandoned]);
    assert.deepEqual(await listed(author.client, `ref=${encodeURIComponent('0%d')}`), []);
    assert.deepEqual(await listed(author.client, `ref=${encodeURIComponent('%')}`), [req.abandoned]);
  });

  it('List filters: different filters combine as AND', async () => {
    assert.deepEqual(await listed(author.client, 'ref=inc&status=rejected'), [req.rejected]);
    assert.deepEqual(await listed(author.client, 'ref=chg&check_status=running'), [req.review]);
    assert.deepEqual(await listed(author.client, 'status=draft&check_status=success'), []);
  });

  it('List filter requester: "me" is the caller; an id names a user', async () => {
    const other = await actor(svc, 'carol', AUTHOR);
    const { cr } = await draftRequest(other, 'carol-branch');
    assert.deepEqual(await listed(other.client, 'requester=me'), [cr.id]);
    assert.deepEqual(
      await listed(author.client, 'requester=me'),
      Object.values(req).sort((a, b) => a - b),
    );
    assert.deepEqual(await listed(author.client, `requester=${other.id}`), [cr.id]);
    expectStatus(await author.client.get(`${REQUESTS}?requester=someone`), 400);
  });

  it('List: the results carry the fields of the detail (status, ref, branch_name, policies, actions)', async () => {
    const res = await ok(author.client.get(`${REQUESTS}?id=${req.approved}`));
    assert.equal(res.count, 1);
    const item = res.results[0];
    assert.equal(item.status, 'approved');
    assert.equal(item.ref, 'INC_77');
    assert.equal(item.branch_name, 'list-approved');
    assert.deepEqual(
      item.policies.map((p: any) => p.name),
      ['All'],
    );
    assert.equal(typeof item.actions.submit.allowed, 'boolean');
  });
});

describe('change request list: reviewer=me ("waiting for my review")', () => {
  const svc = suiteService();
  const [author, r1, r2, member, outsider] = actorsForSuite(
    svc,
    ['alice', [...AUTHOR, ...REVIEWER]],
    ['r1', REVIEWER],
    ['r2', REVIEWER],
    ['member', REVIEWER],
    ['outsider', REVIEWER],
  );
  before(async () => {
    const g = await group(svc, 'approvers', [member.id]);
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      rules: [{ name: 'two', min_reviews: 2, users: [r1.id, r2.id, author.id], groups: [g] }],
    });
  });

  it('reviewer=me: lists requests in needs-review on which the caller is an outstanding eligible reviewer (users and group members)', async () => {
    const { cr } = await draftRequest(author, 'waiting');
    await ok(act(author.client, cr.id, 'submit'));
    assert.deepEqual(await listed(r1.client, 'reviewer=me'), [cr.id]);
    assert.deepEqual(await listed(r2.client, 'reviewer=me'), [cr.id]);
    assert.deepEqual(await listed(member.client, 'reviewer=me'), [cr.id]);
    assert.deepEqual(await listed(outsider.client, 'reviewer=me'), []);
    // The requester is never waited for on their own request.
    assert.deepEqual(await listed(author.client, 'reviewer=me'), []);
    // An id works as well as "me".
    assert.deepEqual(await listed(svc.admin, `reviewer=${r1.id}`), [cr.id]);
  });

  it('reviewer=me: a draft is waiting for nobody', async () => {
    const { cr } = await draftRequest(author, 'still-draft');
    assert.ok(!(await listed(r1.client, 'reviewer=me')).includes(cr.id));
  });

  it('reviewer=me: once the caller has reviewed, it leaves their list; when their review goes stale it comes back', async () => {
    const { cr, inBranch, device } = await draftRequest(author, 'reviewed');
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(r1.client, cr.id, 'approve'), 201);
    assert.ok(!(await listed(r1.client, 'reviewer=me')).includes(cr.id));
    assert.ok((await listed(r2.client, 'reviewer=me')).includes(cr.id));
    await patchObject(inBranch, DEVICES, device.id, { status: 'planned' });
    assert.ok((await listed(r1.client, 'reviewer=me')).includes(cr.id));
  });

  it('reviewer=me: a request that is approved or back in draft waits for nobody', async () => {
    const { cr } = await draftRequest(author, 'done-waiting');
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(r1.client, cr.id, 'approve'), 201);
    expectStatus(await review(member.client, cr.id, 'approve'), 201);
    assert.equal((await detail(author.client, cr.id)).status, 'approved');
    assert.ok(!(await listed(r2.client, 'reviewer=me')).includes(cr.id));

    const third = await draftRequest(author, 'pulled-back');
    await ok(act(author.client, third.cr.id, 'submit'));
    assert.ok((await listed(r2.client, 'reviewer=me')).includes(third.cr.id));
    await ok(act(author.client, third.cr.id, 'return-to-draft'));
    assert.ok(!(await listed(r2.client, 'reviewer=me')).includes(third.cr.id));
  });

  it("reviewer=me: someone else's rejection keeps the request waiting for every eligible reviewer of an unsatisfied rule who has not reviewed; the rejecter's own list drops it", async () => {
    const other = await draftRequest(author, 'rejected-waiting');
    await ok(act(author.client, other.cr.id, 'submit'));
    assert.ok((await listed(r2.client, 'reviewer=me')).includes(other.cr.id));
    expectStatus(await review(r1.client, other.cr.id, 'reject', 'no'), 201);
    assert.equal((await detail(author.client, other.cr.id)).status, 'rejected');
    assert.ok((await listed(r2.client, 'reviewer=me')).includes(other.cr.id));
    assert.ok((await listed(member.client, 'reviewer=me')).includes(other.cr.id));
    assert.ok(!(await listed(r1.client, 'reviewer=me')).includes(other.cr.id));
    // Once r2 has decided too, it no longer waits for r2.
    expectStatus(await review(r2.client, other.cr.id, 'approve'), 201);
    assert.ok(!(await listed(r2.client, 'reviewer=me')).includes(other.cr.id));
    assert.ok((await listed(member.client, 'reviewer=me')).includes(other.cr.id));
  });

  it('reviewer=me: a user joining the named group starts waiting; leaving it stops', async () => {
    const { cr } = await draftRequest(author, 'group-join');
    await ok(act(author.client, cr.id, 'submit'));
    const newcomer = await actor(svc, 'newcomer', REVIEWER);
    assert.deepEqual(await listed(newcomer.client, 'reviewer=me'), []);
    const g = (await ok(svc.admin.get('/api/users/groups/?name=approvers'))).results[0].id;
    await ok(svc.admin.patch(`/api/users/users/${newcomer.id}/`, { groups: [g] }));
    assert.ok((await listed(newcomer.client, 'reviewer=me')).includes(cr.id));
    await ok(svc.admin.patch(`/api/users/users/${newcomer.id}/`, { groups: [] }));
    assert.ok(!(await listed(newcomer.client, 'reviewer=me')).includes(cr.id));
  });

  it('reviewer=me and requester=me combine with the other filters (AND)', async () => {
    const { cr } = await draftRequest(author, 'combined', { ref: 'CMB-1' });
    await ok(act(author.client, cr.id, 'submit'));
    assert.deepEqual(await listed(r1.client, 'reviewer=me&ref=cmb'), [cr.id]);
    assert.deepEqual(await listed(author.client, 'requester=me&ref=cmb&status=needs-review'), [cr.id]);
    assert.deepEqual(await listed(author.client, 'requester=me&ref=cmb&status=draft'), []);
  });
});

describe('change request list: the cached gates_cleared and has_conflicts filters', () => {
  const svc = suiteService();
  const [author, reviewer] = actorsForSuite(
    svc,
    ['alice', [...AUTHOR, { object_types: ['branching.branch'], actions: ['merge'] }]],
    ['bob', REVIEWER],
  );
  const db = () => withTables<ChangeControlTables>(svc.host.db);
  /**
   * Changes main's stored object without a request, so no refresh follows (through the
   * repository, which every main write goes through: it keeps the changes' conflicts).
   */
  const setMainAttrs = async (id: number, attrs: Record<string, unknown>): Promise<void> => {
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'beside', baseUrl: 'http://beside' });
    await inTransaction(ctx, async (tx) => {
      const [state] = await listMainObjects(tx, 'dcim.device', [id]);
      await putMainObject(tx, { ...state!, attrs: { ...state!.attrs, ...attrs } });
    });
  };

  let n = 0;
  /** An approved request of its own policy (matching only its device's name), with that policy's rule. */
  async function approvedRequest(
    fields: Record<string, unknown> = {},
  ): Promise<{ id: number; branchId: number; ruleId: number; inBranch: any; device: any }> {
    const tag = `gc-${++n}`;
    const p = await policy(svc, {
      name: tag,
      object_types: ['dcim.device'],
      conditions: { attr: 'name', value: tag },
      rules: [{ name: tag, users: [reviewer.id] }],
    });
    const made = await draftRequest(author, tag, fields, { name: tag });
    await ok(act(author.client, made.cr.id, 'submit'));
    expectStatus(await review(reviewer.client, made.cr.id, 'approve'), 201);
    return {
      id: made.cr.id,
      branchId: made.branchId,
      ruleId: p.rules[0]!.id,
      inBranch: made.inBranch,
      device: made.device,
    };
  }

  it('gates_cleared: true once the policies and every required check are satisfied; false before', async () => {
    const { cr } = await draftRequest(author, 'not-yet');
    const { id } = await approvedRequest();
    assert.ok((await listed(author.client, 'gates_cleared=true')).includes(id));
    assert.ok(!(await listed(author.client, 'gates_cleared=true')).includes(cr.id));
    assert.ok((await listed(author.client, 'gates_cleared=false')).includes(cr.id));
    expectStatus(await author.client.get(`${REQUESTS}?gates_cleared=maybe`), 400);
  });

  it('gates_cleared: excludes the change window — a request outside its window is cleared though not ready to merge', async () => {
    const start = new Date(svc.clock.now().getTime() + 3600_000).toISOString();
    const { id } = await approvedRequest({ scheduled_start: start });
    const d = await detail(author.client, id);
    assert.equal(d.ready_to_merge, false);
    assert.match(d.merge_blocked_reason, /window/);
    assert.equal(d.gates_cleared, true);
    assert.ok((await listed(author.client, 'gates_cleared=true')).includes(id));
  });

  it('gates_cleared is cached: a state change that is no refresh trigger leaves it; the merge gate decides live; a trigger refreshes it', async () => {
    const { id, branchId, ruleId } = await approvedRequest();
    assert.ok((await listed(author.client, 'gates_cleared=true')).includes(id));
    // The rule now needs two approvals, written without any refresh.
    await db().updateTable('cc_policy_rules').set({ min_reviews: 2 }).where('id', '=', ruleId).execute();
    assert.ok((await listed(author.client, 'gates_cleared=true')).includes(id), 'the cached value is kept');
    const listItem = (await ok(author.client.get(`${REQUESTS}?id=${id}`))).results[0];
    assert.equal(listItem.gates_cleared, true);
    // The detail and the merge gate are live.
    const live = await detail(author.client, id);
    assert.equal(live.approved, false);
    assert.equal(live.ready_to_merge, false);
    const refused = await merge(svc, branchId);
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /1 of 2/);
    // Re-run checks (trigger 8) refreshes the cache.
    await ok(svc.admin.post(`${REQUESTS}${id}/run-checks/`, {}));
    assert.ok(!(await listed(author.client, 'gates_cleared=true')).includes(id));
    assert.ok((await listed(author.client, 'gates_cleared=false')).includes(id));
    assert.equal((await detail(author.client, id)).status, 'needs-review');
  });

  it('gates_cleared is never used for a decision: a request cached as not cleared merges when the live gate is clear', async () => {
    const { id, branchId, ruleId } = await approvedRequest();
    await db().updateTable('cc_policy_rules').set({ min_reviews: 2 }).where('id', '=', ruleId).execute();
    await ok(svc.admin.post(`${REQUESTS}${id}/run-checks/`, {}));
    assert.ok((await listed(author.client, 'gates_cleared=false')).includes(id));
    await db().updateTable('cc_policy_rules').set({ min_reviews: 1 }).where('id', '=', ruleId).execute();
    assert.ok((await listed(author.client, 'gates_cleared=false')).includes(id), 'still cached as not cleared');
    assert.equal((await detail(author.client, id)).ready_to_merge, true);
    expectStatus(await merge(svc, branchId), 200);
    assert.equal((await detail(author.client, id)).status, 'completed');
  });

  it('has_conflicts is cached: main changing under the branch shows live on the detail, the list keeps the last refresh until a trigger', async () => {
    const dev = await mainDevice(svc, { name: `shared-${++n}`, status: 'active' });
    const { branch: b, inBranch } = await branch(author.client, `conflict-${n}`);
    await patchObject(inBranch, DEVICES, dev.id, { status: 'planned' });
    const cr = await openRequest(author.client, b.id);
    assert.equal((await detail(author.client, cr.id)).has_conflicts, false);
    assert.ok((await listed(author.client, 'has_conflicts=false')).includes(cr.id));

    // Main's stored state changes the same attribute differently behind every trigger (a write
    // through the API would be refresh trigger 6): a genuine conflict, and no refresh.
    await setMainAttrs(dev.id, { status: 'failed' });
    const live = await detail(author.client, cr.id);
    assert.equal(live.has_conflicts, true, 'the detail is live');
    assert.ok(!(await listed(author.client, 'has_conflicts=true')).includes(cr.id), 'the list keeps the last refresh');
    assert.equal((await ok(author.client.get(`${REQUESTS}?id=${cr.id}`))).results[0].has_conflicts, false);

    await ok(svc.admin.post(`${REQUESTS}${cr.id}/run-checks/`, {}));
    assert.ok((await listed(author.client, 'has_conflicts=true')).includes(cr.id));
    assert.ok(!(await listed(author.client, 'has_conflicts=false')).includes(cr.id));
  });

  it('has_conflicts: a branch edit (trigger 6) and a sync (trigger 5) refresh the cached value', async () => {
    const dev = await mainDevice(svc, { name: `sync-${++n}`, status: 'active', role: 'core' });
    const { branch: b, inBranch } = await branch(author.client, `sync-${n}`);
    await patchObject(inBranch, DEVICES, dev.id, { status: 'planned' });
    const cr = await openRequest(author.client, b.id);
    await setMainAttrs(dev.id, { status: 'offline' });
    assert.ok(!(await listed(author.client, 'has_conflicts=true')).includes(cr.id));
    // The branch edits something else: its changes move, and the request is refreshed.
    await patchObject(inBranch, DEVICES, dev.id, { role: 'edge' });
    assert.ok((await listed(author.client, 'has_conflicts=true')).includes(cr.id));
    // A sync moves the baseline to main's state: the conflict is gone, and so is the cached flag.
    expectStatus(await author.client.post(`${BRANCHES}${b.id}/sync/`, { commit: true }), 200);
    assert.equal((await detail(author.client, cr.id)).has_conflicts, false);
    assert.ok(!(await listed(author.client, 'has_conflicts=true')).includes(cr.id));
  });

  it('has_conflicts: a write on main moving the branch diff (trigger 6), and another branch merging over it, refresh the cached value', async () => {
    const dev = await mainDevice(svc, { name: `main-${++n}`, status: 'active', role: 'core' });
    const { branch: b, inBranch } = await branch(author.client, `main-write-${n}`);
    await patchObject(inBranch, DEVICES, dev.id, { status: 'planned', role: 'edge' });
    const cr = await openRequest(author.client, b.id);
    await patchObject(svc.admin, DEVICES, dev.id, { status: 'offline' });
    assert.ok((await listed(author.client, 'has_conflicts=true')).includes(cr.id));
    // A sync clears it; then another branch changes the same attribute and merges.
    expectStatus(await author.client.post(`${BRANCHES}${b.id}/sync/`, { commit: true }), 200);
    assert.ok((await listed(author.client, 'has_conflicts=false')).includes(cr.id));
    const other = await branch(svc.admin, `other-${n}`);
    await patchObject(other.inBranch, DEVICES, dev.id, { role: 'access' });
    const otherCr = await openRequest(svc.admin, other.branch.id);
    await policy(svc, {
      name: `none-${n}`,
      object_types: ['dcim.device'],
      conditions: { attr: 'role', value: 'access' },
      rules: [{ name: 'none', min_reviews: 0 }],
    });
    await ok(act(svc.admin, otherCr.id, 'submit'));
    expectStatus(await merge(svc, other.branch.id), 200);
    assert.equal((await detail(author.client, cr.id)).has_conflicts, true);
    assert.ok((await listed(author.client, 'has_conflicts=true')).includes(cr.id));
  });

  it('has_conflicts is never used for a decision: conflicts alone do not block the merge when no policy names no-conflicts', async () => {
    const { id, branchId } = await approvedRequest();
    assert.equal((await detail(author.client, id)).ready_to_merge, true);
    // Force the cached flag on: the merge does not read it.
    await db().updateTable('cc_change_requests').set({ has_conflicts: 1 }).where('id', '=', id).execute();
    assert.ok((await listed(author.client, 'has_conflicts=true')).includes(id));
    expectStatus(await merge(svc, branchId), 200);
  });
});
