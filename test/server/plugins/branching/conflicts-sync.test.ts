import assert from 'node:assert/strict';
import {
  branchHasConflicts,
  isBranchStale,
  listBranchChanges,
  touchedObjectTypes,
  getChangeDiff,
} from '../../../../server/plugins/branching';
import { loadBranch } from '../../../../server/plugins/branching/branches';
import { createCtx } from '../../../../server/host/core/context';
import type { ConfigInput } from '../../../../server/host/core/config';
import { startService, type ApiClient, type TestService, hostOnly } from '../../../support/service';
import { CHANGES, BRANCHES, createBranch, DEVICES } from './fixtures';

describe('branching: conflicts, sync and staleness', () => {
  let svc: TestService;
  let branch: { id: number; schema_id: string };
  let inBranch: ApiClient;
  let dev: any;
  let fired: string[];
  const start = async (config?: ConfigInput) => {
    svc = await startService({ config, plugins: hostOnly() });
    dev = (await svc.admin.post(DEVICES, { name: 'edge-1', status: 'active', rack: 1, serial: 'A' })).body;
    branch = await createBranch(svc, 'feature');
    inBranch = svc.admin.inBranch(branch.schema_id);
    fired = [];
    svc.host.branchHooks.on('synced', async (_ctx, p) => {
      fired.push(`synced:${p.branch.last_sync}`);
    });
  };
  const ctx = () => createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
  const change = async () => (await svc.admin.get(`${CHANGES}?branch_id=${branch.id}`)).body.results[0];
  afterEach(async () => svc.close());

  it('flags a conflict when main changes an attribute the branch also changed, not on another attribute', async () => {
    await start();
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned', rack: 2 });
    await svc.admin.patch(`${DEVICES}${dev.id}/`, { serial: 'B' });
    assert.equal((await change()).conflicts, null, 'main changed an attribute the branch did not');
    await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 2 });
    assert.equal((await change()).conflicts, null, 'main made the same change');
    await svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'offline' });
    const c = await change();
    assert.deepEqual(c.conflicts, ['status']);
    assert.equal(c.current.status, 'offline');
    assert.equal(await branchHasConflicts(ctx(), branch.id), true);
    assert.deepEqual((await getChangeDiff(ctx(), c.id))?.conflicts, ['status']);
  });

  it('flags a delete of an object main updated, and an update of an object main deleted', async () => {
    await start();
    const other = (await svc.admin.post(DEVICES, { name: 'edge-2', status: 'active' })).body;
    await inBranch.delete(`${DEVICES}${dev.id}/`);
    await inBranch.patch(`${DEVICES}${other.id}/`, { status: 'planned' });
    assert.equal(await branchHasConflicts(ctx(), branch.id), false);
    await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 9, serial: 'Z' });
    await svc.admin.delete(`${DEVICES}${other.id}/`);
    const rows = (await svc.admin.get(`${CHANGES}?branch_id=${branch.id}`)).body.results;
    assert.deepEqual(
      rows.map((r: any) => [r.action, r.conflicts]),
      [
        ['delete', ['rack', 'serial']],
        ['update', ['status']],
      ],
    );
    assert.equal(rows[1].current, null);
  });

  it('syncs: moves the baseline to main, keeps the branch edits, follows main elsewhere and clears the conflict', async () => {
    await start();
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    await svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'offline', serial: 'B' });
    assert.deepEqual((await change()).conflicts, ['status']);
    assert.equal(
      (await inBranch.get(`${DEVICES}${dev.id}/`)).body.serial,
      'A',
      'before sync the branch keeps its own copy',
    );

    svc.clock.advanceDays(2);
    const dry = await svc.admin.post(`${BRANCHES}${branch.id}/sync/`, { commit: false });
    assert.deepEqual(
      dry.body.changes.map((c: any) => [c.effect, c.conflicts]),
      [['rebased', null]],
    );
    assert.deepEqual((await change()).conflicts, ['status']);

    const res = await svc.admin.post(`${BRANCHES}${branch.id}/sync/`, { commit: true });
    assert.equal(res.status, 200);
    assert.equal(res.body.branch.last_sync, '2026-11-03T09:00:00.000Z');
    const c = await change();
    assert.deepEqual(c.original, { name: 'edge-1', status: 'offline', rack: 1, serial: 'B' });
    assert.deepEqual(c.modified, { name: 'edge-1', status: 'planned', rack: 1, serial: 'B' });
    assert.equal(c.conflicts, null);
    assert.equal((await inBranch.get(`${DEVICES}${dev.id}/`)).body.serial, 'B');
    assert.deepEqual(fired, ['synced:2026-11-03T09:00:00.000Z']);

    await svc.admin.post(`${BRANCHES}${branch.id}/merge/`, { commit: true });
    const merged = (await svc.admin.get(`${DEVICES}${dev.id}/`)).body;
    assert.equal(merged.status, 'planned');
    assert.equal(merged.serial, 'B');
  });

  it('sync drops a change main already holds and a delete of an object main deleted', async () => {
    await start();
    const other = (await svc.admin.post(DEVICES, { name: 'edge-2' })).body;
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    await inBranch.delete(`${DEVICES}${other.id}/`);
    await svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    await svc.admin.delete(`${DEVICES}${other.id}/`);
    const res = await svc.admin.post(`${BRANCHES}${branch.id}/sync/`, { commit: true });
    assert.deepEqual(
      res.body.changes.map((c: any) => c.effect),
      ['dropped', 'dropped'],
    );
    assert.deepEqual((await svc.admin.get(`${CHANGES}?branch_id=${branch.id}`)).body.results, []);
  });

  it('sync keeps an update of an object main deleted as a conflict', async () => {
    await start();
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    await svc.admin.delete(`${DEVICES}${dev.id}/`);
    const res = await svc.admin.post(`${BRANCHES}${branch.id}/sync/`, { commit: true });
    assert.deepEqual(
      res.body.changes.map((c: any) => [c.effect, c.conflicts]),
      [['conflict', ['status']]],
    );
    assert.deepEqual((await change()).conflicts, ['status']);
  });

  it('is stale when its last sync (or creation) is older than changelog_retention_days', async () => {
    await start({ host: { changelog_retention_days: 10 } });
    const stale = async () => isBranchStale(ctx(), await loadBranch(ctx(), branch.id));
    svc.clock.advanceDays(10);
    assert.equal(await stale(), false);
    svc.clock.advanceDays(1);
    assert.equal(await stale(), true);
    await svc.admin.post(`${BRANCHES}${branch.id}/sync/`, { commit: true });
    assert.equal(await stale(), false);
    svc.clock.advanceDays(11);
    assert.equal(await stale(), true);
  });

  it('uses 90 days by default', async () => {
    await start();
    const stale = async () => isBranchStale(ctx(), await loadBranch(ctx(), branch.id));
    svc.clock.advanceDays(89);
    assert.equal(await stale(), false);
    svc.clock.advanceDays(2);
    assert.equal(await stale(), true);
  });

  it('offers the changes and touched types to code', async () => {
    await start();
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    await inBranch.post('/api/ipam/vlans/', { name: 'v10', vid: 10 });
    assert.deepEqual(await touchedObjectTypes(ctx(), branch.id), ['dcim.device', 'ipam.vlan']);
    const changes = await listBranchChanges(ctx(), branch.id);
    assert.deepEqual(
      changes.map((c) => [c.object_type, c.action, c.object_repr]),
      [
        ['dcim.device', 'update', 'edge-1'],
        ['ipam.vlan', 'create', 'v10 (10)'],
      ],
    );
  });
});
