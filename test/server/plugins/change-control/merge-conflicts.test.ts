import assert from 'node:assert/strict';
import { Receiver } from '../../../support/receiver';
import { hostOnly, suiteService, type TestService } from '../../../support/service';
import { forSuite } from '../../../support/prepared';
import {
  act,
  actor,
  branch,
  BRANCHES,
  detail,
  DEVICES,
  device,
  expectStatus,
  created,
  ok,
  openRequest,
  REQUESTS,
  review,
} from './fixtures';
import {
  branchOf,
  gateCast,
  hookLifecycleEvents,
  MERGER,
  mergeJobs,
  outboxPayloads,
  type GateCast,
} from './gate-support';

/**
 * A device on main (`<name>`, active) whose status the author's branch sets to planned; then
 * main sets the status to offline (the branch conflicts with main); the request is approved.
 */
async function conflicting(
  svc: TestService,
  cast: GateCast,
  name: string,
  fields: Record<string, unknown> = {},
): Promise<{ branchId: number; crId: number; deviceId: number; changeId: number }> {
  const dev = await device(svc.admin, { name, status: 'active', role: 'core' });
  const work = await branch(cast.author.client, `${name}-work`);
  await ok(work.inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' }));
  await ok(svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'offline' }));
  const cr = await openRequest(cast.author.client, work.branch.id, fields);
  await ok(act(cast.author.client, cr.id, 'submit'));
  expectStatus(await review(cast.reviewer.client, cr.id, 'approve'), 201);
  const change = (await ok(svc.admin.get(`/api/plugins/branching/changes/?branch_id=${work.branch.id}`))).results[0];
  return { branchId: work.branch.id, crId: cr.id, deviceId: dev.id, changeId: change.id };
}

const mainStatus = async (svc: TestService, id: number) => (await ok(svc.admin.get(`${DEVICES}${id}/`))).status;
const merge = (client: TestService['admin'], branchId: number, body: Record<string, unknown>) =>
  client.post(`${BRANCHES}${branchId}/merge/`, body);

