import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import {
  act,
  actor,
  AUTHOR,
  branch,
  BRANCHES,
  CHECKS,
  checkNamed,
  customFieldsLog,
  detail,
  DEVICES,
  expectCustomFieldsRefused,
  expectStatus,
  ok,
  openRequest,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  REVIEWS,
  actorsForSuite,
} from './fixtures';
import { draftRequest, listed, mainDevice, merge, patchObject, PIPELINE } from './requests-support';

describe('change requests: fields (ChangeRequest table and contract 4.1)', () => {
  const svc = suiteService();
  const [author, reviewer] = actorsForSuite(svc, ['alice', AUTHOR], ['bob', REVIEWER]);
  let n = 0;
  before(async () => {
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      rules: [{ name: 'bob', users: [reviewer.id] }],
    });
  });

  it('contract 4.1 title: defaults to the branch name; a blank title falls back to it; a given title is kept', async () => {
    const { cr } = await draftRequest(author, 'title-default');
    assert.equal(cr.title, 'title-default');
    const given = (await draftRequest(author, `title-given-${++n}`, { title: 'Add core routers' })).cr;
    assert.equal(given.title, 'Add core routers');
    const blank = (await draftRequest(author, `title-blank-${++n}`, { title: '   ' })).cr;
    assert.equal(blank.title, `title-blank-${n}`);
    assert.equal(
      (await ok(author.client.patch(`${REQUESTS}${given.id}/`, { title: '' }))).title,
      `title-given-${n - 1}`,
    );
  });

  it('contract 4.1 priority: medium by default; low, medium, high and critical accepted; anything else 400 naming priority', async () => {
    const { cr } = await draftRequest(author, `prio-${++n}`);
    assert.equal(cr.priority, 'medium');
    for (const priority of ['low', 'medium', 'high', 'critical']) {
      assert.equal((await ok(author.client.patch(`${REQUESTS}${cr.id}/`, { priority }))).priority, priority);
    }
    const bad = await author.client.patch(`${REQUESTS}${cr.id}/`, { priority: 'urgent' });
    expectStatus(bad, 400);
    assert.ok(bad.body.priority, JSON.stringify(bad.body));
    assert.deepEqual(await listed(author.client, `priority=critical&id=${cr.id}`), [cr.id]);
  });

  it('contract 4.1 requester: read-only, always the creator — naming another on create or update is ignored', async () => {
    const { branch: b } = await branch(author.client, `req-${++n}`);
    const res = await author.client.post(REQUESTS, { branch: b.id, requester: reviewer.id });
    expectStatus(res, 201);
    assert.deepEqual(res.body.requester, { id: author.id, username: 'alice', display: 'alice' });
    const patched = await ok(
      author.client.patch(`${REQUESTS}${res.body.id}/`, { requester: reviewer.id, title: 'still mine' }),
    );
    assert.equal(patched.requester.id, author.id);
  });

  it('ChangeRequest ref: the external reference is stored, shown in display, and editable', async () => {
    const { cr } = await draftRequest(author, `ref-${++n}`, { ref: 'CHG-4242', title: 'Core' });
    assert.equal(cr.ref, 'CHG-4242');
    assert.equal(cr.display, 'CHG-4242: Core');
    assert.equal((await ok(author.client.patch(`${REQUESTS}${cr.id}/`, { ref: 'INC-1' }))).ref, 'INC-1');
    const long = await author.client.patch(`${REQUESTS}${cr.id}/`, { ref: 'x'.repeat(101) });
    expectStatus(long, 400);
    assert.ok(long.body.ref, JSON.stringify(long.body));
  });

  it('contract 4.1: a second change request for the same branch is 400 naming branch', async () => {
    const { cr, branchId } = await draftRequest(author, `twice-${++n}`);
    const res = await author.client.post(REQUESTS, { branch: branchId });
    expectStatus(res, 400);
    assert.ok(res.body.branch, JSON.stringify(res.body));
    assert.match(res.body.branch[0], new RegExp(`#${cr.id}`));
    assert.deepEqual(await listed(svc.admin, `branch_id=${branchId}`), [cr.id]);
    // An abandoned request still holds the branch.
    await ok(act(svc.admin, cr.id, 'abandon'));
    expectStatus(await author.client.post(REQUESTS, { branch: branchId }), 400);
  });

  it('contract 4.1: a request for a branch that does not exist, or that is not ready, is 400 naming branch', async () => {
    const missing = await author.client.post(REQUESTS, { branch: 999999 });
    expectStatus(missing, 400);
    assert.ok(missing.body.branch, JSON.stringify(missing.body));
    for (const status of ['merged', 'archived']) {
      const { branch: c } = await branch(svc.admin, `${status}-${++n}`);
      await svc.host.db.updateTable('branches').set({ status }).where('id', '=', c.id).execute();
      const res = await author.client.post(REQUESTS, { branch: c.id });
      expectStatus(res, 400, status);
      assert.match(res.body.branch[0], new RegExp(status));
    }
    expectStatus(await author.client.post(REQUESTS, { branch: 'main' }), 400);
    expectStatus(await author.client.post(REQUESTS, {}), 400);
  });

  it('contract 4.1 scheduled_end: must be after scheduled_start, on create and on update (400 naming scheduled_end)', async () => {
    const start = '2026-11-05T10:00:00Z';
    const { branch: b } = await branch(author.client, `window-${++n}`);
    for (const end of ['2026-11-05T10:00:00Z', '2026-11-05T09:00:00Z']) {
      const res = await author.client.post(REQUESTS, { branch: b.id, scheduled_start: start, scheduled_end: end });
      expectStatus(res, 400, end);
      assert.ok(res.body.scheduled_end, JSON.stringify(res.body));
    }
    const made = await author.client.post(REQUESTS, {
      branch: b.id,
      scheduled_start: start,
      scheduled_end: '2026-11-05T12:00:00Z',
    });
    expectStatus(made, 201);
    const id = made.body.id;
    // Moving one end past the stored other end is refused too.
    expectStatus(await author.client.patch(`${REQUESTS}${id}/`, { scheduled_end: '2026-11-05T08:00:00Z' }), 400);
    expectStatus(await author.client.patch(`${REQUESTS}${id}/`, { scheduled_start: '2026-11-05T13:00:00Z' }), 400);
    const d = await detail(author.client, id);
    assert.deepEqual([d.scheduled_start, d.scheduled_end], ['2026-11-05T10:00:00.000Z', '2026-11-05T12:00:00.000Z']);
    // Clearing the start leaves an end alone valid.
    const cleared = await ok(author.client.patch(`${REQUESTS}${id}/`, { scheduled_start: null }));
    assert.deepEqual([cleared.scheduled_start, cleared.scheduled_end], [null, '2026-11-05T12:00:00.000Z']);
  });

  it('ChangeRequest scheduled_start: a datetime or null; stored in UTC; a malformed value is 400 naming scheduled_start', async () => {
    const { cr } = await draftRequest(author, `start-${++n}`);
    assert.equal(cr.scheduled_start, null);
    const set = await ok(author.client.patch(`${REQUESTS}${cr.id}/`, { scheduled_start: '2026-11-02T10:00:00+01:00' }));
    assert.equal(set.scheduled_start, '2026-11-02T09:00:00.000Z');
    for (const bad of ['tomorrow', '2026-13-01T00:00:00Z', 12]) {
      const res = await author.client.patch(`${REQUESTS}${cr.id}/`, { scheduled_start: bad });
      expectStatus(res, 400, String(bad));
      assert.ok(res.body.scheduled_start, JSON.stringify(res.body));
    }
  });

  it('contract 4.1 auto_merge: false by default, writable', async () => {
    const { cr } = await draftRequest(author, `auto-${++n}`);
    assert.equal(cr.auto_merge, false);
    assert.equal((await ok(author.client.patch(`${REQUESTS}${cr.id}/`, { auto_merge: true }))).auto_merge, true);
    expectStatus(await author.client.patch(`${REQUESTS}${cr.id}/`, { auto_merge: 'yes' }), 400);
  });

  it('contract 4.1 policies: read-only [{id, name, matched_object_types}]; a body naming policies is accepted and ignored', async () => {
    const { cr } = await draftRequest(author, `pol-${++n}`);
    assert.equal(cr.policies.length, 1);
    // Besides the contract's three fields, each policy says its enforcement (docs/digest-and-override.md).
    assert.deepEqual(Object.keys(cr.policies[0]).sort(), ['enforcement', 'id', 'matched_object_types', 'name']);
    assert.deepEqual([cr.policies[0].name, cr.policies[0].matched_object_types], ['Devices', ['dcim.device']]);
    const patched = await ok(
      author.client.patch(`${REQUESTS}${cr.id}/`, {
        policies: [],
        approved: true,
        ready_to_merge: true,
        gates_cleared: true,
        has_conflicts: true,
        branch_name: 'x',
        branch_deleted: true,
      }),
    );
    assert.deepEqual(patched.policies, cr.policies);
    assert.equal(patched.approved, false);
    assert.equal(patched.ready_to_merge, false);
    assert.equal(patched.gates_cleared, false);
    assert.equal(patched.branch_name, `pol-${n}`);
    assert.equal(patched.branch_deleted, false);
  });

  it('ChangeRequest custom_fields: a free-form JSON object ({} by default) a write replaces whole (PUT leaving it out clears it), shown in detail, list and changelog; anything else is 400 naming it', async () => {
    const { cr } = await draftRequest(author, `custom-${++n}`, {
      custom_fields: { ticket: 'CHG-1', risk: { score: 2 } },
    });
    assert.deepEqual(cr.custom_fields, { ticket: 'CHG-1', risk: { score: 2 } });
    assert.deepEqual((await draftRequest(author, `custom-none-${++n}`)).cr.custom_fields, {});
    assert.deepEqual(
      (await ok(author.client.patch(`${REQUESTS}${cr.id}/`, { custom_fields: { ticket: 'CHG-2' } }))).custom_fields,
      { ticket: 'CHG-2' },
    );
    assert.deepEqual((await ok(author.client.patch(`${REQUESTS}${cr.id}/`, { priority: 'high' }))).custom_fields, {
      ticket: 'CHG-2',
    });
    assert.deepEqual((await detail(author.client, cr.id)).custom_fields, { ticket: 'CHG-2' });
    assert.deepEqual((await ok(author.client.get(`${REQUESTS}?id=${cr.id}`))).results[0].custom_fields, {
      ticket: 'CHG-2',
    });
    assert.deepEqual((await ok(author.client.put(`${REQUESTS}${cr.id}/`, { title: 'Replaced' }))).custom_fields, {});
    const log = await customFieldsLog(svc.admin, 'change_control.changerequest', cr.id);
    assert.deepEqual(log[0], [undefined, { ticket: 'CHG-1', risk: { score: 2 } }]);
    assert.ok(
      log.some(
        ([pre, post]) =>
          JSON.stringify(pre) === '{"ticket":"CHG-1","risk":{"score":2}}' &&
          JSON.stringify(post) === '{"ticket":"CHG-2"}',
      ),
      JSON.stringify(log),
    );
    assert.deepEqual(log.at(-1)?.[1], {});
    await expectCustomFieldsRefused((custom_fields) => author.client.patch(`${REQUESTS}${cr.id}/`, { custom_fields }));
    assert.deepEqual((await detail(author.client, cr.id)).custom_fields, {});
  });

  it('contract 4.1: an unknown field is 400 naming it', async () => {
    const { cr } = await draftRequest(author, `unknown-${++n}`);
    const res = await author.client.patch(`${REQUESTS}${cr.id}/`, { colour: 'red' });
    expectStatus(res, 400);
    assert.ok(res.body.colour, JSON.stringify(res.body));
  });

  it('ChangeRequest branch and branch_name: the branch id and its name; renaming the branch updates branch_name', async () => {
    const { cr, branchId } = await draftRequest(author, `before-rename-${++n}`);
    assert.equal(cr.branch, branchId);
    assert.equal(cr.branch_name, `before-rename-${n}`);
    assert.equal(cr.branch_deleted, false);
    await ok(author.client.patch(`${BRANCHES}${branchId}/`, { name: `after-rename-${n}` }));
    const d = await detail(author.client, cr.id);
    assert.equal(d.branch_name, `after-rename-${n}`);
    assert.equal(d.branch, branchId);
    assert.deepEqual(await listed(author.client, `branch_name=after-rename-${n}`), [cr.id]);
  });

  it('ChangeRequest branch_deleted: when the branch is deleted the request outlives it as history, keeping branch_name and its reviews', async () => {
    const { cr, branchId } = await draftRequest(author, `doomed-${++n}`);
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    expectStatus(await svc.admin.delete(`${BRANCHES}${branchId}/`), 204);
    const d = await detail(author.client, cr.id);
    assert.equal(d.branch, null);
    assert.equal(d.branch_deleted, true);
    assert.equal(d.branch_name, `doomed-${n}`);
    assert.equal(d.ready_to_merge, false);
    assert.match(d.merge_blocked_reason, /deleted/);
    assert.equal((await ok(author.client.get(`${REVIEWS}?change_request_id=${cr.id}`))).count, 1);
    assert.deepEqual(await listed(author.client, `branch_name=doomed-${n}`), [cr.id]);
    // A new branch of the same name is another branch: it may carry its own request.
    const again = await branch(author.client, `doomed-${n}`);
    expectStatus(await author.client.post(REQUESTS, { branch: again.branch.id }), 201);
  });

  it('ChangeRequest approved: whether the policies are satisfied — false while a rule waits, true once approved', async () => {
    const { cr } = await draftRequest(author, `approved-${++n}`);
    assert.equal(cr.approved, false);
    await ok(act(author.client, cr.id, 'submit'));
    assert.equal((await detail(author.client, cr.id)).approved, false);
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    assert.equal((await detail(author.client, cr.id)).approved, true);
  });

  it('ChangeRequest ready_to_merge: computed at read time — the change window opening flips it with no write in between', async () => {
    const start = new Date(svc.clock.now().getTime() + 2 * 3600_000).toISOString();
    const { cr } = await draftRequest(author, `window-open-${++n}`, { scheduled_start: start });
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    const before = await detail(author.client, cr.id);
    assert.equal(before.approved, true);
    assert.equal(before.ready_to_merge, false);
    assert.match(before.merge_blocked_reason, /window opens/);
    svc.clock.advance(3 * 3600_000);
    const after = await detail(author.client, cr.id);
    assert.equal(after.ready_to_merge, true, after.merge_blocked_reason);
    assert.equal(after.merge_blocked_reason, '');
  });

  it('ChangeRequest merge_blocked_reason: words for every blocker at once (draft, branch not ready, window), empty when ready', async () => {
    const end = new Date(svc.clock.now().getTime() - 60_000).toISOString();
    const { cr, branchId } = await draftRequest(author, `reasons-${++n}`, { scheduled_end: end });
    await svc.host.db.updateTable('branches').set({ status: 'syncing' }).where('id', '=', branchId).execute();
    const d = await detail(author.client, cr.id);
    assert.equal(d.ready_to_merge, false);
    assert.match(d.merge_blocked_reason, /draft/);
    assert.match(d.merge_blocked_reason, /syncing/);
    assert.match(d.merge_blocked_reason, /window closed/);
    await svc.host.db.updateTable('branches').set({ status: 'ready' }).where('id', '=', branchId).execute();
  });

  it('ChangeRequest has_conflicts: computed at read time — true as soon as main genuinely conflicts with the branch', async () => {
    const dev = await mainDevice(svc, { name: `conf-${++n}`, status: 'active', site: 1 });
    const { branch: b, inBranch } = await branch(author.client, `conf-${n}`);
    await patchObject(inBranch, DEVICES, dev.id, { status: 'planned' });
    const cr = await openRequest(author.client, b.id);
    // Main changing another attribute is no conflict.
    await patchObject(svc.admin, DEVICES, dev.id, { site: 2 });
    assert.equal((await detail(author.client, cr.id)).has_conflicts, false);
    // Main changing the same attribute to the branch's value is no conflict either.
    await patchObject(svc.admin, DEVICES, dev.id, { status: 'planned' });
    assert.equal((await detail(author.client, cr.id)).has_conflicts, false);
    await patchObject(svc.admin, DEVICES, dev.id, { status: 'offline' });
    assert.equal((await detail(author.client, cr.id)).has_conflicts, true);
  });
});

