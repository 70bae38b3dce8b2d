import assert from 'node:assert/strict';
import { parseConfig } from '../../../../server/host/core/config';
import { computations } from '../../../../server/plugins/change-control/computations';
import { createCtx } from '../../../../server/host/core/context';
import { keptChangeRequestRow } from '../../../../server/plugins/change-control/change-requests/repository';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestService } from '../../../support/service';
import { quietly, settled, statementsOf as quietStatementsOf } from '../../../support/quiet';
import {
  BRANCHES,
  CC,
  changesOf,
  CHECKS,
  COMMENTS,
  created,
  detail,
  DEVICES,
  expectStatus,
  grant,
  group,
  ok,
  openRequest,
  POLICIES,
  REQUESTS,
  REVIEWS,
  RULES,
} from './fixtures';
import { approve, checksByName, setup, startWithChecks, type Setup } from './checks-support';

/**
 * The merge gate and the approval evaluation are the costly questions: a write computes them
 * once, in its refresh, and its answer and its lifecycle events reuse that; a read computes
 * them at most once; a page of the list computes none (it shows what the refresh cached).
 */
describe('change control: the gate and the evaluation are computed once per request', () => {
  let svc: TestService;
  before(async () => {
    svc = await startWithChecks({
      config: { change_control: { required_external_checks: [['ci/build', 'CI build']], enable_auto_merge: true } },
    });
  });
  after(async () => svc.close());

  /** How many gates and evaluations one request computed. */
  async function counted(request: () => Promise<unknown>): Promise<{ gate: number; evaluation: number }> {
    await settled(svc);
    const before = { ...computations(svc.host) };
    await quietly(svc, request);
    const after = computations(svc.host);
    return { gate: after.gate - before.gate, evaluation: after.evaluation - before.evaluation };
  }

  /** The statements the service sent for `work`. */
  const statementsOf = (work: () => Promise<unknown>) => quietStatementsOf(svc, work);

  const ONCE = { gate: 1, evaluation: 1 };
  const NONE = { gate: 0, evaluation: 0 };

  async function submitted(request: Record<string, unknown> = {}): Promise<Setup> {
    const s = await setup(svc, { policy: {}, request });
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    return s;
  }

  it('a submit computes them once, though it fires two lifecycle events and answers with the request', async () => {
    const s = await setup(svc, { policy: {} });
    assert.deepEqual(await counted(() => ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}))), ONCE);
  });

  it('a review computes them once: a comment, and an approval that moves the status (review_submitted and change_request_approved)', async () => {
    const s = await submitted();
    assert.deepEqual(
      await counted(() =>
        created(
          s.reviewer.client.post(REVIEWS, { change_request: s.cr.id, decision: 'comment', comment: 'looks fine' }),
        ),
      ),
      ONCE,
    );
    const t = await submitted();
    assert.deepEqual(await counted(() => approve(t.reviewer, t.cr.id)), ONCE);
    assert.equal((await detail(t.author.client, t.cr.id)).status, 'approved');
  });

  it('a check report computes none when only check results moved, and once when it clears the gate of an automatic merge', async () => {
    const s = await submitted();
    await approve(s.reviewer, s.cr.id);
    const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
    assert.deepEqual(
      await counted(() => ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }))),
      NONE,
    );

    const a = await submitted({ auto_merge: true });
    await approve(a.reviewer, a.cr.id);
    const ci2 = (await checksByName(svc.admin, a.cr.id))['ci/build'];
    // The report's refresh (once), then the merge it queues: the gate asked before merging, and
    // the refresh of the completed request after it.
    assert.deepEqual(await counted(() => ok(a.pipeline.client.patch(`${CHECKS}${ci2.id}/`, { status: 'success' }))), {
      gate: 3,
      evaluation: 3,
    });
    assert.equal((await detail(a.author.client, a.cr.id)).status, 'completed');
  });

  it("a detail read after a write computes none (it shows what the write's refresh computed) and none after that; the evaluation read once", async () => {
    const s = await submitted();
    assert.deepEqual(await counted(() => detail(s.author.client, s.cr.id)), NONE);
    assert.deepEqual(await counted(() => detail(s.author.client, s.cr.id)), NONE);
    assert.deepEqual(await counted(() => ok(s.author.client.get(`${REQUESTS}${s.cr.id}/evaluation/`))), ONCE);
  });

  it("an edit of the request's fields after a read computes them once (its refresh): the next read shows what the refresh computed, which is what a read computes afresh", async () => {
    const s = await submitted();
    await detail(s.author.client, s.cr.id);
    assert.deepEqual(
      await counted(() => ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { description: 'edited' }))),
      ONCE,
    );
    let shown: any;
    assert.deepEqual(await counted(async () => (shown = await detail(s.author.client, s.cr.id))), NONE);
    assert.equal(shown.description, 'edited');
    // What the write kept for the readers is what a reader computes afresh.
    svc.host.readMemo.clear();
    assert.deepEqual(await counted(async () => assert.deepEqual(await detail(s.author.client, s.cr.id), shown)), ONCE);
  });

  it('edits and reads of a request show each edit at once, and the answers left behind by edits never take the memo past its bound', async () => {
    const s = await submitted();
    const cycle = async (i: number) => {
      // Each edit at its own time: the request's last update moves.
      svc.clock.set(new Date(Date.parse('2026-11-01T10:00:00Z') + i * 1000).toISOString());
      await ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { description: `edit ${i}` }));
      assert.equal((await detail(s.author.client, s.cr.id)).description, `edit ${i}`);
    };
    const bound = parseConfig({}).host.read_cache_entries;
    for (let i = 0; i < 10; i++) {
      await cycle(i);
      assert.ok(svc.host.readMemo.size <= bound);
    }
    svc.clock.set('2026-11-01T09:00:00Z');
  });

  it('a policy write evaluates only the requests it can move: those whose branches touch its types, and those it governs', async () => {
    const s = await setup(svc, {});
    let id = 0;
    // No branch touches sites: no request can gain or lose the policy.
    assert.deepEqual(
      await counted(
        async () =>
          (id = (await created(svc.admin.post(POLICIES, { name: 'sites-only', object_types: ['dcim.site'] }))).id),
      ),
      NONE,
    );
    // Now it names devices, which every request of this suite touches: they are re-matched, and this one gains it.
    const moved = await counted(() =>
      ok(
        svc.admin.patch(`${POLICIES}${id}/`, {
          object_types: ['dcim.device'],
          conditions: { attr: 'name', op: 'eq', value: s.device.name },
        }),
      ),
    );
    assert.ok(moved.evaluation >= 1, JSON.stringify(moved));
    assert.deepEqual(
      (await detail(s.author.client, s.cr!.id)).policies.map((p: { name: string }) => p.name),
      ['sites-only'],
    );
    // Gone: only the request it governed moves.
    assert.deepEqual(await counted(() => svc.admin.delete(`${POLICIES}${id}/?force=true`)), ONCE);
    assert.deepEqual((await detail(s.author.client, s.cr!.id)).policies, []);
  });

  it('a page of the list computes none: it shows what each request cached at its last refresh', async () => {
    await submitted();
    await submitted();
    const page = await counted(async () =>
      assert.ok((await ok(svc.admin.get(`${REQUESTS}?limit=50`))).results.length >= 2),
    );
    assert.deepEqual(page, NONE);
  });

  /** How many list pages and branch facts `request` computed. */
  async function kept(request: () => Promise<unknown>): Promise<{ pages: number; branchFacts: number }> {
    await settled(svc);
    const before = { ...computations(svc.host) };
    await quietly(svc, request);
    const after = computations(svc.host);
    return { pages: after.pages - before.pages, branchFacts: after.branchFacts - before.branchFacts };
  }

  it('a page of the list is kept across check reports, reviews and comments, and computed afresh after a write of a request', async () => {
    const s = await submitted();
    const page = () => ok(svc.admin.get(`${REQUESTS}?limit=50`));
    await page();
    assert.equal((await kept(page)).pages, 0);
    const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
    await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure' }));
    await created(
      s.reviewer.client.post(REVIEWS, { change_request: s.cr.id, decision: 'comment', comment: 'a question' }),
    );
    assert.equal((await kept(page)).pages, 0);
    await ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { title: 'Renamed' }));
    const afresh = await kept(async () =>
      assert.ok((await page()).results.some((r: { title: string }) => r.title === 'Renamed')),
    );
    assert.equal(afresh.pages, 1);
    // A filter reading another table names it: a check report moves a page filtered on check status.
    const failing = () => ok(svc.admin.get(`${REQUESTS}?check_status=failure&limit=50`));
    assert.ok((await failing()).results.some((r: { id: number }) => r.id === s.cr.id));
    await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
    assert.ok(!(await failing()).results.some((r: { id: number }) => r.id === s.cr.id));
  });

  it('a kept page of the list follows the clock through a freeze: once a freeze begins it shows the request frozen and not ready, as the detail does, and is kept again after', async () => {
    const s = await submitted();
    const page = async () =>
      (await ok(svc.admin.get(`${REQUESTS}?limit=50`))).results.find((r: { id: number }) => r.id === s.cr.id);
    const now = svc.clock.now().getTime();
    const freeze = await created(
      svc.admin.post(`${CC}freezes/`, {
        name: 'page-clock freeze',
        start: new Date(now + 600_000).toISOString(),
        end: new Date(now + 3_600_000).toISOString(),
      }),
    );
    try {
      const ahead = await page();
      assert.deepEqual(
        ahead.freezes.map((f: { name: string; active: boolean }) => [f.name, f.active]),
        [['page-clock freeze', false]],
      );
      assert.equal((await kept(page)).pages, 0, 'kept while nothing moves');
      svc.clock.advance(600_000);
      const begun = await page();
      const live = await detail(svc.admin, s.cr.id);
      assert.deepEqual(
        begun.freezes.map((f: { name: string; active: boolean }) => [f.name, f.active]),
        [['page-clock freeze', true]],
      );
      assert.equal(begun.ready_to_merge, live.ready_to_merge);
      assert.match(live.merge_blocked_reason, /page-clock freeze/);
      assert.match(begun.merge_blocked_reason, /page-clock freeze/);
      assert.equal((await kept(page)).pages, 0, 'kept again until the freeze changes next');
    } finally {
      expectStatus(await svc.admin.delete(`${CC}freezes/${freeze.id}/`), 204);
      svc.clock.set('2026-11-01T09:00:00Z');
    }
  });

  it("a detail read after a check report or a review computes the gate, not the branch's facts; a write in the branch computes them afresh (its refresh), and the read after it shows them", async () => {
    const s = await submitted();
    await detail(s.author.client, s.cr.id);
    const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
    await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure' }));
    await created(
      s.reviewer.client.post(REVIEWS, { change_request: s.cr.id, decision: 'comment', comment: 'a question' }),
    );
    assert.deepEqual(await kept(() => detail(s.author.client, s.cr.id)), { pages: 0, branchFacts: 0 });
    const before = (await detail(s.author.client, s.cr.id)).digest;
    let after = '';
    assert.deepEqual(
      await kept(async () => {
        await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { name: 'renamed-router' }));
        after = (await detail(s.author.client, s.cr.id)).digest;
      }),
      // The write's refresh computes them, and hands them to the read.
      { pages: 0, branchFacts: 1 },
    );
    assert.notEqual(after, before);
  });

  describe("the gate's facts kept per request", () => {
    /** Gates computed until the end of the last `read`. */
    let computedBefore = 0;

    /** A detail read of `s`'s request: what it shows and how many gates it computed. */
    async function read(s: Setup): Promise<{ gate: number; body: any }> {
      let body: any;
      const c = await counted(async () => (body = await detail(s.author.client, s.cr!.id)));
      computedBefore = computations(svc.host).gate;
      return { gate: c.gate, body };
    }

    /**
     * The next detail read shows a gate computed afresh since the last read: by the write's
     * refresh (kept for the readers) or by the read itself, once; what it shows.
     */
    async function afresh(s: Setup): Promise<any> {
      const since = computedBefore;
      const r = await read(s);
      assert.ok(r.gate <= 1 && computations(svc.host).gate > since, 'the gate computed afresh');
      return r.body;
    }

    it('shows at once each write that can move its gate: its check, a review, a comment thread and its resolution, a rule, a policy, a freeze, its branch', async () => {
      const s = await setup(svc, { policy: { checks: ['threads-resolved'] } });
      await ok(s.author.client.post(`${REQUESTS}${s.cr!.id}/submit/`, {}));
      await read(s);

      const ci = (await checksByName(svc.admin, s.cr!.id))['ci/build'];
      await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure', summary: 'red build' }));
      assert.match((await afresh(s)).merge_blocked_reason, /red build/);
      await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
      assert.doesNotMatch((await afresh(s)).merge_blocked_reason, /CI build/);

      await approve(s.reviewer, s.cr!.id);
      assert.equal((await afresh(s)).status, 'approved');

      const change = (await changesOf(svc, s.branchId))[0];
      const thread = await created(
        s.reviewer.client.post(COMMENTS, { change_request: s.cr!.id, change_diff: change.id, text: 'Why planned?' }),
      );
      assert.match((await afresh(s)).merge_blocked_reason, /comment thread/i);
      await ok(s.reviewer.client.patch(`${COMMENTS}${thread.id}/`, { resolved: true }));
      const resolved = await afresh(s);
      assert.doesNotMatch(resolved.merge_blocked_reason, /comment thread/i);
      assert.equal(resolved.ready_to_merge, true, resolved.merge_blocked_reason);

      const rule = (await ok(svc.admin.get(`${RULES}?limit=1000`))).results.find((r: any) =>
        (r.users as any[]).some((u) => (u?.id ?? u) === s.reviewer.id),
      );
      await ok(svc.admin.patch(`${RULES}${rule.id}/`, { min_reviews: 2 }));
      assert.notEqual((await afresh(s)).status, 'approved');
      await ok(svc.admin.patch(`${RULES}${rule.id}/`, { min_reviews: 1 }));
      assert.equal((await afresh(s)).status, 'approved');
      await ok(svc.admin.patch(`${POLICIES}${rule.policy?.id ?? rule.policy}/`, { enabled: false }));
      assert.doesNotMatch((await afresh(s)).merge_blocked_reason ?? '', /comment thread/i);
      assert.ok(!(await read(s)).body.checks?.some?.((c: any) => c.name === 'threads-resolved'));
      await ok(svc.admin.patch(`${POLICIES}${rule.policy?.id ?? rule.policy}/`, { enabled: true }));
      assert.equal((await afresh(s)).ready_to_merge, true);

      const now = svc.clock.now().getTime();
      const freeze = await created(
        svc.admin.post(`${CC}freezes/`, {
          name: 'gate-kept freeze',
          start: new Date(now - 3_600_000).toISOString(),
          end: new Date(now + 3_600_000).toISOString(),
        }),
      );
      try {
        const frozen = await afresh(s);
        assert.equal(frozen.ready_to_merge, false);
        assert.ok(
          frozen.freezes.some((f: any) => f.id === freeze.id || f.name === 'gate-kept freeze'),
          JSON.stringify(frozen.freezes),
        );
      } finally {
        expectStatus(await svc.admin.delete(`${CC}freezes/${freeze.id}/`), 204);
      }
      assert.equal((await afresh(s)).ready_to_merge, true);

      const digest = (await read(s)).body.digest;
      await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { name: `${s.device.name}-renamed` }));
      const edited = await afresh(s);
      assert.notEqual(edited.digest, digest);
      assert.notEqual(edited.status, 'approved'); // the approval was given on the branch before the edit
    });

    it('a comment, a check result or a review of the request computes its gate again, once', async () => {
      const s = await setup(svc, { policy: { checks: ['threads-resolved'] } });
      await ok(s.author.client.post(`${REQUESTS}${s.cr!.id}/submit/`, {}));
      const reading = () => counted(() => detail(s.author.client, s.cr!.id));
      await reading();
      const change = (await changesOf(svc, s.branchId))[0];
      await created(
        s.reviewer.client.post(COMMENTS, { change_request: s.cr!.id, change_diff: change.id, text: 'Why planned?' }),
      );
      assert.equal((await reading()).gate, 1);
      assert.deepEqual(await reading(), NONE);
      const ci = (await checksByName(svc.admin, s.cr!.id))['ci/build'];
      await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure' }));
      assert.equal((await reading()).gate, 1);
      await created(
        s.reviewer.client.post(REVIEWS, { change_request: s.cr!.id, decision: 'comment', comment: 'a question' }),
      );
      assert.deepEqual(await reading(), ONCE);
      assert.deepEqual(await reading(), NONE);
    });

    it('a request deleted (its checks and reviews go by cascade) and opened again on its branch shows the new request, whatever its id', async () => {
      const s = await submitted();
      await approve(s.reviewer, s.cr!.id);
      assert.equal((await read(s)).body.status, 'approved');
      // Deleted by its one reviewer (someone else's review is a record nobody else removes).
      await grant(
        svc,
        { users: [s.reviewer.id] },
        { object_types: ['change_control.changerequest'], actions: ['delete'] },
      );
      expectStatus(await s.reviewer.client.delete(`${REQUESTS}${s.cr!.id}/`), 204);
      const again = await openRequest(s.author.client, s.branchId);
      const shown = await detail(s.author.client, again.id);
      assert.equal(shown.status, 'draft');
      assert.equal(shown.approved, false);
    });

    it("reads the request's row and its queue position once until a request is written; shows at once an edit, its requester's and its branch's delete", async () => {
      const s = await submitted();
      const t = await submitted();
      const rowReads = (seen: string[]) => seen.filter((q) => /from "cc_change_requests" where "id" = /.test(q)).length;
      const queueReads = (seen: string[]) => seen.filter((q) => /from "cc_merge_jobs"/.test(q)).length;
      await read(s);
      const again = await statementsOf(() => detail(s.author.client, s.cr!.id));
      assert.deepEqual([rowReads(again), queueReads(again)], [0, 0], again.join('\n'));
      // This request's edit is shown at once.
      await ok(s.author.client.patch(`${REQUESTS}${s.cr!.id}/`, { title: 'Renamed here' }));
      assert.equal((await detail(s.author.client, s.cr!.id)).title, 'Renamed here');
      // References cleared by a delete's cascade (no statement of the requests table says them).
      const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
      const kept = (await keptChangeRequestRow(ctx, t.cr!.id))!;
      assert.equal(kept.requester_id, t.author.id);
      expectStatus(await svc.admin.delete(`/api/users/users/${t.author.id}/`), 204);
      assert.equal((await keptChangeRequestRow(ctx, t.cr!.id))!.requester_id, null);
      assert.equal((await detail(svc.admin, t.cr!.id)).requester, null);
      assert.equal((await keptChangeRequestRow(ctx, s.cr!.id))!.branch_id, s.branchId);
      expectStatus(await svc.admin.delete(`${BRANCHES}${s.branchId}/`), 204);
      assert.equal((await keptChangeRequestRow(ctx, s.cr!.id))!.branch_id, null);
      assert.equal((await detail(svc.admin, s.cr!.id)).branch, null);
    });

    it("a comment runs the built-in checks without reading its branch's conflicts again; a write in the branch reads them afresh", async () => {
      const s = await setup(svc, { policy: { checks: ['no-conflicts', 'threads-resolved'] } });
      await ok(s.author.client.post(`${REQUESTS}${s.cr!.id}/submit/`, {}));
      const change = (await changesOf(svc, s.branchId))[0];
      const comment = async (text: string): Promise<number> => {
        const seen = await statementsOf(() =>
          created(s.reviewer.client.post(COMMENTS, { change_request: s.cr!.id, change_diff: change.id, text })),
        );
        return seen.filter((q) => /from "branch_changes" where .*"conflicts" is not null/.test(q)).length;
      };
      await comment('first');
      assert.equal(await comment('second'), 0);
      await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { name: `${s.device.name}-renamed` }));
      assert.ok((await comment('third')) > 0);
    });

    it("a new thread counts the request's threads without stepping over them again; a resolve, a reopen and a delete count afresh", async () => {
      const other = await setup(svc, { policy: { checks: ['threads-resolved'] } });
      const otherChange = (await changesOf(svc, other.branchId))[0];
      const s = await setup(svc, { policy: { checks: ['threads-resolved'] } });
      await ok(s.author.client.post(`${REQUESTS}${s.cr!.id}/submit/`, {}));
      const change = (await changesOf(svc, s.branchId))[0];
      const counts = async (work: () => Promise<unknown>): Promise<number> =>
        (await statementsOf(work)).filter((q) => /^select count\(\*\) as "total".* from "cc_change_comments"/.test(q))
          .length;
      const summary = async () => (await checksByName(svc.admin, s.cr!.id))['threads-resolved'].summary as string;
      const comment = (text: string) =>
        created(s.reviewer.client.post(COMMENTS, { change_request: s.cr!.id, change_diff: change.id, text }));
      // The write knows the count after its insert (`threadOpened`) and hands it to the readers.
      const newThreadCounts = 0;
      const first = await comment('first');
      assert.equal(await summary(), '1 comment thread is still open.');
      let second: any;
      assert.equal(await counts(async () => (second = await comment('second'))), newThreadCounts);
      assert.equal(await summary(), '2 comment threads are still open.');
      await created(
        other.reviewer.client.post(COMMENTS, {
          change_request: other.cr!.id,
          change_diff: otherChange.id,
          text: 'elsewhere',
        }),
      );
      // Another request's thread moves the comments' version: counted again.
      assert.equal(await counts(() => comment('third')), 1);
      assert.equal(await summary(), '3 comment threads are still open.');
      assert.ok((await counts(() => ok(svc.admin.patch(`${COMMENTS}${first.id}/`, { resolved: true })))) > 0);
      assert.equal(await summary(), '2 comment threads are still open.');
      assert.equal(await counts(() => comment('fourth')), 1);
      assert.equal(await counts(() => comment('fifth')), newThreadCounts);
      assert.equal(await summary(), '4 comment threads are still open.');
      expectStatus(await svc.admin.delete(`${COMMENTS}${first.id}/`), 204);
      assert.equal(await summary(), '4 comment threads are still open.');
      await ok(svc.admin.patch(`${COMMENTS}${second.id}/`, { resolved: true }));
      assert.equal(await summary(), '3 comment threads are still open.');
      expectStatus(await svc.admin.delete(`${COMMENTS}${second.id}/`), 204);
      assert.equal(await summary(), '3 comment threads are still open.');
      assert.equal(await counts(() => comment('sixth')), 1);
      assert.equal(await summary(), '4 comment threads are still open.');
    });

    it('shows at once a change of the members of a group a rule names', async () => {
      const s = await submitted();
      const approvers = await group(svc, `gate-approvers-${s.cr!.id}`, [s.reviewer.id]);
      const rule = (await ok(svc.admin.get(`${RULES}?limit=1000`))).results.find((r: any) =>
        (r.users as any[]).some((u) => (u?.id ?? u) === s.reviewer.id),
      );
      await ok(svc.admin.patch(`${RULES}${rule.id}/`, { users: [], groups: [approvers] }));
      await approve(s.reviewer, s.cr!.id);
      assert.equal((await afresh(s)).status, 'approved');
      assert.equal((await read(s)).gate, 0);
      await ok(svc.admin.patch(`/api/users/users/${s.reviewer.id}/`, { groups: [] }));
      assert.notEqual((await afresh(s)).status, 'approved');
    });
  });
});

