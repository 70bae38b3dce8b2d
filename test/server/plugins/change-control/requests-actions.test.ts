import assert from 'node:assert/strict';
import { CALLER_ACTIONS } from '../../../../contract/api/change-control';
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
  expectStatus,
  ok,
  openRequest,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  actorsForSuite,
} from './fixtures';
import { draftRequest, PIPELINE, VIEW_ONLY } from './requests-support';

const MERGER = [{ object_types: ['branching.branch'], actions: ['merge', 'change'] }];
/** The lifecycle actions: the path of each, and its key in `actions`. */
const LIFECYCLE: Array<
  ['submit' | 'return-to-draft' | 'abandon' | 'reopen', 'submit' | 'return_to_draft' | 'abandon' | 'reopen']
> = [
  ['submit', 'submit'],
  ['return-to-draft', 'return_to_draft'],
  ['abandon', 'abandon'],
  ['reopen', 'reopen'],
];

describe('change requests: actions (what the caller may do next, with reasons)', () => {
  const svc = suiteService();
  const [author, reviewer, pipeline] = actorsForSuite(
    svc,
    ['alice', [...AUTHOR, ...MERGER]],
    ['bob', REVIEWER],
    ['ci', PIPELINE],
  );
  let n = 0;
  before(async () => {
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      checks: ['ci/tests'],
      rules: [{ name: 'bob', users: [reviewer.id] }],
    });
  });

  it('actions: every change request carries one entry per caller action, each {allowed, reason}', async () => {
    const { cr } = await draftRequest(author, `keys-${++n}`);
    assert.deepEqual(Object.keys(cr.actions).sort(), [...CALLER_ACTIONS].sort());
    for (const [name, a] of Object.entries(cr.actions) as Array<[string, any]>) {
      assert.equal(typeof a.allowed, 'boolean', name);
      if (a.allowed) assert.ok(a.reason === null || typeof a.reason === 'string', name);
      else assert.ok(typeof a.reason === 'string' && a.reason.length > 0, `${name} refused without a reason`);
    }
  });

  it('actions: for the author of a draft — submit allowed; return to draft and reopen refused with the 409 reason; abandon, review and re-run refused for want of permission', async () => {
    const { cr } = await draftRequest(author, `author-${++n}`);
    const a = (await detail(author.client, cr.id)).actions;
    assert.deepEqual(a.submit, { allowed: true, reason: null });
    assert.equal(a.return_to_draft.allowed, false);
    assert.equal(a.reopen.allowed, false);
    assert.equal(a.abandon.allowed, false);
    assert.match(a.abandon.reason, /^You need change_control\.abandon_changerequest to abandon this change request\.$/);
    assert.equal(a.review.allowed, false);
    assert.match(a.review.reason, /^You need [a-z_]+\.[a-z_]+ to /);
    assert.equal(a.run_checks.allowed, false);
    assert.match(a.run_checks.reason, /^You need [a-z_]+\.[a-z_]+ to /);
    assert.equal(a.comment.allowed, true);
    assert.equal(a.merge.allowed, false);
    assert.match(a.merge.reason, /draft/);
  });

  it('Branch actions need their own permission: a holder of merge_branch for the branch may merge it without owning it or holding change_branch; one whose merge_branch constraints exclude the branch is refused, naming it (detail and list)', async () => {
    const { cr, branchId } = await draftRequest(author, `not-mine-${++n}`);
    const stranger = await actor(svc, `stranger-${n}`, [
      ...VIEW_ONLY,
      { object_types: ['branching.branch'], actions: ['view'] },
      { object_types: ['branching.branch'], actions: ['merge'], constraints: { name: 'elsewhere' } },
    ]);
    const words = `You may not merge branch "not-mine-${n}": that needs branching.merge_branch for it.`;
    assert.deepEqual((await detail(stranger.client, cr.id)).actions.merge, { allowed: false, reason: words });
    const listed = (await stranger.client.get(`${REQUESTS}?id=${cr.id}`)).body.results[0];
    assert.deepEqual(listed.actions.merge, { allowed: false, reason: words });
    assert.equal((await stranger.client.post(`${BRANCHES}${branchId}/merge/`, { commit: true })).status, 403);

    // merge_branch admitting the branch is all a merge asks of the merger (the gate decides the rest).
    const releaser = await actor(svc, `releaser-${n}`, [
      ...VIEW_ONLY,
      { object_types: ['branching.branch'], actions: ['view', 'merge'] },
    ]);
    const refusedByGate = (await detail(releaser.client, cr.id)).actions.merge;
    assert.equal(refusedByGate.allowed, false);
    assert.match(refusedByGate.reason, /draft/, 'the gate, not the branch, is what refuses now');
    const res = await releaser.client.post(`${BRANCHES}${branchId}/merge/`, { commit: true });
    assert.equal(res.status, 409, 'past the permission: the gate answers');
    assert.match(res.body.detail, /draft/);
  });

  it('automatic merge is a merge: asking for it on a branch the caller may not write is 403 naming the branch (create and update); without it the request is created', async () => {
    const mine = await branch(author.client, `auto-not-mine-${++n}`);
    const requester = await actor(svc, `requester-${n}`, [
      ...VIEW_ONLY,
      { object_types: ['change_control.changerequest'], actions: ['add', 'change'] },
    ]);
    const words = `You may not write to branch "auto-not-mine-${n}": only its owner or a holder of branching.change_branch for it may.`;
    const refused = await requester.client.post(REQUESTS, { branch: mine.branch.id, auto_merge: true });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.detail, words);
    assert.equal((await svc.admin.get(`${REQUESTS}?branch_id=${mine.branch.id}`)).body.count, 0, 'nothing was created');
    const cr = await openRequest(requester.client, mine.branch.id);
    assert.equal(cr.auto_merge, false);
    const patched = await requester.client.patch(`${REQUESTS}${cr.id}/`, { auto_merge: true });
    assert.equal(patched.status, 403);
    assert.equal(patched.body.detail, words);
    assert.equal((await detail(author.client, cr.id)).auto_merge, false);
    // The branch's owner may ask for it, and anyone may turn it off.
    await ok(author.client.patch(`${REQUESTS}${cr.id}/`, { auto_merge: true }));
    assert.equal((await ok(requester.client.patch(`${REQUESTS}${cr.id}/`, { auto_merge: false }))).auto_merge, false);
  });

  it('a change request for a branch the caller cannot view is refused exactly as for a branch that does not exist', async () => {
    const hidden = await branch(author.client, `hidden-${++n}`);
    const blind = await actor(svc, `blind-${n}`, [
      { object_types: ['branching.branch'], actions: ['view'], constraints: { owner: -1 } },
      { object_types: ['change_control.changerequest'], actions: ['add', 'view'] },
    ]);
    const ghost = await blind.client.post(REQUESTS, { branch: 999999 });
    const refused = await blind.client.post(REQUESTS, { branch: hidden.branch.id });
    assert.equal(refused.status, ghost.status);
    assert.deepEqual(
      refused.body,
      JSON.parse(JSON.stringify(ghost.body).replaceAll('999999', String(hidden.branch.id))),
    );
    assert.equal((await svc.admin.get(`${REQUESTS}?branch_id=${hidden.branch.id}`)).body.count, 0);
  });

  it('actions: a lifecycle action refused for its state carries exactly the detail the service answers with 409', async () => {
    const { cr } = await draftRequest(author, `same-words-${++n}`);
    await ok(act(author.client, cr.id, 'submit'));
    const admin = (await detail(svc.admin, cr.id)).actions;
    for (const [path, key] of LIFECYCLE) {
      const res = await act(svc.admin, cr.id, path);
      if (admin[key].allowed) {
        assert.notEqual(res.status, 409, `${path} is offered, so it must not be refused for its state`);
        break; // the state moved; the rest is checked on a fresh request below
      }
      expectStatus(res, 409, path);
      assert.equal(res.body.detail, admin[key].reason, path);
    }
    const fresh = (await draftRequest(author, `same-words-${++n}`)).cr;
    await ok(act(svc.admin, fresh.id, 'abandon'));
    const closed = (await detail(svc.admin, fresh.id)).actions;
    for (const [path, key] of LIFECYCLE.filter(([p]) => p !== 'reopen')) {
      const res = await act(svc.admin, fresh.id, path);
      expectStatus(res, 409, path);
      assert.equal(closed[key].allowed, false, path);
      assert.equal(res.body.detail, closed[key].reason, path);
    }
  });

  it('actions: a lifecycle action refused for want of permission is refused with 403 by the service too', async () => {
    const { cr } = await draftRequest(author, `perm-words-${++n}`);
    await ok(act(author.client, cr.id, 'submit'));
    const a = (await detail(reviewer.client, cr.id)).actions;
    for (const [path, key] of LIFECYCLE) {
      assert.equal(a[key].allowed, false, path);
      if (/^You need [a-z_]+\.[a-z_]+ to /.test(a[key].reason))
        expectStatus(await act(reviewer.client, cr.id, path), 403, path);
    }
    assert.match(a.return_to_draft.reason, /^You need [a-z_]+\.[a-z_]+ to /);
    assert.match(a.abandon.reason, /^You need [a-z_]+\.[a-z_]+ to /);
  });

  it('actions: an action whose permission constraint excludes this request is refused for want of permission', async () => {
    const { cr } = await draftRequest(author, `constrained-${++n}`);
    const who = await actor(svc, `constrained-${n}`, [
      ...VIEW_ONLY,
      { object_types: ['change_control.changerequest'], actions: ['abandon'], constraints: { ref: 'OTHER' } },
    ]);
    const a = (await detail(who.client, cr.id)).actions;
    assert.equal(a.abandon.allowed, false);
    assert.match(a.abandon.reason, /^You need [a-z_]+\.[a-z_]+ to /);
    expectStatus(await act(who.client, cr.id, 'abandon'), 403);
    const free = await actor(svc, `free-${n}`, [
      ...VIEW_ONLY,
      { object_types: ['change_control.changerequest'], actions: ['abandon'] },
    ]);
    assert.deepEqual((await detail(free.client, cr.id)).actions.abandon, { allowed: true, reason: null });
  });

  it('actions: review — allowed to an eligible reviewer of an open request, refused to the requester (own request) and on closed requests', async () => {
    const { cr } = await draftRequest(author, `review-${++n}`);
    await ok(act(author.client, cr.id, 'submit'));
    assert.deepEqual((await detail(reviewer.client, cr.id)).actions.review, { allowed: true, reason: null });
    const selfReviewer = await actor(svc, `self-${n}`, [...AUTHOR, ...REVIEWER]);
    const own = (await draftRequest(selfReviewer, `own-${n}`)).cr;
    const mine = (await detail(selfReviewer.client, own.id)).actions.review;
    assert.equal(mine.allowed, false);
    assert.match(mine.reason, /your own/);
    const refused = await review(selfReviewer.client, own.id, 'approve');
    expectStatus(refused, 400);
    await ok(act(svc.admin, cr.id, 'abandon'));
    const closed = (await detail(reviewer.client, cr.id)).actions.review;
    assert.equal(closed.allowed, false);
    assert.match(closed.reason, /abandoned/);
  });

  it('actions: merge — refused with the merge_blocked_reason until ready, then allowed; the merge endpoint agrees both times', async () => {
    const { cr, branchId } = await draftRequest(author, `merge-${++n}`);
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    const blocked = await detail(author.client, cr.id);
    assert.equal(blocked.actions.merge.allowed, false);
    assert.equal(blocked.actions.merge.reason, blocked.merge_blocked_reason);
    const refused = await author.client.post(`${BRANCHES}${branchId}/merge/`, { commit: true });
    expectStatus(refused, 409);
    assert.equal(refused.body.detail, blocked.merge_blocked_reason);
    const check = await checkNamed(pipeline.client, cr.id, 'ci/tests');
    await ok(pipeline.client.patch(`${CHECKS}${check.id}/`, { status: 'success' }));
    const ready = await detail(author.client, cr.id);
    assert.deepEqual(ready.actions.merge, { allowed: true, reason: null });
    // Someone without branching.merge_branch is told so.
    const m = (await detail(reviewer.client, cr.id)).actions.merge;
    assert.equal(m.allowed, false);
    assert.match(m.reason, /^You need [a-z_]+\.[a-z_]+ to /);
    expectStatus(await author.client.post(`${BRANCHES}${branchId}/merge/`, { commit: true }), 200);
    const done = (await detail(author.client, cr.id)).actions;
    for (const key of ['submit', 'return_to_draft', 'abandon', 'reopen', 'review', 'run_checks', 'merge'] as const) {
      assert.equal(done[key].allowed, false, key);
    }
  });

  it('actions: merge outside the change window — refused with the window reason; allowed (with a note) to a holder of the override', async () => {
    const start = new Date(svc.clock.now().getTime() + 3600_000).toISOString();
    const { cr } = await draftRequest(author, `window-${++n}`, { scheduled_start: start });
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    const check = await checkNamed(pipeline.client, cr.id, 'ci/tests');
    await ok(pipeline.client.patch(`${CHECKS}${check.id}/`, { status: 'success' }));
    const plain = (await detail(author.client, cr.id)).actions.merge;
    assert.equal(plain.allowed, false);
    assert.match(plain.reason, /window opens/);
    const overrider = await actor(svc, `override-${n}`, [
      ...VIEW_ONLY,
      ...MERGER,
      { object_types: ['change_control.changerequest'], actions: ['override_window'] },
    ]);
    const over = (await detail(overrider.client, cr.id)).actions.merge;
    assert.equal(over.allowed, true);
    assert.match(over.reason, /override/);
  });

  it('actions: run_checks — allowed to a holder of change_mergecheck on an open request; the endpoint answers the request', async () => {
    const { cr } = await draftRequest(author, `rerun-${++n}`);
    assert.deepEqual((await detail(pipeline.client, cr.id)).actions.run_checks, { allowed: true, reason: null });
    const res = await pipeline.client.post(`${REQUESTS}${cr.id}/run-checks/`, {});
    expectStatus(res, 200);
    assert.equal(res.body.id, cr.id);
    expectStatus(await author.client.post(`${REQUESTS}${cr.id}/run-checks/`, {}), 403);
  });

  it('actions: submit and comment are refused once the branch is deleted, with the reason', async () => {
    const { cr, branchId } = await draftRequest(author, `gone-${++n}`);
    expectStatus(await svc.admin.delete(`${BRANCHES}${branchId}/`), 204);
    const a = (await detail(author.client, cr.id)).actions;
    assert.equal(a.submit.allowed, false);
    assert.match(a.submit.reason, /branch/);
    assert.equal(a.comment.allowed, false);
    assert.match(a.comment.reason, /branch/);
  });

  it('actions edit and sync: allowed as the service itself decides (change_changerequest with its constraints, branching.sync_branch for the branch); refused with the permission named, and the write agrees', async () => {
    const { cr } = await draftRequest(author, `edit-sync-${++n}`);
    const mine = (await detail(author.client, cr.id)).actions;
    assert.deepEqual(mine.edit, { allowed: true, reason: null });
    assert.deepEqual(mine.sync, { allowed: true, reason: null });
    const theirs = (await detail(reviewer.client, cr.id)).actions;
    assert.deepEqual(theirs.edit, {
      allowed: false,
      reason: 'You need change_control.change_changerequest to edit this change request.',
    });
    expectStatus(await reviewer.client.patch(`${REQUESTS}${cr.id}/`, { title: 'not mine' }), 403);
    assert.deepEqual(theirs.sync, { allowed: false, reason: 'You need branching.sync_branch to sync branches.' });
    expectStatus(await reviewer.client.post(`${BRANCHES}${cr.branch}/sync/`, { commit: false }), 403);
    // Constraints decide per request: an editor of their own requests only.
    const ownOnly = await actor(svc, `own-editor-${n}`, [
      ...REVIEWER,
      { object_types: ['change_control.changerequest'], actions: ['change'], constraints: { requester: '$user' } },
    ]);
    assert.equal((await detail(ownOnly.client, cr.id)).actions.edit.allowed, false);
    expectStatus(await ownOnly.client.patch(`${REQUESTS}${cr.id}/`, { title: 'not mine either' }), 403);
  });

  it('actions override: its reason names what is missing, change_control.override_gate, or for a holder of it without the branch right, branching.merge_branch', async () => {
    const { cr } = await draftRequest(author, `override-hint-${++n}`);
    await ok(act(author.client, cr.id, 'submit'));
    const holderWithoutMerge = await actor(svc, `gate-holder-${n}`, [
      ...REVIEWER,
      { object_types: ['change_control.gate'], actions: ['override'] },
    ]);
    assert.deepEqual((await detail(holderWithoutMerge.client, cr.id)).actions.override, {
      allowed: false,
      reason: 'You need branching.merge_branch to merge branches.',
    });
    assert.deepEqual((await detail(reviewer.client, cr.id)).actions.override, {
      allowed: false,
      reason: 'You need change_control.override_gate to override the merge gate of this change request.',
    });
  });

  it("actions: the list shows each request's actions for the caller too", async () => {
    const { cr } = await draftRequest(author, `listed-${++n}`);
    const mine = (await ok(author.client.get(`${REQUESTS}?id=${cr.id}`))).results[0].actions;
    assert.deepEqual(mine.submit, { allowed: true, reason: null });
    const theirs = (await ok(reviewer.client.get(`${REQUESTS}?id=${cr.id}`))).results[0].actions;
    assert.equal(theirs.submit.allowed, false);
    assert.match(theirs.submit.reason, /^You need [a-z_]+\.[a-z_]+ to /);
    assert.deepEqual(theirs.review, { allowed: true, reason: null });
  });

  it('Endpoints: the four lifecycle POSTs take an empty body — no body at all is accepted', async () => {
    const { cr } = await draftRequest(author, `nobody-${++n}`);
    const res = await author.client.request('POST', `${REQUESTS}${cr.id}/submit/`);
    expectStatus(res, 200);
    assert.equal(res.body.status, 'needs-review');
    expectStatus(
      await author.client.request('POST', `${REQUESTS}${cr.id}/submit/`, undefined, {
        raw: '[1]',
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
    );
  });
});