describe('General rule 1: a required check not passing blocks the merge whatever the reviews say', () => {
  const svc = suiteService();
  const [author, reviewer, pipeline] = actorsForSuite(svc, ['alice', AUTHOR], ['bob', REVIEWER], ['ci', PIPELINE]);
  before(async () => {
    await policy(svc, {
      name: 'Tested devices',
      object_types: ['dcim.device'],
      checks: ['ci/tests'],
      rules: [{ name: 'bob', users: [reviewer.id] }],
    });
  });

  let n = 0;
  async function approved(): Promise<{ id: number; branchId: number; checkId: number }> {
    const { cr, branchId } = await draftRequest(author, `rule1-${++n}`);
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    return { id: cr.id, branchId, checkId: (await checkNamed(pipeline.client, cr.id, 'ci/tests')).id };
  }

  for (const status of ['pending', 'running', 'failure', 'error'] as const) {
    it(`General rule 1: an approved request whose required check is ${status} is not ready and cannot merge (409 naming the check)`, async () => {
      const { id, branchId, checkId } = await approved();
      if (status !== 'pending')
        await ok(pipeline.client.patch(`${CHECKS}${checkId}/`, { status, summary: `${status} here` }));
      const d = await detail(author.client, id);
      assert.equal(d.status, 'approved');
      assert.equal(d.approved, true);
      assert.equal(d.ready_to_merge, false, 'approved is not the same as ready');
      assert.match(d.merge_blocked_reason, /ci\/tests/);
      assert.equal(d.gates_cleared, false);
      const refused = await merge(svc, branchId);
      expectStatus(refused, 409);
      assert.match(refused.body.detail, /ci\/tests/);
      assert.equal((await ok(svc.admin.get(`${BRANCHES}${branchId}/`))).status, 'ready');
    });
  }

  for (const status of ['success', 'skipped'] as const) {
    it(`General rule 1: with the required check ${status} the approved request is ready and merges`, async () => {
      const { id, branchId, checkId } = await approved();
      await ok(pipeline.client.patch(`${CHECKS}${checkId}/`, { status }));
      const d = await detail(author.client, id);
      assert.equal(d.ready_to_merge, true, d.merge_blocked_reason);
      expectStatus(await merge(svc, branchId), 200);
      assert.equal((await detail(author.client, id)).status, 'completed');
    });
  }

  it('General rule 1: a failing required check blocks even with more approvals than needed and the reviewers all agreeing', async () => {
    const extra = await actor(svc, 'extra', REVIEWER);
    const { id, branchId, checkId } = await approved();
    expectStatus(await review(extra.client, id, 'approve'), 201);
    await ok(pipeline.client.patch(`${CHECKS}${checkId}/`, { status: 'failure', summary: 'unit tests red' }));
    const d = await detail(author.client, id);
    assert.equal(d.approved, true);
    assert.equal(d.ready_to_merge, false);
    assert.match(d.merge_blocked_reason, /unit tests red/);
    expectStatus(await merge(svc, branchId), 409);
  });
});