describe('change control: conflicts with main must be acknowledged', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await Receiver.start();
  });
  after(async () => receiver.close());
  const svc = suiteService();
  const cast = forSuite(async () => {
    const c = await gateCast(svc);
    await hookLifecycleEvents(svc, receiver.url());
    return c;
  });

  it('Conflicts must be acknowledged: a merge of a branch that conflicts with main is 409 naming each conflicting object and attribute, with main’s value and the branch’s, and writes nothing; a dry run reports the same conflicts without refusing', async () => {
    const c = await conflicting(svc, cast, 'sw1');
    const expected = [
      {
        change: c.changeId,
        object_type: 'dcim.device',
        object_id: c.deviceId,
        object_repr: 'sw1',
        attributes: ['status'],
        main: { status: 'offline' },
        branch: { status: 'planned' },
      },
    ];
    const refused = await merge(cast.author.client, c.branchId, { commit: true });
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /sw1: status/);
    assert.deepEqual(refused.body.conflicts, expected);
    assert.equal(await mainStatus(svc, c.deviceId), 'offline', "main's value stands");
    assert.equal((await branchOf(svc, c.branchId)).status, 'ready');
    for (const body of [
      { commit: true, acknowledge_conflicts: false },
      { commit: true, acknowledge_conflicts: 'yes' },
    ])
      assert.ok([400, 409].includes((await merge(cast.author.client, c.branchId, body)).status), JSON.stringify(body));

    const dry = await ok(merge(cast.author.client, c.branchId, { commit: false }));
    assert.deepEqual(dry.conflicts, expected);
    assert.equal(dry.commit, false);
    assert.equal(await mainStatus(svc, c.deviceId), 'offline');
  });

  it('Conflicts must be acknowledged: with acknowledge_conflicts the branch’s values win, and the acknowledgement is recorded on the request (merge_acknowledged_conflicts), in its changelog and in the change_request_completed payload', async () => {
    const c = await conflicting(svc, cast, 'sw2');
    const merged = await ok(merge(cast.author.client, c.branchId, { commit: true, acknowledge_conflicts: true }));
    assert.equal(merged.branch.status, 'merged');
    assert.equal(await mainStatus(svc, c.deviceId), 'planned');
    const recorded = {
      count: 1,
      conflicts: [{ change: c.changeId, object_type: 'dcim.device', object_id: c.deviceId, attributes: ['status'] }],
    };
    const cr = await detail(cast.author.client, c.crId);
    assert.equal(cr.status, 'completed');
    assert.deepEqual(cr.merge_acknowledged_conflicts, recorded);
    const log = (
      await ok(
        svc.admin.get(
          `/api/core/object-changes/?changed_object_type=change_control.changerequest&changed_object_id=${c.crId}&limit=100`,
        ),
      )
    ).results as Array<{ postchange_data: Record<string, unknown> }>;
    assert.ok(
      log.some((e) => JSON.stringify(e.postchange_data?.merge_acknowledged_conflicts) === JSON.stringify(recorded)),
    );
    const completed = (await outboxPayloads(svc)).find(
      (p) => p.event === 'change_request_completed' && p.data?.id === c.crId,
    );
    assert.deepEqual(completed?.data.merge_acknowledged_conflicts, recorded);
    // Read-only: a write naming it leaves it as recorded.
    const patched = await ok(svc.admin.patch(`${REQUESTS}${c.crId}/`, { merge_acknowledged_conflicts: null }));
    assert.deepEqual(patched.merge_acknowledged_conflicts, recorded);
  });

  it('Conflicts: automatic merge and the merge queue never merge a conflicting branch; the request waits, merge_blocked_reason says why (naming object and attribute), actions.merge stays allowed with that reason', async () => {
    const c = await conflicting(svc, cast, 'sw3', { auto_merge: true });
    const cr = await detail(cast.author.client, c.crId);
    assert.equal(cr.ready_to_merge, false);
    assert.equal(cr.has_conflicts, true);
    assert.equal(
      cr.merge_blocked_reason,
      'The branch conflicts with main (sw3: status); merge it by hand acknowledging the conflicts, or sync the branch.',
    );
    assert.deepEqual(cr.actions.merge, { allowed: true, reason: cr.merge_blocked_reason });
    assert.equal(cr.actions.override.allowed, false);
    // A write that refreshes the request (a sweep would too) does not queue it.
    await ok(cast.author.client.patch(`${REQUESTS}${c.crId}/`, { description: 'again' }));
    assert.deepEqual(await mergeJobs(svc, c.branchId), []);
    assert.equal((await branchOf(svc, c.branchId)).status, 'ready');
    const listed = (await ok(cast.author.client.get(`${REQUESTS}?id=${c.crId}`))).results[0];
    assert.equal(listed.ready_to_merge, false);
    assert.match(listed.merge_blocked_reason, /conflicts with main/);
  });

  it('Conflicts: a job already in the merge queue whose branch came to conflict leaves the queue saying why, and nothing merges', async () => {
    const dev = await device(svc.admin, { name: 'sw4', status: 'active' });
    const work = await branch(cast.author.client, 'sw4-work');
    await ok(work.inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' }));
    const cr = await openRequest(cast.author.client, work.branch.id);
    await ok(act(cast.author.client, cr.id, 'submit'));
    expectStatus(await review(cast.reviewer.client, cr.id, 'approve'), 201);
    // Queued as a sweep queues a ready request, then main moves before the job runs.
    const { insertMergeJob } = await import('./gate-support');
    const { runMergeJob } = await import('../../../../server/plugins/change-control/gate/auto-merge');
    const jobId = await insertMergeJob(svc, { ...work, cr });
    await ok(svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'offline' }));
    await runMergeJob(svc.host, jobId, 'test', svc.url);
    const [job] = await mergeJobs(svc, work.branch.id);
    assert.equal(job!.state, 'failed');
    assert.match(job!.detail, /conflicts with main \(sw4: status\)/);
    assert.equal(await mainStatus(svc, dev.id), 'offline');
  });

  it('Conflicts on objects the merger may not view are not named: counted as "and N more you cannot view" in the 409 and the blocked reason', async () => {
    const c = await conflicting(svc, cast, 'sw5');
    const hiddenDev = await device(svc.admin, { name: 'secret-core', status: 'active', role: 'secret' });
    const work = await branchOf(svc, c.branchId);
    await ok(cast.author.client.inBranch(work.schema_id).patch(`${DEVICES}${hiddenDev.id}/`, { status: 'planned' }));
    await ok(svc.admin.patch(`${DEVICES}${hiddenDev.id}/`, { status: 'offline' }));
    // The branch moved on: the reviewer approves it again.
    const given = (await ok(svc.admin.get(`/api/plugins/change-control/reviews/?change_request_id=${c.crId}`)))
      .results[0];
    await ok(cast.reviewer.client.patch(`/api/plugins/change-control/reviews/${given.id}/`, { decision: 'approve' }));
    const merger = await actor(svc, 'narrow-merger', [
      { object_types: ['branching.branch', 'branching.changediff'], actions: ['view', 'merge'] },
      { object_types: ['dcim.device'], actions: ['view'], constraints: { role: 'core' } },
      { object_types: ['change_control.changerequest'], actions: ['view'] },
    ]);
    const refused = await merge(merger.client, c.branchId, { commit: true });
    expectStatus(refused, 409);
    assert.ok(refused.body.conflicts, JSON.stringify(refused.body));
    assert.deepEqual(
      refused.body.conflicts.map((x: { object_repr: string }) => x.object_repr),
      ['sw5'],
    );
    assert.match(refused.body.detail, /sw5: status and 1 more you cannot view/);
    assert.ok(!JSON.stringify(refused.body).includes('secret-core'));
    const cr = await detail(merger.client, c.crId);
    assert.match(cr.merge_blocked_reason, /\(sw5: status and 1 more you cannot view\)/);
    assert.match((await detail(svc.admin, c.crId)).merge_blocked_reason, /secret-core: status/);
  });

  it('Conflicts and the override: the override sets the gate aside, not the conflicts (409 with them unless acknowledge_conflicts); with it the override merges and records both; a request only conflicts block is not overridden', async () => {
    const overrider = await actor(svc, 'overrider', [
      ...MERGER,
      { object_types: ['change_control.gate'], actions: ['override'] },
    ]);
    // Blocked by the gate (not approved) and by conflicts.
    const dev = await device(svc.admin, { name: 'sw6', status: 'active' });
    const work = await branch(cast.author.client, 'sw6-work');
    await ok(work.inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' }));
    const cr = await openRequest(cast.author.client, work.branch.id);
    await ok(act(cast.author.client, cr.id, 'submit'));
    await ok(svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'offline' }));
    const path = `${REQUESTS}${cr.id}/override/`;
    const refused = await overrider.client.post(path, { reason: 'Outage fix' });
    expectStatus(refused, 409);
    assert.equal(refused.body.conflicts[0].object_repr, 'sw6');
    assert.equal((await detail(svc.admin, cr.id)).override, null, 'nothing recorded');
    const done = await ok(overrider.client.post(path, { reason: 'Outage fix', acknowledge_conflicts: true }));
    assert.equal(done.status, 'completed');
    assert.equal(done.override.reason, 'Outage fix');
    assert.doesNotMatch(done.override.overridden_reason, /conflicts/);
    assert.equal(done.merge_acknowledged_conflicts.count, 1);
    assert.equal(await mainStatus(svc, dev.id), 'planned');

    const only = await conflicting(svc, cast, 'sw7');
    const notNeeded = await overrider.client.post(`${REQUESTS}${only.crId}/override/`, {
      reason: 'x',
      acknowledge_conflicts: true,
    });
    expectStatus(notNeeded, 409);
    assert.match(notNeeded.body.detail, /Nothing but conflicts with main blocks/);
  });
});

