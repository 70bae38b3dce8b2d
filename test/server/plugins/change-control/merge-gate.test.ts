import assert from 'node:assert/strict';
import { eachTestService, startService, suiteService, type TestService } from '../../../support/service';
import {
  act,
  actor,
  AUTHOR,
  branch,
  CHECKS,
  checkNamed,
  created,
  detail,
  device,
  DEVICES,
  expectStatus,
  grant,
  ok,
  openRequest,
  policy,
  REQUESTS,
  review,
  REVIEWS,
  VIEW_ALL,
  ccDb,
} from './fixtures';
import {
  assertRefusedMerge,
  branchOf,
  gateCast,
  mainDeviceNames,
  mergeBranch,
  MERGER,
  scenario,
  type GateCast,
} from './gate-support';
import { forSuite, forEachTest } from '../../../support/prepared';

describe('change control: the merge gate', () => {
  describe('a blocked branch cannot merge', () => {
    const svc = suiteService({ config: { change_control: { required_external_checks: [['ci/build', 'CI build']] } } });
    const cast = forSuite(() => gateCast(svc));

    it('Merge gate: a blocked branch answers POST merge/ with 409, the blocking reason in detail, and writes nothing (main untouched, branch still ready)', async () => {
      const s = await scenario(cast, 'blocked-review', { upTo: 'needs-review' });
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, false);
      const reason = await assertRefusedMerge(
        svc,
        cast.author.client,
        s,
        /Rule "netops" of policy "Devices" has 0 of 1 required approval/,
      );
      assert.equal(reason, cr.merge_blocked_reason, "the refusal is the request's blocked reason");
      assert.deepEqual(await mainDeviceNames(svc), []);
      const after = await detail(cast.author.client, s.cr.id);
      assert.equal(after.status, 'needs-review');
      assert.equal(after.branch_deleted, false);
    });

    it('Merge gate: a dry run (commit false) of a blocked branch is refused the same way and writes nothing', async () => {
      const s = await scenario(cast, 'blocked-dry', { upTo: 'draft' });
      const res = await mergeBranch(cast.author.client, s.branch.id, false);
      expectStatus(res, 409);
      assert.match(res.body.detail, /draft/);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
    });

    it('Merge gate: the merge button is not offered while blocked (actions.merge not allowed, with the reason)', async () => {
      const s = await scenario(cast, 'blocked-button', { upTo: 'approved' });
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.approved, true);
      assert.equal(cr.ready_to_merge, false);
      assert.equal(cr.actions.merge.allowed, false);
      assert.equal(cr.actions.merge.reason, cr.merge_blocked_reason);
      assert.match(
        cr.merge_blocked_reason,
        /Required check "CI build" has not been reported|Required check "CI build"/,
      );
    });

    it('General rule 1 with the gate: an approved request whose required check is not passing cannot merge, whatever the reviews say', async () => {
      const s = await scenario(cast, 'blocked-check', { upTo: 'approved' });
      const ci = await checkNamed(svc.admin, s.cr.id, 'ci/build');
      await ok(svc.admin.patch(`${CHECKS}${ci.id}/`, { status: 'failure', summary: 'tests failed' }));
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.status, 'approved');
      assert.equal(cr.approved, true);
      assert.equal(cr.ready_to_merge, false);
      assert.equal(cr.merge_blocked_reason, 'Required check "CI build" failed (tests failed).');
      await assertRefusedMerge(svc, cast.author.client, s, /Required check "CI build" failed \(tests failed\)/);

      await ok(svc.admin.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
      const ready = await detail(cast.author.client, s.cr.id);
      assert.equal(ready.ready_to_merge, true, ready.merge_blocked_reason);
      assert.equal(ready.merge_blocked_reason, '');
      assert.equal(ready.actions.merge.allowed, true);
      await ok(mergeBranch(cast.author.client, s.branch.id));
      assert.deepEqual(await mainDeviceNames(svc), ['blocked-check-dev']);
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
    });

    it('Merge gate: a branch without a change request cannot merge while enforce_merge_gate is on (409 naming the reason)', async () => {
      const { branch: b, inBranch } = await branch(cast.author.client, 'no-request');
      await device(inBranch, { name: 'orphan' });
      const res = await mergeBranch(cast.author.client, b.id);
      expectStatus(res, 409);
      assert.match(res.body.detail, /has no change request/);
      assert.equal((await branchOf(svc, b.id)).status, 'ready');
      assert.ok(!(await mainDeviceNames(svc)).includes('orphan'));
    });
  });

  describe('ready_to_merge and merge_blocked_reason, computed at read time', () => {
    const svc = suiteService({ config: { change_control: { required_external_checks: ['ci/build'] } } });
    const cast = forSuite(() => gateCast(svc));

    async function passCi(crId: number): Promise<void> {
      const ci = await checkNamed(svc.admin, crId, 'ci/build');
      await ok(svc.admin.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
    }

    it('ChangeRequest ready_to_merge: a draft is not ready, and says to submit it', async () => {
      const s = await scenario(cast, 'words-draft', { upTo: 'draft' });
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, false);
      assert.match(cr.merge_blocked_reason, /^The change request is a draft; submit it for review\./);
    });

    it('ChangeRequest merge_blocked_reason: under review, it names the unsatisfied rule and its count', async () => {
      const s = await scenario(cast, 'words-review', { upTo: 'needs-review' });
      await passCi(s.cr.id);
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, false);
      assert.equal(cr.merge_blocked_reason, 'Rule "netops" of policy "Devices" has 0 of 1 required approval.');
    });

    it('ChangeRequest merge_blocked_reason: rejected, it names who requested changes', async () => {
      const s = await scenario(cast, 'words-rejected', { upTo: 'needs-review' });
      await passCi(s.cr.id);
      expectStatus(await review(cast.reviewer.client, s.cr.id, 'reject', 'please rename'), 201);
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.status, 'rejected');
      assert.equal(cr.ready_to_merge, false);
      assert.match(cr.merge_blocked_reason, /Changes requested by reviewer\./);
      await assertRefusedMerge(svc, cast.author.client, s, /Changes requested by reviewer/);
    });

    it('ChangeRequest merge_blocked_reason: a required check never reported names the check', async () => {
      const s = await scenario(cast, 'words-check', { upTo: 'approved' });
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.approved, true);
      assert.equal(cr.ready_to_merge, false);
      assert.equal(cr.merge_blocked_reason, 'Required check "ci/build" is pending.');
    });

    it('ChangeRequest ready_to_merge: "Approved is not the same": approved with checks passing but a change window not yet open is not ready', async () => {
      const s = await scenario(cast, 'words-window', {
        upTo: 'approved',
        fields: { scheduled_start: '2026-11-02T22:00:00Z', scheduled_end: '2026-11-03T02:00:00Z' },
      });
      await passCi(s.cr.id);
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.approved, true);
      assert.equal(cr.status, 'approved');
      assert.equal(cr.gates_cleared, true, 'gates_cleared excludes the change window');
      assert.equal(cr.ready_to_merge, false);
      assert.equal(cr.merge_blocked_reason, 'The change window opens at 2026-11-02T22:00:00.000Z.');
    });

    it('ChangeRequest ready_to_merge: true, with an empty merge_blocked_reason, once policies, checks, window and branch all clear', async () => {
      const s = await scenario(cast, 'words-ready', { upTo: 'approved' });
      await passCi(s.cr.id);
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, true, cr.merge_blocked_reason);
      assert.equal(cr.merge_blocked_reason, '');
    });

    it('ChangeRequest ready_to_merge: read time: the same request turns ready and back without any write, as the clock passes the window', async () => {
      const s = await scenario(cast, 'words-clock', {
        upTo: 'approved',
        fields: { scheduled_start: '2026-11-01T10:00:00Z', scheduled_end: '2026-11-01T11:00:00Z' },
      });
      await passCi(s.cr.id);
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, false);
      svc.clock.set('2026-11-01T10:30:00Z');
      try {
        const open = await detail(cast.author.client, s.cr.id);
        assert.equal(open.ready_to_merge, true, open.merge_blocked_reason);
        svc.clock.set('2026-11-01T11:00:00Z');
        const closed = await detail(cast.author.client, s.cr.id);
        assert.equal(closed.ready_to_merge, false);
        assert.equal(closed.merge_blocked_reason, 'The change window closed at 2026-11-01T11:00:00.000Z.');
      } finally {
        svc.clock.set('2026-11-01T09:00:00Z');
      }
    });

    it('ChangeRequest merge_blocked_reason: abandoned and completed requests say so', async () => {
      const s = await scenario(cast, 'words-abandoned', { upTo: 'needs-review' });
      await grantAbandon(svc, cast);
      await ok(act(cast.author.client, s.cr.id, 'abandon'));
      const abandoned = await detail(cast.author.client, s.cr.id);
      assert.equal(abandoned.ready_to_merge, false);
      assert.equal(abandoned.merge_blocked_reason, 'The change request is abandoned.');
      await assertRefusedMerge(svc, cast.author.client, s, /abandoned/);

      const m = await scenario(cast, 'words-completed', { upTo: 'approved' });
      await passCi(m.cr.id);
      await ok(mergeBranch(cast.author.client, m.branch.id));
      const completed = await detail(cast.author.client, m.cr.id);
      assert.equal(completed.status, 'completed');
      assert.equal(completed.ready_to_merge, false);
      assert.equal(completed.merge_blocked_reason, 'The change request is completed.');
    });

    it('ChangeRequest merge_blocked_reason: a branch that is not ready (e.g. archived) is named with its status', async () => {
      const s = await scenario(cast, 'words-archived', { upTo: 'approved' });
      await passCi(s.cr.id);
      await ccDb(svc).updateTable('branches').set({ status: 'archived' }).where('id', '=', s.branch.id).execute();
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, false);
      assert.equal(cr.merge_blocked_reason, 'Branch "words-archived" is archived.');
      expectStatus(await mergeBranch(cast.author.client, s.branch.id), 409);
      await ccDb(svc).updateTable('branches').set({ status: 'ready' }).where('id', '=', s.branch.id).execute();
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
    });

    it('ChangeRequest merge_blocked_reason: a deleted branch says the branch is gone', async () => {
      const s = await scenario(cast, 'words-deleted', { upTo: 'approved' });
      await passCi(s.cr.id);
      expectStatus(await cast.author.client.delete(`/api/plugins/branching/branches/${s.branch.id}/`), 204);
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, false);
      assert.match(cr.merge_blocked_reason, /The branch of this change request has been deleted\./);
    });
  });

  describe('General rule 2 at the gate', () => {
    let svc: TestService;
    afterEach(async () => svc.close());

    it('General rule 2: a branch matched only by a checks-only policy cannot merge: "No policy rules apply"', async () => {
      svc = await startService();
      const author = await actor(svc, 'author', MERGER);
      await policy(svc, { name: 'Checks only', object_types: ['dcim.device'], checks: ['has-changes'] });
      const { branch: b, inBranch } = await branch(author.client, 'checks-only');
      await device(inBranch, { name: 'x' });
      const cr = await openRequest(author.client, b.id);
      await ok(act(author.client, cr.id, 'submit'));
      const shown = await detail(author.client, cr.id);
      assert.equal(shown.approved, false);
      assert.equal(shown.ready_to_merge, false);
      assert.match(shown.merge_blocked_reason, /No policy rules apply/);
      const res = await mergeBranch(author.client, b.id);
      expectStatus(res, 409);
      assert.match(res.body.detail, /No policy rules apply/);
    });
  });

  describe('General rule 3: the merge gate re-matches policies for itself', () => {
    const svc = eachTestService();
    const cast = forEachTest(() => gateCast(svc));

    it('General rule 3: a policy written straight into the database (no refresh, the attached set out of date) still governs the merge', async () => {
      const s = await scenario(cast, 'rematch-new');
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
      const other = await actor(svc, 'security', []);
      const now = svc.clock.now().toISOString();
      const row = await ccDb(svc)
        .insertInto('cc_policies')
        .values({
          name: 'Security',
          description: '',
          enabled: 1,
          weight: 10,
          object_types: '["dcim.device"]',
          conditions: null,
          condition_state: 'either',
          checks: '[]',
          comments: '',
          created: now,
          last_updated: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const policyId = (row as { id: number }).id;
      await ccDb(svc)
        .insertInto('cc_policy_rules')
        .values({
          policy_id: policyId,
          name: 'security-team',
          min_reviews: 1,
          groups: '[]',
          users: JSON.stringify([other.id]),
          created: now,
          last_updated: now,
        })
        .execute();

      // The attached set and the cached list still show the old picture.
      const attached = await ccDb(svc)
        .selectFrom('cc_change_request_policies')
        .selectAll()
        .where('change_request_id', '=', s.cr.id)
        .execute();
      assert.equal(attached.length, 1, 'the attached set is out of date');
      const listed = await ok(cast.author.client.get(`${REQUESTS}?id=${s.cr.id}`));
      assert.equal(listed.results[0].gates_cleared, true, 'the cached filter still says cleared');

      await assertRefusedMerge(
        svc,
        cast.author.client,
        s,
        /Rule "security-team" of policy "Security" has 0 of 1 required approval/,
      );
      const live = await detail(cast.author.client, s.cr.id);
      assert.equal(live.ready_to_merge, false);
      assert.match(live.merge_blocked_reason, /security-team/);
    });

    it('General rule 3: a policy whose conditions start matching (changed without a refresh) governs the merge', async () => {
      const other = await actor(svc, 'security', []);
      const p = await policy(svc, {
        name: 'Active devices',
        object_types: ['dcim.device'],
        conditions: { attr: 'status', op: 'eq', value: 'active' },
        rules: [{ name: 'security-team', users: [other.id] }],
      });
      const s = await scenario(cast, 'rematch-conditions');
      const before = await detail(cast.author.client, s.cr.id);
      assert.deepEqual(
        before.policies.map((x: { name: string }) => x.name),
        ['Devices'],
        'a planned device does not match',
      );
      assert.equal(before.ready_to_merge, true);

      await ccDb(svc)
        .updateTable('cc_policies')
        .set({ conditions: JSON.stringify({ attr: 'status', op: 'eq', value: 'planned' }) })
        .where('id', '=', p.id)
        .execute();
      const attached = await ccDb(svc)
        .selectFrom('cc_change_request_policies')
        .selectAll()
        .where('change_request_id', '=', s.cr.id)
        .execute();
      assert.equal(attached.length, 1, 'the attached set is out of date');

      await assertRefusedMerge(svc, cast.author.client, s, /security-team/);

      // Once the policy no longer applies, the gate lets it through.
      await ccDb(svc).updateTable('cc_policies').set({ enabled: 0 }).where('id', '=', p.id).execute();
      await ok(mergeBranch(cast.author.client, s.branch.id));
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
    });

    it('General rule 3: policies re-match when the branch touches something new (a new object type attaches its policy and blocks)', async () => {
      const other = await actor(svc, 'prefixes-team', []);
      await policy(svc, {
        name: 'Prefixes',
        object_types: ['ipam.prefix'],
        rules: [{ name: 'ipam', users: [other.id] }],
      });
      const s = await scenario(cast, 'rematch-touch');
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
      await grantPrefixes(svc, cast);
      expectStatus(await s.inBranch.post('/api/ipam/prefixes/', { prefix: '10.0.0.0/24' }), 201);
      const cr = await detail(cast.author.client, s.cr.id);
      assert.deepEqual(cr.policies.map((x: { name: string }) => x.name).sort(), ['Devices', 'Prefixes']);
      assert.equal(cr.ready_to_merge, false);
      await assertRefusedMerge(svc, cast.author.client, { ...s, cr }, /Rule "ipam" of policy "Prefixes"/);
    });
  });

  describe('has_conflicts, live on detail', () => {
    const svc = suiteService();
    const cast = forSuite(() => gateCast(svc));

    it('ChangeRequest has_conflicts: true on detail as soon as main changes an attribute the branch changed differently; false when both agree', async () => {
      const router = await created(svc.admin.post(DEVICES, { name: 'core1', status: 'active', serial: 'A' }));
      const { branch: b, inBranch } = await branch(cast.author.client, 'conflicting');
      await ok(inBranch.patch(`${DEVICES}${router.id}/`, { status: 'offline', serial: 'B' }));
      const cr = await openRequest(cast.author.client, b.id);
      assert.equal((await detail(cast.author.client, cr.id)).has_conflicts, false);

      // Main agrees on serial: no genuine conflict.
      await ok(svc.admin.patch(`${DEVICES}${router.id}/`, { serial: 'B' }));
      assert.equal(
        (await detail(cast.author.client, cr.id)).has_conflicts,
        false,
        'the same value on both sides is not a conflict',
      );

      // Main moves status elsewhere: a conflict, visible at once on detail.
      await ok(svc.admin.patch(`${DEVICES}${router.id}/`, { status: 'failed' }));
      const shown = await detail(cast.author.client, cr.id);
      assert.equal(shown.has_conflicts, true);
    });
  });

  describe('enforce_merge_gate false', () => {
    const svc = suiteService({
      config: { change_control: { enforce_merge_gate: false, required_external_checks: ['ci/build'] } },
    });

    it('Setting enforce_merge_gate false: a blocked branch merges (a draft request is completed by the merge)', async () => {
      const cast = await gateCast(svc);
      const s = await scenario(cast, 'unenforced', { upTo: 'draft' });
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, false, 'the request still reports itself blocked');
      assert.equal(cr.actions.merge.allowed, true, 'the merge is offered: the gate does not hold it back');
      assert.match(cr.actions.merge.reason, /^The merge gate is not enforced\. The change request is a draft/);
      await ok(mergeBranch(cast.author.client, s.branch.id));
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
      assert.deepEqual(await mainDeviceNames(svc), ['unenforced-dev']);
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');

      const { branch: b, inBranch } = await branch(cast.author.client, 'unenforced-orphan');
      await device(inBranch, { name: 'orphan' });
      await ok(mergeBranch(cast.author.client, b.id), 'a branch without a change request merges too');
    });
  });

  describe('permission matrix: merging (branching.merge_branch)', () => {
    const svc = suiteService();
    const cast = forSuite(() => gateCast(svc, AUTHOR));

    it('Permission branching.merge_branch: without it, merging a ready branch is 403 and nothing is written', async () => {
      const s = await scenario(cast, 'perm-none');
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
      const res = await mergeBranch(cast.author.client, s.branch.id);
      expectStatus(res, 403);
      assert.equal(typeof res.body.detail, 'string');
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      assert.equal((await detail(cast.author.client, s.cr.id)).actions.merge.allowed, false);
    });

    it('Permission branching.merge_branch: a constraint that hides the branch from the caller answers 404', async () => {
      const s = await scenario(cast, 'perm-hidden');
      const merger = await actor(svc, 'own-branches-only', [
        { object_types: ['branching.branch'], actions: ['view', 'merge'], constraints: { owner: '$user' } },
        ...VIEW_ALL.filter((g) => !g.object_types.includes('branching.branch')),
      ]);
      const res = await mergeBranch(merger.client, s.branch.id);
      expectStatus(res, 404);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
    });

    it('Permission branching.merge_branch: a merge constraint that excludes a visible branch is refused (403), one that includes it merges', async () => {
      const s = await scenario(cast, 'perm-constrained');
      const elsewhere = await actor(svc, 'merges-elsewhere', [
        ...VIEW_ALL,
        { object_types: ['branching.branch'], actions: ['merge', 'change'], constraints: { name: 'another-branch' } },
      ]);
      expectStatus(await mergeBranch(elsewhere.client, s.branch.id), 403);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');

      const here = await actor(svc, 'merges-here', [
        ...VIEW_ALL,
        { object_types: ['branching.branch'], actions: ['merge', 'change'], constraints: { name: 'perm-constrained' } },
      ]);
      const merged = await mergeBranch(here.client, s.branch.id);
      expectStatus(merged, 200);
      assert.equal(merged.body.branch?.status ?? (await branchOf(svc, s.branch.id)).status, 'merged');
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
    });
  });

  describe('completed is terminal', () => {
    const svc = suiteService();
    const cast = forSuite(() => gateCast(svc));
    before(async () => {
      await grantAbandon(svc, cast);
    });

    it('States: a merge completes the request; completed is terminal: no action moves it (409) and reviews are refused', async () => {
      const s = await scenario(cast, 'terminal');
      await ok(mergeBranch(cast.author.client, s.branch.id));
      const done = await detail(cast.author.client, s.cr.id);
      assert.equal(done.status, 'completed');
      for (const action of ['submit', 'return-to-draft', 'abandon', 'reopen'] as const) {
        const res = await act(cast.author.client, s.cr.id, action);
        expectStatus(res, 409, action);
        assert.match(res.body.detail, /completed/, action);
      }
      const third = await actor(svc, 'late-reviewer', [
        ...VIEW_ALL,
        { object_types: ['change_control.review'], actions: ['add', 'change'] },
      ]);
      const late = await review(third.client, s.cr.id, 'approve');
      assert.equal(late.status, 400, JSON.stringify(late.body));
      const edit = (await ok(cast.reviewer.client.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).results[0];
      const editRes = await cast.reviewer.client.patch(`${REVIEWS}${edit.id}/`, {
        decision: 'reject',
        comment: 'too late',
      });
      assert.ok(
        editRes.status === 400 || editRes.status === 409,
        `editing a review of a completed request is refused: ${editRes.status} ${JSON.stringify(editRes.body)}`,
      );
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
      // Merging again is refused: the branch is merged.
      expectStatus(await mergeBranch(cast.author.client, s.branch.id), 409);
    });

    it('States: a reverted branch whose request is completed stays completed and cannot merge again through the gate (409)', async () => {
      const s = await scenario(cast, 'reverted');
      await ok(mergeBranch(cast.author.client, s.branch.id));
      await grant(svc, { users: [cast.author.id] }, { object_types: ['branching.branch'], actions: ['revert'] });
      await ok(cast.author.client.post(`/api/plugins/branching/branches/${s.branch.id}/revert/`, { commit: true }));
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.status, 'completed');
      assert.equal(cr.merge_blocked_reason, 'The change request is completed.');
      await assertRefusedMerge(svc, cast.author.client, { ...s, cr }, /The change request is completed\./);
    });
  });
});

async function grantAbandon(svc: TestService, cast: GateCast): Promise<void> {
  await grant(
    svc,
    { users: [cast.author.id] },
    { object_types: ['change_control.changerequest'], actions: ['abandon', 'reopen'] },
  );
}

async function grantPrefixes(svc: TestService, cast: GateCast): Promise<void> {
  await grant(svc, { users: [cast.author.id] }, { object_types: ['ipam.prefix'], actions: ['view', 'add', 'change'] });
}
