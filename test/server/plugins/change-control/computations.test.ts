import assert from 'node:assert/strict';
import { computations } from '../../../../server/plugins/change-control/computations';
import type { TestService } from '../../../support/service';
import { CHECKS, created, detail, DEVICES, ok, POLICIES, REQUESTS, REVIEWS } from './fixtures';
import { approve, checksByName, setup, startWithChecks, type Setup } from './checks-support';

/**
 * The merge gate and the approval evaluation are the costly questions: a write computes them
 * once, in its refresh, and its answer and its lifecycle events reuse that; a read computes
 * them at most once; a page of the list computes none (it shows what the refresh cached).
 */
describe('change control: the gate and the evaluation are computed once per request', () => {
  let svc: TestService;
  before(async () => {
    svc = await startWithChecks({ config: { change_control: { required_external_checks: [['ci/build', 'CI build']], enable_auto_merge: true } } });
  });
  after(async () => svc.close());

  /** How many gates and evaluations one request computed. */
  async function counted(request: () => Promise<unknown>): Promise<{ gate: number; evaluation: number }> {
    const before = { ...computations(svc.host) };
    await request();
    const after = computations(svc.host);
    return { gate: after.gate - before.gate, evaluation: after.evaluation - before.evaluation };
  }

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
    assert.deepEqual(await counted(() => created(s.reviewer.client.post(REVIEWS, { change_request: s.cr.id, decision: 'comment', comment: 'looks fine' }))), ONCE);
    const t = await submitted();
    assert.deepEqual(await counted(() => approve(t.reviewer, t.cr.id)), ONCE);
    assert.equal((await detail(t.author.client, t.cr.id)).status, 'approved');
  });

  it('a check report computes none when only check results moved, and once when it clears the gate of an automatic merge', async () => {
    const s = await submitted();
    await approve(s.reviewer, s.cr.id);
    const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
    assert.deepEqual(await counted(() => ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }))), NONE);

    const a = await submitted({ auto_merge: true });
    await approve(a.reviewer, a.cr.id);
    const ci2 = (await checksByName(svc.admin, a.cr.id))['ci/build'];
    // The report's refresh (once), then the merge it queues: the gate asked before merging, and
    // the refresh of the completed request after it.
    assert.deepEqual(await counted(() => ok(a.pipeline.client.patch(`${CHECKS}${ci2.id}/`, { status: 'success' }))), { gate: 3, evaluation: 3 });
    assert.equal((await detail(a.author.client, a.cr.id)).status, 'completed');
  });

  it('a detail read computes them once after a write and at most once after that; the evaluation read once', async () => {
    const s = await submitted();
    assert.deepEqual(await counted(() => detail(s.author.client, s.cr.id)), ONCE);
    const again = await counted(() => detail(s.author.client, s.cr.id));
    assert.ok(again.gate <= 1 && again.evaluation <= 1, JSON.stringify(again));
    assert.deepEqual(await counted(() => ok(s.author.client.get(`${REQUESTS}${s.cr.id}/evaluation/`))), ONCE);
  });

  it("an edit of the request's fields after a read computes them once (its refresh): the object before it is what the read computed, its answer what the refresh did", async () => {
    const s = await submitted();
    await detail(s.author.client, s.cr.id);
    assert.deepEqual(await counted(() => ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { description: 'edited' }))), ONCE);
    assert.deepEqual(await counted(() => detail(s.author.client, s.cr.id)), ONCE);
    assert.equal((await detail(s.author.client, s.cr.id)).description, 'edited');
  });

  it('edits and reads of a request keep as many answers in the read memo after the tenth edit as after the first: none stays behind an edit', async () => {
    const s = await submitted();
    const cycle = async (i: number) => {
      // Each edit at its own time: the request's last update moves.
      svc.clock.set(new Date(Date.parse('2026-11-01T10:00:00Z') + i * 1000).toISOString());
      await ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { description: `edit ${i}` }));
      await detail(s.author.client, s.cr.id);
    };
    await cycle(0);
    const kept = svc.host.readMemo.size;
    for (let i = 1; i < 10; i++) await cycle(i);
    assert.equal(svc.host.readMemo.size, kept);
    svc.clock.set('2026-11-01T09:00:00Z');
  });

  it('a policy write evaluates only the requests it can move: those whose branches touch its types, and those it governs', async () => {
    const s = await setup(svc, {});
    let id = 0;
    // No branch touches sites: no request can gain or lose the policy.
    assert.deepEqual(await counted(async () => (id = (await created(svc.admin.post(POLICIES, { name: 'sites-only', object_types: ['dcim.site'] }))).id)), NONE);
    // Now it names devices, which every request of this suite touches: they are re-matched, and this one gains it.
    const moved = await counted(() => ok(svc.admin.patch(`${POLICIES}${id}/`, { object_types: ['dcim.device'], conditions: { attr: 'name', op: 'eq', value: s.device.name } })));
    assert.ok(moved.evaluation >= 1, JSON.stringify(moved));
    assert.deepEqual((await detail(s.author.client, s.cr!.id)).policies.map((p: { name: string }) => p.name), ['sites-only']);
    // Gone: only the request it governed moves.
    assert.deepEqual(await counted(() => svc.admin.delete(`${POLICIES}${id}/?force=true`)), ONCE);
    assert.deepEqual((await detail(s.author.client, s.cr!.id)).policies, []);
  });

  it('a page of the list computes none: it shows what each request cached at its last refresh', async () => {
    await submitted();
    await submitted();
    const page = await counted(async () => assert.ok((await ok(svc.admin.get(`${REQUESTS}?limit=50`))).results.length >= 2));
    assert.deepEqual(page, NONE);
  });

  /** How many list pages and branch facts `request` computed. */
  async function kept(request: () => Promise<unknown>): Promise<{ pages: number; branchFacts: number }> {
    const before = { ...computations(svc.host) };
    await request();
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
    await created(s.reviewer.client.post(REVIEWS, { change_request: s.cr.id, decision: 'comment', comment: 'a question' }));
    assert.equal((await kept(page)).pages, 0);
    await ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { title: 'Renamed' }));
    const afresh = await kept(async () => assert.ok((await page()).results.some((r: { title: string }) => r.title === 'Renamed')));
    assert.equal(afresh.pages, 1);
    // A filter reading another table names it: a check report moves a page filtered on check status.
    const failing = () => ok(svc.admin.get(`${REQUESTS}?check_status=failure&limit=50`));
    assert.ok((await failing()).results.some((r: { id: number }) => r.id === s.cr.id));
    await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
    assert.ok(!(await failing()).results.some((r: { id: number }) => r.id === s.cr.id));
  });

  it("a detail read after a check report or a review computes the gate, not the branch's facts; a write in the branch computes them afresh", async () => {
    const s = await submitted();
    await detail(s.author.client, s.cr.id);
    const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
    await ok(s.pipeline.client.patch(`${CHECKS}${ci.id}/`, { status: 'failure' }));
    await created(s.reviewer.client.post(REVIEWS, { change_request: s.cr.id, decision: 'comment', comment: 'a question' }));
    assert.deepEqual(await kept(() => detail(s.author.client, s.cr.id)), { pages: 0, branchFacts: 0 });
    const before = (await detail(s.author.client, s.cr.id)).digest;
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { name: 'renamed-router' }));
    let after = '';
    assert.deepEqual(await kept(async () => (after = (await detail(s.author.client, s.cr.id)).digest)), { pages: 0, branchFacts: 1 });
    assert.notEqual(after, before);
  });
});