describe('branching: conflicts with main must be acknowledged (without change control)', () => {
  const svc = suiteService({ plugins: hostOnly() });

  it('Conflicts must be acknowledged: merge/ refuses a conflicting branch (409 with conflicts) unless acknowledge_conflicts; a branch without conflicts merges as before', async () => {
    const dev = (await created(svc.admin.post(DEVICES, { name: 'edge', status: 'active' }))) as { id: number };
    const b = (await created(svc.admin.post(BRANCHES, { name: 'edge-work' }))) as { id: number; schema_id: string };
    await ok(svc.admin.inBranch(b.schema_id).patch(`${DEVICES}${dev.id}/`, { status: 'planned' }));
    await ok(svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'offline' }));
    const refused = await svc.admin.post(`${BRANCHES}${b.id}/merge/`, { commit: true });
    expectStatus(refused, 409);
    assert.deepEqual(refused.body.conflicts[0].attributes, ['status']);
    assert.equal((await ok(svc.admin.get(`${DEVICES}${dev.id}/`))).status, 'offline');
    // Sync the branch: main's value becomes its baseline, the conflict goes, the merge passes.
    await ok(svc.admin.post(`${BRANCHES}${b.id}/sync/`, { commit: true }));
    const merged = await ok(svc.admin.post(`${BRANCHES}${b.id}/merge/`, { commit: true }));
    assert.deepEqual(merged.conflicts, []);
    assert.equal((await ok(svc.admin.get(`${DEVICES}${dev.id}/`))).status, 'planned');
  });
});
