import assert from 'node:assert/strict';
import { computations } from '../../../../../server/plugins/change-control/computations';
import { computeGate } from '../../../../../server/plugins/change-control/gate/merge-gate';
import { getChangeRequestRow } from '../../../../../server/plugins/change-control/change-requests/repository';
import { createsDevice, domainForSuite, seed } from '../../../../support/domain';
import { forSuite } from '../../../../support/prepared';

/** The merge gate called as a function on an in-memory database: no HTTP. */
describe('unit: the merge gate (merge-gate.ts)', () => {
  const d = domainForSuite();
  /** A requester, and the reviewer that the one policy (on devices) names. */
  const people = forSuite(async () => {
    const requester = await seed.user(d);
    const reviewer = await seed.user(d);
    await seed.policy(d, { name: 'Devices', objectTypes: ['dcim.device'], users: [reviewer] });
    return { requester, reviewer };
  });

  /** A request on a ready branch that creates one device. */
  async function request(fields: Parameters<typeof seed.changeRequest>[3] = {}) {
    const branchId = await seed.branch(d);
    await seed.change(d, branchId, 'dcim.device', 1000 + branchId, createsDevice(`dev-${branchId}`));
    return seed.changeRequest(d, branchId, people.requester, fields);
  }

  it('matches the policy from the branch and waits for its approval, then is ready', async () => {
    const cr = await request();
    const waiting = await computeGate(d.ctx(), cr, { rematch: true });
    assert.deepEqual(
      waiting.governing.map((g) => [g.policy.name, g.matchedObjectTypes]),
      [['Devices', ['dcim.device']]],
    );
    assert.equal(waiting.status, 'needs-review');
    assert.equal(waiting.readyToMerge, false);
    assert.deepEqual(waiting.reasons, ['Rule "review" of policy "Devices" has 0 of 1 required approval.']);

    await seed.review(d, cr.id, people.reviewer, 'approve');
    const ready = await computeGate(d.ctx(), cr, { rematch: true });
    assert.equal(ready.status, 'approved');
    assert.equal(ready.gatesCleared, true);
    assert.equal(ready.readyToMerge, true);
    assert.equal(ready.mergeBlockedReason, '');
  });

  it('without rematch, only the attached policies govern (none attached: no policy rules apply)', async () => {
    const cr = await request();
    const gate = await computeGate(d.ctx(), cr);
    assert.deepEqual(gate.governing, []);
    assert.deepEqual(gate.reasons, ['No policy rules apply']);
  });

  it('a closed change window blocks alone; the window override lets it through', async () => {
    const cr = await request({
      scheduled_start: '2026-11-02T00:00:00.000Z',
      scheduled_end: '2026-11-03T00:00:00.000Z',
    });
    await seed.review(d, cr.id, people.reviewer, 'approve');
    const closed = await computeGate(d.ctx(), cr, { rematch: true });
    assert.equal(closed.readyToMerge, false);
    assert.equal(closed.onlyWindowBlocks, true);
    assert.equal(closed.gatesCleared, true);
    assert.equal((await computeGate(d.ctx(), cr, { rematch: true, overrideWindow: true })).readyToMerge, true);
    d.clock.set('2026-11-02T12:00:00Z');
    try {
      assert.equal((await computeGate(d.ctx(), cr, { rematch: true })).readyToMerge, true);
    } finally {
      d.clock.set('2026-11-01T09:00:00Z');
    }
  });

  it('a draft, a branch that is not ready, a completed request each say why', async () => {
    const draft = await request({ status: 'draft' });
    assert.ok(
      (await computeGate(d.ctx(), draft, { rematch: true })).reasons.includes(
        'The change request is a draft; submit it for review.',
      ),
    );

    const branchId = await seed.branch(d, 'busy', 'syncing');
    const busy = await seed.changeRequest(d, branchId, people.requester);
    assert.ok((await computeGate(d.ctx(), busy, { rematch: true })).reasons.includes('Branch "busy" is syncing.'));

    const done = await request({ status: 'completed' });
    assert.deepEqual((await computeGate(d.ctx(), done, { rematch: true })).reasons, [
      'The change request is completed.',
    ]);
  });

  it('computes the gate and its evaluation once per call, reusing an evaluation it is given', async () => {
    const cr = (await getChangeRequestRow(d.ctx(), (await request()).id))!;
    const before = { ...computations(d.host) };
    const first = await computeGate(d.ctx(), cr, { rematch: true });
    assert.deepEqual(
      {
        gate: computations(d.host).gate - before.gate,
        evaluation: computations(d.host).evaluation - before.evaluation,
      },
      { gate: 1, evaluation: 1 },
    );
    await computeGate(d.ctx(), cr, { governing: first.governing, evaluation: first.evaluation });
    assert.deepEqual(
      {
        gate: computations(d.host).gate - before.gate,
        evaluation: computations(d.host).evaluation - before.evaluation,
      },
      { gate: 2, evaluation: 1 },
    );
  });
});