describe("change control: the gate's facts and a second instance on the same database", () => {
  let dir = '';
  let a: TestService;
  let b: TestService;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cc-gate-instances-'));
    const db = join(dir, 'shared.sqlite');
    const config = {
      change_control: {
        required_external_checks: [['ci/build', 'CI build']] as Array<[string, string]>,
        enable_auto_merge: false,
      },
    };
    a = await startWithChecks({ config, db });
    b = await startWithChecks({ config, db });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a detail read on one instance shows at once another instance's report of the request's check, and keeps its gate while nothing is written", async () => {
    const s = await setup(a, { policy: {} });
    await ok(s.author.client.post(`${REQUESTS}${s.cr!.id}/submit/`, {}));
    const onB = () => detail(b.admin, s.cr!.id);
    const gates = async (f: () => Promise<unknown>) => {
      await Promise.all([settled(a), settled(b)]);
      const before = computations(b.host).gate;
      await quietly(b, f);
      return computations(b.host).gate - before;
    };
    await onB();
    assert.equal(await gates(onB), 0);
    const ci = (await checksByName(a.admin, s.cr!.id))['ci/build'];
    await ok(
      s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure', summary: 'red on the other instance' }),
    );
    let shown: any;
    assert.equal(await gates(async () => (shown = await onB())), 1);
    assert.match(shown.merge_blocked_reason, /red on the other instance/);
  });

  it('a merge decides on the gate computed inside its own transaction, never on the one a reader was shown', async () => {
    const s = await setup(a, { policy: {} });
    await ok(s.author.client.post(`${REQUESTS}${s.cr!.id}/submit/`, {}));
    await approve(s.reviewer, s.cr!.id);
    const ci = (await checksByName(a.admin, s.cr!.id))['ci/build'];
    await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
    const authorOnB = b.as(s.author.key);
    assert.equal((await detail(authorOnB, s.cr!.id)).ready_to_merge, true);
    await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure', summary: 'broken after the read' }));
    const refused = await authorOnB.post(`/api/plugins/branching/branches/${s.branchId}/merge/`, { commit: true });
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /broken after the read/);
  });
});
