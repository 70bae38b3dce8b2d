import assert from 'node:assert/strict';
import { withTables } from '../../../../server/host/db/database';
import type { ChangeControlTables } from '../../../../server/plugins/change-control/db/tables';
import { startService, suiteService, type TestService } from '../../../support/service';
import {
  act,
  actor,
  AUTHOR,
  BRANCHES,
  checkNamed,
  detail,
  expectStatus,
  ok,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  REVIEWS,
  type Actor,
} from './fixtures';
import { changelogOfRequest, draftRequest, evaluation, merge } from './requests-support';

type State = 'draft' | 'needs-review' | 'approved' | 'rejected' | 'completed' | 'abandoned';
type Action = 'submit' | 'return-to-draft' | 'abandon' | 'reopen';

const LIFECYCLE_PERMS = [{ object_types: ['change_control.changerequest'], actions: ['abandon', 'reopen'] }];

/** Every (action, state) pair the states table does not allow. */
const INVALID: Array<[Action, State]> = [
  ['submit', 'needs-review'],
  ['submit', 'approved'],
  ['submit', 'rejected'],
  ['submit', 'completed'],
  ['submit', 'abandoned'],
  ['return-to-draft', 'draft'],
  ['return-to-draft', 'completed'],
  ['return-to-draft', 'abandoned'],
  ['abandon', 'completed'],
  ['abandon', 'abandoned'],
  ['reopen', 'draft'],
  ['reopen', 'needs-review'],
  ['reopen', 'approved'],
  ['reopen', 'rejected'],
  ['reopen', 'completed'],
];

