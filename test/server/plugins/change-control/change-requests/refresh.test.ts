import assert from 'node:assert/strict';
import { branchingPlugin } from '../../../../../server/plugins/branching/plugin';
import { changeControlPlugin } from '../../../../../server/plugins/change-control/plugin';
import { requestRefresh } from '../../../../../server/plugins/change-control/change-requests/refresh';
import { getChangeRequestRow } from '../../../../../server/plugins/change-control/change-requests/repository';
import { computations } from '../../../../../server/plugins/change-control/computations';
import { ccDb } from '../../../../../server/plugins/change-control/db/database';
import type { EmittedEvent } from '../../../../../server/host/events/bus';
import { createsDevice, seed, startDomain, type Domain } from '../../../../support/domain';
import { CheckResult, counting, registeringPlugin } from '../checks-support';

/** Refreshing a change request (and its checks) called as a function on an in-memory database: no HTTP. */
describe('unit: the refresh of a change request and its checks (refresh.ts)', () => {
  let d: Domain;
  let requester: number;
  let reviewer: number;
  const probe = counting();
  const events: EmittedEvent[] = [];
  before(async () => {
    d = await startDomain({
      plugins: [
        branchingPlugin(),
        registeringPlugin((r) => r.registerCheck({ name: 'probe', label: 'Probe', fn: probe.fn })),
        changeControlPlugin({ configDir: process.cwd() }),
      ],
    });
    d.host.events.subscribe(async (_ctx, e) => {
      events.push(e);
    });
    requester = await seed.user(d);
    reviewer = await seed.user(d);
    await seed.policy(d, { name: 'Devices', objectTypes: ['dcim.device'], users: [reviewer] });
  });
  after(async () => d.close());
  beforeEach(() => {
    probe.reset();
    probe.answer = () => CheckResult.passed('ok');
    events.length = 0;
  });

  async function request() {
    const branchId = await seed.branch(d);
    await seed.change(d, branchId, 'dcim.device', 2000 + branchId, createsDevice(`dev-${branchId}`));
    return seed.changeRequest(d, branchId, requester);
  }
  const row = async (id: number) => (await getChangeRequestRow(d.ctx(), id))!;
  const counts = () => ({ ...computations(d.host) });

  it('attaches the matched policies, derives the status, caches approved and gates_cleared, and keeps the reviewer queue', async () => {
    const cr = await request();
    await requestRefresh(d.ctx(), cr.id);
    const attached = await ccDb(d.ctx())
      .selectFrom('cc_change_request_policies')
      .select('policy_id')
      .where('change_request_id', '=', cr.id)
      .execute();
    assert.equal(attached.length, 1);
    assert.equal((await row(cr.id)).status, 'needs-review');
    const queue = await ccDb(d.ctx())
      .selectFrom('cc_outstanding_reviewers')
      .select('user_id')
      .where('change_request_id', '=', cr.id)
      .execute();
    assert.deepEqual(
      queue.map((q) => q.user_id),
      [reviewer],
    );

    await seed.review(d, cr.id, reviewer, 'approve');
    await requestRefresh(d.ctx(), cr.id, { rematch: false });
    const after = await row(cr.id);
    assert.equal(after.status, 'approved');
    assert.equal(after.approved, 1);
    assert.equal(after.gates_cleared, 1);
    assert.deepEqual(
      await ccDb(d.ctx())
        .selectFrom('cc_outstanding_reviewers')
        .select('user_id')
        .where('change_request_id', '=', cr.id)
        .execute(),
      [],
    );
    // Reaching approved runs the registered checks again (trigger 3), and the transition fires its event.
    assert.equal(probe.calls >= 1, true);
    assert.deepEqual(
      events.map((e) => e.event).filter((e) => e.startsWith('change_request_')),
      ['change_request_approved'],
    );
  });

  it('collapses every wish of one transaction into one refresh, run before the commit', async () => {
    const cr = await request();
    const before = counts();
    await d.write(async (tx) => {
      await requestRefresh(tx, cr.id, { rematch: false });
      await requestRefresh(tx, cr.id, { checks: true });
      await requestRefresh(tx, cr.id, { rematch: false, evaluate: false });
      assert.equal(probe.calls, 0, 'nothing runs before the commit');
    });
    assert.equal(probe.calls, 1);
    assert.equal(computations(d.host).evaluation - before.evaluation, 1);
    assert.equal(computations(d.host).gate - before.gate, 1);
  });

  it('a failing registered check keeps the gates closed; check results alone move only gates_cleared', async () => {
    const cr = await request();
    await seed.review(d, cr.id, reviewer, 'approve');
    probe.answer = () => CheckResult.failed('broken');
    await requestRefresh(d.ctx(), cr.id, { checks: true });
    assert.deepEqual([(await row(cr.id)).status, (await row(cr.id)).gates_cleared], ['approved', 0]);

    // A result reported from outside: only gates_cleared follows, nothing is evaluated.
    await d.write((tx) =>
      ccDb(tx)
        .updateTable('cc_merge_checks')
        .set({ status: 'success' })
        .where('change_request_id', '=', cr.id)
        .execute(),
    );
    const before = counts();
    await requestRefresh(d.ctx(), cr.id, { rematch: false, evaluate: false });
    assert.equal((await row(cr.id)).gates_cleared, 1);
    assert.deepEqual(
      {
        gate: computations(d.host).gate - before.gate,
        evaluation: computations(d.host).evaluation - before.evaluation,
      },
      { gate: 0, evaluation: 0 },
    );
  });

  it('fires the lifecycle events handed to it at its end, with the gate it computed, in order', async () => {
    const cr = await request();
    await seed.review(d, cr.id, reviewer, 'approve');
    const before = counts();
    await d.write(async (tx) => {
      await requestRefresh(tx, cr.id, { events: [{ event: 'review_submitted', before: null, after: cr }] });
      assert.equal(events.length, 0, 'held until the refresh');
      await tx.flushBeforeCommit();
    });
    const fired = events.filter((e) => !e.event.startsWith('object_'));
    assert.deepEqual(
      fired.map((e) => e.event),
      ['review_submitted', 'change_request_approved'],
    );
    assert.equal((fired[1]!.data as { ready_to_merge: boolean }).ready_to_merge, true);
    assert.equal(computations(d.host).gate - before.gate, 1);
  });
});
