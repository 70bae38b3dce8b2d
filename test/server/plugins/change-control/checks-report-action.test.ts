import assert from 'node:assert/strict';
import type { TestService } from '../../../support/service';
import { created, detail, DEVICES, expectStatus, ok, REQUESTS } from './fixtures';
import {
  approve,
  assertCheck,
  checkChangelog,
  checksByName,
  CheckResult,
  CheckScope,
  setup,
  startWithChecks,
} from './checks-support';

const RULES = '/api/extras/event-rules/';
const ACTION = 'change_control.report_check';

/**
 * The event-rule action `change_control.report_check` (specification Events 3, contract 4.6):
 * it writes onto the open change request of the branch the event came from, only onto a
 * declared check; otherwise it does nothing and logs why.
 */
describe('change control checks: the report_check event-rule action', () => {
  let svc: TestService;
  before(async () => {
    svc = await startWithChecks({
      config: { change_control: { required_external_checks: [['ci/build', 'CI build']] } },
      ready: (r) => {
        r.registerCheck({ name: 'org/computed', label: 'Computed', fn: () => CheckResult.passed('computed') });
        r.registerCheck({
          name: 'org/opt-in',
          label: 'Opt-in',
          fn: () => CheckResult.passed('computed'),
          scope: CheckScope.POLICY,
        });
      },
    });
  });
  after(async () => svc.close());

  let ruleIds: number[] = [];
  afterEach(async () => {
    for (const id of ruleIds) await svc.admin.delete(`${RULES}${id}/`);
    ruleIds = [];
  });

  async function rule(actionData: Record<string, unknown>, over: Record<string, unknown> = {}): Promise<number> {
    const made = await created(
      svc.admin.post(RULES, {
        name: `report-${Date.now()}-${ruleIds.length}`,
        object_types: ['dcim.device'],
        event_types: ['object_created', 'object_updated'],
        action_type: ACTION,
        action_data: actionData,
        ...over,
      }),
      'event rule',
    );
    ruleIds.push(made.id);
    return made.id;
  }

  const logSince = (mark: number) => svc.log.lines.slice(mark).join('\n');

  it("Events 3: a write in a branch reports onto the declared check of that branch's open change request, before the response", async () => {
    const s = await setup(svc);
    await rule({
      check: 'ci/build',
      status: 'failure',
      summary: 'device lint failed',
      details_url: 'https://ci.example.com/lint/1',
    });
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
    const ci = (await checksByName(svc.admin, s.cr.id))['ci/build'];
    assertCheck(ci, { status: 'failure', summary: 'device lint failed', blocks_merge: true });
    assert.equal(ci.details_url, 'https://ci.example.com/lint/1');
    assert.equal(ci.completed, svc.clock.now().toISOString());
    const log = await checkChangelog(svc.admin, ci.id);
    assert.equal(log.at(-1).action, 'update');
    assert.equal(log.at(-1).postchange_data.status, 'failure');
  });

  it('Contract 4.6: status defaults to failure; any check status may be given', async () => {
    const s = await setup(svc);
    const id = await rule({ check: 'ci/build' });
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
    assertCheck((await checksByName(svc.admin, s.cr.id))['ci/build'], { status: 'failure' });
    await ok(
      svc.admin.patch(`${RULES}${id}/`, {
        action_data: { check: 'ci/build', status: 'skipped', summary: 'nothing to build' },
      }),
    );
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'planned' }));
    assertCheck((await checksByName(svc.admin, s.cr.id))['ci/build'], {
      status: 'skipped',
      summary: 'nothing to build',
      blocks_merge: false,
    });
  });

  it('reports from a lifecycle event of the change request itself (its branch), e.g. running when submitted; the gate follows', async () => {
    const s = await setup(svc, { policy: {} });
    await rule(
      { check: 'ci/build', status: 'success', summary: 'approved build' },
      { object_types: ['change_control.changerequest'], event_types: ['change_request_approved'] },
    );
    await rule(
      { check: 'ci/build', status: 'running' },
      { object_types: ['change_control.changerequest'], event_types: ['change_request_submitted'] },
    );
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    assertCheck((await checksByName(svc.admin, s.cr.id))['ci/build'], { status: 'running' });
    await approve(s.reviewer, s.cr.id);
    assertCheck((await checksByName(svc.admin, s.cr.id))['ci/build'], { status: 'success', summary: 'approved build' });
    assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
  });

  it("reports onto a check declared by a governing policy's checks", async () => {
    const s = await setup(svc, { policy: { checks: ['ext/scan'] } });
    await rule({ check: 'ext/scan', status: 'error', summary: 'scanner down' });
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
    assertCheck((await checksByName(svc.admin, s.cr.id))['ext/scan'], {
      status: 'error',
      summary: 'scanner down',
      required: true,
    });
  });

  it('does nothing, and logs why, for a check that is not declared', async () => {
    const s = await setup(svc);
    await rule({ check: 'not/declared', status: 'success' });
    const mark = svc.log.lines.length;
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
    assert.equal((await checksByName(svc.admin, s.cr.id))['not/declared'], undefined);
    assert.match(logSince(mark), /check "not\/declared" is not declared for change request \d+; nothing reported/);
  });

  it('does nothing, and logs why, for a registered check (its result is computed, not reported)', async () => {
    const s = await setup(svc, { policy: { checks: ['org/opt-in'] } });
    await rule({ check: 'org/computed', status: 'failure' });
    await rule({ check: 'org/opt-in', status: 'failure' });
    const mark = svc.log.lines.length;
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
    const checks = await checksByName(svc.admin, s.cr.id);
    assertCheck(checks['org/computed'], { status: 'success', summary: 'computed' });
    assertCheck(checks['org/opt-in'], { status: 'success', summary: 'computed' });
    assert.match(logSince(mark), /check "org\/computed" is a registered check/);
    assert.match(logSince(mark), /check "org\/opt-in" is a registered check/);
  });

  it("does nothing, and logs why, when the branch's change request is not open", async () => {
    const s = await setup(svc);
    await ok(svc.admin.post(`${REQUESTS}${s.cr.id}/abandon/`, {}));
    await rule({ check: 'ci/build', status: 'success' });
    const mark = svc.log.lines.length;
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
    assertCheck((await checksByName(svc.admin, s.cr.id))['ci/build'], { status: 'pending' });
    assert.match(logSince(mark), /has no open change request; nothing reported/);
  });

  it('does nothing, and logs why, when the branch has no change request, or the event came from no branch', async () => {
    const s = await setup(svc, { open: false });
    await rule({ check: 'ci/build', status: 'success' });
    let mark = svc.log.lines.length;
    await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
    assert.match(logSince(mark), new RegExp(`branch ${s.branchId} has no open change request`));

    mark = svc.log.lines.length;
    await created(svc.admin.post(DEVICES, { name: `on-main-${Date.now()}` }));
    assert.match(logSince(mark), /came from no branch; nothing reported/);
  });

  it('reports onto the change request of the branch the event came from, not any other', async () => {
    const a = await setup(svc);
    const b = await setup(svc);
    await rule({ check: 'ci/build', status: 'failure', summary: 'only a' });
    await ok(a.inBranch.patch(`${DEVICES}${a.device.id}/`, { status: 'active' }));
    assertCheck((await checksByName(svc.admin, a.cr.id))['ci/build'], { status: 'failure', summary: 'only a' });
    assertCheck((await checksByName(svc.admin, b.cr.id))['ci/build'], { status: 'pending' });
  });

  it('refuses a rule with action_data that names no check, an unknown status or an unknown key (400)', async () => {
    const base = { name: 'bad', object_types: ['dcim.device'], event_types: ['object_created'], action_type: ACTION };
    for (const action_data of [
      null,
      {},
      { check: '' },
      { check: 'ci/build', status: 'passed' },
      { check: 'ci/build', colour: 'red' },
      { check: 'ci/build', summary: 5 },
      { check: 'ci/build', details_url: 'javascript:alert(1)' },
      { check: 'ci/build', details_url: 'data:,x' },
    ]) {
      const res = await svc.admin.post(RULES, { ...base, action_data });
      expectStatus(res, 400, JSON.stringify(action_data));
      assert.match(JSON.stringify(res.body), /action_data/);
    }
  });
});