describe('change requests: the states table', () => {
  let svc: TestService;
  let author: Actor;
  let reviewer: Actor;
  let n = 0;

  /** A fresh request of `author` in the given state (one reviewer must approve; the policy names has-changes). */
  async function inState(state: State): Promise<{ id: number; branchId: number }> {
    const { cr, branchId } = await draftRequest(author, `st-${state}-${++n}`);
    const id = cr.id as number;
    if (state === 'draft') return { id, branchId };
    if (state === 'abandoned') {
      expectStatus(await act(author.client, id, 'abandon'), 200, 'abandon');
      return { id, branchId };
    }
    expectStatus(await act(author.client, id, 'submit'), 200, 'submit');
    if (state === 'needs-review') return { id, branchId };
    if (state === 'rejected') {
      expectStatus(await review(reviewer.client, id, 'reject', 'Please split this change.'), 201, 'reject');
      return { id, branchId };
    }
    expectStatus(await review(reviewer.client, id, 'approve'), 201, 'approve');
    if (state === 'approved') return { id, branchId };
    expectStatus(await merge(svc, branchId), 200, 'merge');
    return { id, branchId };
  }

  /** `action` by someone holding only `actions` on change requests is 403, and a request in `state` stays there. */
  async function refusedWithout(
    state: State,
    action: 'submit' | 'return-to-draft' | 'abandon' | 'reopen',
    actions: string[],
  ): Promise<void> {
    const { id } = await inState(state);
    const holder = await actor(svc, `holder-${++n}`, [{ object_types: ['change_control.changerequest'], actions }]);
    expectStatus(await act(holder.client, id, action), 403);
    assert.equal((await detail(author.client, id)).status, state);
  }

  before(async () => {
    svc = await startService();
    author = await actor(svc, 'alice', [...AUTHOR, ...LIFECYCLE_PERMS]);
    reviewer = await actor(svc, 'bob', REVIEWER);
    await policy(svc, {
      name: 'Everything',
      checks: ['has-changes'],
      rules: [{ name: 'one reviewer', users: [reviewer.id] }],
    });
  });
  after(async () => svc.close());

  it('sets up each state as the table names it', async () => {
    for (const state of ['draft', 'needs-review', 'approved', 'rejected', 'completed', 'abandoned'] as const) {
      const { id } = await inState(state);
      assert.equal((await detail(author.client, id)).status, state);
    }
  });

  describe('row draft → submit', () => {
    it('States table row 1: submit by a holder of change_changerequest leaves draft for the derived state (needs-review while a rule waits)', async () => {
      const { id } = await inState('draft');
      const res = await act(author.client, id, 'submit');
      expectStatus(res, 200);
      assert.equal(res.body.id, id);
      assert.equal(res.body.status, 'needs-review');
      assert.equal((await detail(author.client, id)).status, 'needs-review');
    });

    it('States table row 1: the state after submit is derived — approvals given on the draft make it land on approved', async () => {
      const { id } = await inState('draft');
      expectStatus(await review(reviewer.client, id, 'approve'), 201);
      assert.equal((await detail(author.client, id)).status, 'draft', 'a review against a draft moves nothing');
      const res = await act(author.client, id, 'submit');
      expectStatus(res, 200);
      assert.equal(res.body.status, 'approved');
    });

    it('States table row 1: the state after submit is derived — a rejection on the draft makes it land on rejected', async () => {
      const { id } = await inState('draft');
      expectStatus(await review(reviewer.client, id, 'reject', 'No.'), 201);
      const res = await act(author.client, id, 'submit');
      expectStatus(res, 200);
      assert.equal(res.body.status, 'rejected');
    });

    it('States table row 1 (also) / Note 3: submit matches policies from the branch, notifies outstanding reviewers and runs the checks', async () => {
      const { id } = await inState('draft');
      // A policy written without any refresh: only submit's own matching can attach it.
      const now = svc.clock.now().toISOString();
      const db = withTables<ChangeControlTables>(svc.host.db);
      const late = await db
        .insertInto('cc_policies')
        .values({
          name: 'Late',
          description: '',
          enabled: 1,
          weight: 5000,
          object_types: '["dcim.device"]',
          conditions: null,
          condition_state: 'either',
          checks: '["not-stale"]',
          comments: '',
          created: now,
          last_updated: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      assert.deepEqual((await detail(author.client, id)).policies.map((p: any) => p.name).includes('Late'), false);

      const res = await act(author.client, id, 'submit');
      expectStatus(res, 200);
      assert.deepEqual(
        res.body.policies.map((p: any) => p.name),
        ['Everything', 'Late'],
      );
      assert.deepEqual(res.body.policies.find((p: any) => p.name === 'Late').matched_object_types, ['dcim.device']);
      // Checks ran: the check the late policy names has a result now.
      assert.equal((await checkNamed(author.client, id, 'not-stale')).status, 'success');
      // The outstanding reviewer is notified; the author is not.
      const notes = await ok(reviewer.client.get(`/api/extras/notifications/?object_id=${id}`));
      assert.ok(
        notes.results.some((x: any) => x.event_type === 'change_request_review_requested' && x.object_id === id),
        JSON.stringify(notes.results),
      );
      const mine = await ok(author.client.get(`/api/extras/notifications/?object_id=${id}`));
      assert.equal(mine.results.filter((x: any) => x.event_type === 'change_request_review_requested').length, 0);
      await db.deleteFrom('cc_policies').where('id', '=', late.id).execute();
    });

    it('States table row 1: submit without change_changerequest is 403 and the request stays a draft', async () => {
      await refusedWithout('draft', 'submit', ['view', 'abandon', 'reopen']);
    });
  });

  describe('row needs-review/approved/rejected → return-to-draft', () => {
    for (const from of ['needs-review', 'approved', 'rejected'] as const) {
      it(`States table row 2: return-to-draft from ${from} lands on draft and keeps the reviews; resubmitting picks up where it left off`, async () => {
        const { id } = await inState(from);
        const reviewsBefore = (await ok(author.client.get(`${REVIEWS}?change_request_id=${id}`))).results;
        const res = await act(author.client, id, 'return-to-draft');
        expectStatus(res, 200);
        assert.equal(res.body.status, 'draft');
        const reviewsAfter = (await ok(author.client.get(`${REVIEWS}?change_request_id=${id}`))).results;
        assert.deepEqual(
          reviewsAfter.map((r: any) => [r.id, r.decision, r.stale]),
          reviewsBefore.map((r: any) => [r.id, r.decision, false]),
        );
        const again = await act(author.client, id, 'submit');
        expectStatus(again, 200);
        assert.equal(again.body.status, from);
      });
    }

    it('States table row 2: draft is held by the author — a request pulled back to draft stays there whatever the reviews until submitted', async () => {
      const { id } = await inState('needs-review');
      expectStatus(await act(author.client, id, 'return-to-draft'), 200);
      expectStatus(await review(reviewer.client, id, 'approve'), 201);
      const d = await detail(author.client, id);
      assert.equal(d.status, 'draft');
      assert.equal(d.approved, true, 'the policies are satisfied, but draft is held');
      assert.equal(d.ready_to_merge, false);
      assert.equal((await act(author.client, id, 'submit')).body.status, 'approved');
    });

    it('States table row 2: return-to-draft from approved only ever closes the merge gate (reviews, policies, checks untouched)', async () => {
      const { id, branchId } = await inState('approved');
      const before = await detail(author.client, id);
      assert.equal(before.ready_to_merge, true, before.merge_blocked_reason);
      const evalBefore = await evaluation(author.client, id);
      const checkBefore = await checkNamed(author.client, id, 'has-changes');

      const res = await act(author.client, id, 'return-to-draft');
      expectStatus(res, 200);
      assert.equal(res.body.status, 'draft');
      assert.equal(res.body.ready_to_merge, false);
      assert.match(res.body.merge_blocked_reason, /draft/);
      assert.equal(res.body.approved, true);
      assert.deepEqual(res.body.policies, before.policies);
      const evalAfter = await evaluation(author.client, id);
      assert.deepEqual(evalAfter.policies, evalBefore.policies);
      assert.deepEqual(evalAfter.stale_reviews, []);
      assert.deepEqual(await checkNamed(author.client, id, 'has-changes'), checkBefore);

      const refused = await merge(svc, branchId);
      expectStatus(refused, 409);
      assert.match(refused.body.detail, /draft/);
      assert.equal((await ok(svc.admin.get(`${BRANCHES}${branchId}/`))).status, 'ready');
    });

    it('States table row 2: return-to-draft without change_changerequest is 403 and the state is kept', async () => {
      await refusedWithout('needs-review', 'return-to-draft', ['view', 'abandon', 'reopen']);
    });
  });

  describe('row any open state → abandon', () => {
    for (const from of ['draft', 'needs-review', 'approved', 'rejected'] as const) {
      it(`States table row 3: abandon from ${from} by a holder of abandon_changerequest lands on abandoned`, async () => {
        const { id } = await inState(from);
        const res = await act(author.client, id, 'abandon');
        expectStatus(res, 200);
        assert.equal(res.body.status, 'abandoned');
        assert.equal(res.body.ready_to_merge, false);
        assert.equal((await detail(author.client, id)).status, 'abandoned');
      });
    }

    it('States table row 3: abandon needs abandon_changerequest — change_changerequest alone is 403', async () => {
      await refusedWithout('needs-review', 'abandon', ['view', 'change', 'reopen']);
    });

    it('States table row 3: an abandoned request cannot merge (409 from the merge gate)', async () => {
      const { id, branchId } = await inState('approved');
      expectStatus(await act(author.client, id, 'abandon'), 200);
      const refused = await merge(svc, branchId);
      expectStatus(refused, 409);
      assert.match(refused.body.detail, /abandoned/);
    });
  });

  describe('row abandoned → reopen', () => {
    it('States table row 4: reopen by a holder of reopen_changerequest lands on draft', async () => {
      const { id } = await inState('abandoned');
      const res = await act(author.client, id, 'reopen');
      expectStatus(res, 200);
      assert.equal(res.body.status, 'draft');
    });

    it('States table row 4: reopening a request abandoned while approved does not return it to review: it lands on draft and must be resubmitted', async () => {
      const { id } = await inState('approved');
      expectStatus(await act(author.client, id, 'abandon'), 200);
      const res = await act(author.client, id, 'reopen');
      expectStatus(res, 200);
      assert.equal(res.body.status, 'draft');
      assert.equal(res.body.ready_to_merge, false);
      assert.equal((await act(author.client, id, 'submit')).body.status, 'approved');
    });

    it('States table row 4: reopen needs reopen_changerequest — change and abandon are not enough (403)', async () => {
      await refusedWithout('abandoned', 'reopen', ['view', 'change', 'abandon']);
    });
  });

  describe('completed', () => {
    it('States: a merge completes the request, and completed is terminal (a revert leaves it completed; every action is 409)', async () => {
      const { id, branchId } = await inState('approved');
      expectStatus(await merge(svc, branchId), 200);
      assert.equal((await detail(author.client, id)).status, 'completed');
      expectStatus(await svc.admin.post(`${BRANCHES}${branchId}/revert/`, { commit: true }), 200, 'revert');
      assert.equal((await detail(author.client, id)).status, 'completed');
      for (const action of ['submit', 'return-to-draft', 'abandon', 'reopen'] as const) {
        const res = await act(svc.admin, id, action);
        expectStatus(res, 409, action);
        assert.match(res.body.detail, /completed/);
      }
      assert.equal((await detail(author.client, id)).status, 'completed');
    });
  });

  describe('a transition that does not apply is 409 with the reason in detail', () => {
    const requests = new Map<State, number>();
    before(async () => {
      for (const state of ['draft', 'needs-review', 'approved', 'rejected', 'completed', 'abandoned'] as const)
        requests.set(state, (await inState(state)).id);
    });

    for (const [action, state] of INVALID) {
      it(`States: ${action} on a ${state} request is 409, detail names the state, nothing moves`, async () => {
        const id = requests.get(state)!;
        const logBefore = (await changelogOfRequest(svc, id)).length;
        const res = await act(svc.admin, id, action);
        expectStatus(res, 409);
        assert.equal(typeof res.body.detail, 'string');
        const words: Record<State, RegExp> = {
          draft: /draft/,
          'needs-review': /under review/,
          approved: /approved/,
          rejected: /rejected/,
          completed: /completed/,
          abandoned: /abandoned/,
        };
        assert.match(res.body.detail, words[state]);
        assert.match(res.body.detail, new RegExp(action.replace(/-/g, '[ -]')));
        assert.equal((await detail(svc.admin, id)).status, state);
        assert.equal((await changelogOfRequest(svc, id)).length, logBefore, 'a refused action writes nothing');
      });
    }

    it('States: submitting a request whose branch is gone is 409 with the reason in detail', async () => {
      const { id, branchId } = await inState('draft');
      expectStatus(await svc.admin.delete(`${BRANCHES}${branchId}/`), 204);
      const res = await act(author.client, id, 'submit');
      expectStatus(res, 409);
      assert.match(res.body.detail, /branch/);
      assert.equal((await detail(author.client, id)).status, 'draft');
    });
  });
});

describe('change requests: status is never writable (General rule 4)', () => {
  const svc = suiteService();

  it('General rule 4: a PATCH naming status is accepted, the status is ignored; only the four actions move it', async () => {
    const author = await actor(svc, 'alice', AUTHOR);
    const { id } = (await draftRequest(author, 'rule4')).cr;
    for (const status of ['approved', 'completed', 'needs-review', 'abandoned']) {
      const res = await author.client.patch(`${REQUESTS}${id}/`, { status, title: `try ${status}` });
      expectStatus(res, 200, status);
      assert.equal(res.body.status, 'draft');
      assert.equal(res.body.title, `try ${status}`);
    }
    const put = await author.client.put(`${REQUESTS}${id}/`, { title: 'put', status: 'approved' });
    expectStatus(put, 200);
    assert.equal(put.body.status, 'draft');
    assert.equal((await detail(author.client, id)).status, 'draft');
    // Nor on create: a new request is a draft whatever the body says.
    const other = await draftRequest(author, 'rule4-create', { status: 'approved' });
    assert.equal(other.cr.status, 'draft');
    // An admin cannot write it either.
    assert.equal((await svc.admin.patch(`${REQUESTS}${id}/`, { status: 'completed' })).body.status, 'draft');
    // The changelog never shows a status moved by these writes.
    const log = await changelogOfRequest(svc, id);
    assert.ok(
      log.length > 1 &&
        log.every((c: any) => c.prechange_data === null || c.prechange_data.status === c.postchange_data.status),
    );
  });

  it('General rule 4: the status follows policy evaluation once submitted (an approval moves it, a withdrawn approval moves it back)', async () => {
    const author = await actor(svc, 'carol', AUTHOR);
    const reviewer = await actor(svc, 'dave', REVIEWER);
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      rules: [{ name: 'dave', users: [reviewer.id] }],
    });
    const { id } = (await draftRequest(author, 'rule4-derived')).cr;
    assert.equal((await ok(act(author.client, id, 'submit'))).status, 'needs-review');
    const r = await review(reviewer.client, id, 'approve');
    expectStatus(r, 201);
    assert.equal((await detail(author.client, id)).status, 'approved');
    await ok(reviewer.client.patch(`${REVIEWS}${r.body.id}/`, { decision: 'comment' }));
    assert.equal((await detail(author.client, id)).status, 'needs-review');
    await ok(reviewer.client.patch(`${REVIEWS}${r.body.id}/`, { decision: 'reject', comment: 'on second thought' }));
    assert.equal((await detail(author.client, id)).status, 'rejected');
  });
});
