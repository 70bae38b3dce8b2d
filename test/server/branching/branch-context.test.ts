import assert from 'node:assert/strict';
import { startService, type ApiClient, type TestService, hostOnly } from '../../support/service';
import { changelogOf, createBranch } from './fixtures';

const DEVICES = '/api/dcim/devices/';
const SITES = '/api/dcim/sites/';
const CHANGES = '/api/plugins/branching/changes/';

describe('branching: writes and reads in a branch', () => {
  let svc: TestService;
  let branch: { id: number; schema_id: string };
  let inBranch: ApiClient;
  let moved: Array<{ objectTypes: string[]; newlyTouchedTypes: string[] }>;
  beforeEach(async () => {
    svc = await startService({ plugins: hostOnly() });
    branch = await createBranch(svc, 'feature');
    inBranch = svc.admin.inBranch(branch.schema_id);
    moved = [];
    svc.host.branchHooks.on('changesMoved', async (_ctx, p) => {
      moved.push({ objectTypes: p.objectTypes, newlyTouchedTypes: p.newlyTouchedTypes });
    });
  });
  afterEach(async () => svc.close());

  const changes = async () => (await svc.admin.get(`${CHANGES}?branch_id=${branch.id}`)).body.results;

  it('keeps main untouched and records one change per object', async () => {
    const site = (await svc.admin.post(SITES, { name: 'dc1', status: 'active' })).body;
    const dev = (await svc.admin.post(DEVICES, { name: 'edge-1', status: 'active' })).body;

    const created = await inBranch.post(DEVICES, { name: 'edge-2', status: 'planned' });
    assert.equal(created.status, 201);
    assert.equal((await inBranch.patch(`${SITES}${site.id}/`, { status: 'retired' })).status, 200);
    assert.equal((await inBranch.delete(`${DEVICES}${dev.id}/`)).status, 204);

    assert.deepEqual((await svc.admin.get(SITES)).body.results, [site], 'main is untouched');
    assert.deepEqual((await svc.admin.get(DEVICES)).body.results, [dev]);
    assert.equal((await svc.admin.get(`${DEVICES}${created.body.id}/`)).status, 404);

    const rows = await changes();
    assert.deepEqual(
      rows.map((c: any) => [c.object_type, c.object_id, c.action]),
      [
        ['dcim.device', created.body.id, 'create'],
        ['dcim.site', site.id, 'update'],
        ['dcim.device', dev.id, 'delete'],
      ],
    );
    const [create, update, del] = rows;
    assert.deepEqual([create.original, create.modified], [null, { name: 'edge-2', status: 'planned' }]);
    assert.deepEqual([update.original, update.modified, update.current], [{ name: 'dc1', status: 'active' }, { name: 'dc1', status: 'retired' }, { name: 'dc1', status: 'active' }]);
    assert.deepEqual([del.original, del.modified], [{ name: 'edge-1', status: 'active' }, null]);
    assert.equal(update.object_repr, 'dc1');
    assert.equal(update.branch, branch.id);
    assert.equal(update.conflicts, null);
    assert.equal(create.current, null);

    const log = await changelogOf(svc, 'dcim.site', site.id);
    assert.deepEqual(log.map((r) => [r.action, r.branch_id]), [['create', null], ['update', branch.id]]);

    assert.deepEqual(moved, [
      { objectTypes: ['dcim.device'], newlyTouchedTypes: ['dcim.device'] },
      { objectTypes: ['dcim.site'], newlyTouchedTypes: ['dcim.site'] },
      { objectTypes: ['dcim.device'], newlyTouchedTypes: [] },
    ]);
  });

  it('overlays the branch on main for lists and details', async () => {
    const keep = (await svc.admin.post(DEVICES, { name: 'keep', status: 'active' })).body;
    const edit = (await svc.admin.post(DEVICES, { name: 'edit', status: 'active' })).body;
    const gone = (await svc.admin.post(DEVICES, { name: 'gone', status: 'active' })).body;
    svc.clock.advanceDays(1);
    await inBranch.patch(`${DEVICES}${edit.id}/`, { status: 'planned' });
    await inBranch.delete(`${DEVICES}${gone.id}/`);
    const added = (await inBranch.post(DEVICES, { name: 'added', status: 'planned' })).body;

    const list = (await inBranch.get(DEVICES)).body;
    assert.deepEqual(list.results.map((o: any) => o.name), ['keep', 'edit', 'added']);
    assert.equal(list.count, 3);
    assert.deepEqual(list.results[0], keep);
    assert.equal(list.results[1].status, 'planned');
    assert.equal(list.results[1].created, edit.created);
    assert.equal(list.results[1].last_updated, '2026-11-02T09:00:00.000Z');
    assert.deepEqual((await inBranch.get(`${DEVICES}?status=planned`)).body.results.map((o: any) => o.name), ['edit', 'added']);
    assert.equal((await inBranch.get(`${DEVICES}${gone.id}/`)).status, 404);
    assert.equal((await inBranch.patch(`${DEVICES}${gone.id}/`, { name: 'x' })).status, 404);
    assert.deepEqual((await inBranch.get(`${DEVICES}${added.id}/`)).body, added);
    assert.equal((await inBranch.get(`${DEVICES}${edit.id}/`)).body.status, 'planned');
    assert.equal((await svc.admin.get(`${DEVICES}${edit.id}/`)).body.status, 'active');

    const lateOnMain = (await svc.admin.post(DEVICES, { name: 'late' })).body;
    assert.equal((await inBranch.get(`${DEVICES}${lateOnMain.id}/`)).status, 200, 'main objects the branch does not touch show through');
  });

  it('keeps the net effect: create then delete leaves nothing, update then update keeps the first baseline', async () => {
    const created = (await inBranch.post(DEVICES, { name: 'temp' })).body;
    await inBranch.patch(`${DEVICES}${created.id}/`, { status: 'x' });
    assert.deepEqual((await changes()).map((c: any) => [c.action, c.modified]), [['create', { name: 'temp', status: 'x' }]]);
    await inBranch.delete(`${DEVICES}${created.id}/`);
    assert.deepEqual(await changes(), []);

    const dev = (await svc.admin.post(DEVICES, { name: 'd', status: 'active' })).body;
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    const first = (await changes())[0];
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'offline', rack: 3 });
    const rows = await changes();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].id, first.id, 'the same change row');
    assert.deepEqual(rows[0].original, { name: 'd', status: 'active' });
    assert.deepEqual(rows[0].modified, { name: 'd', status: 'offline', rack: 3 });

    await inBranch.put(`${DEVICES}${dev.id}/`, { name: 'd', status: 'active' });
    assert.deepEqual(await changes(), [], 'updating back to the original removes the change');

    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    await inBranch.delete(`${DEVICES}${dev.id}/`);
    const rows2 = await changes();
    assert.deepEqual(rows2.map((c: any) => [c.action, c.original, c.modified]), [['delete', { name: 'd', status: 'active' }, null]]);

    assert.deepEqual(moved.map((m) => m.newlyTouchedTypes), [['dcim.device'], [], [], ['dcim.device'], [], [], ['dcim.device'], []]);
  });

  it('keeps created ids when objects are created in a branch and on main', async () => {
    const inB = (await inBranch.post(SITES, { name: 'b' })).body;
    const onMain = (await svc.admin.post(SITES, { name: 'm' })).body;
    assert.notEqual(inB.id, onMain.id);
    assert.deepEqual((await inBranch.get(SITES)).body.results.map((o: any) => o.id), [inB.id, onMain.id].sort((a, b) => a - b));
  });

  it('refuses writes into a branch that is not ready, and keeps reads working', async () => {
    const dev = (await svc.admin.post(DEVICES, { name: 'd' })).body;
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    assert.equal((await svc.admin.post(`/api/plugins/branching/branches/${branch.id}/merge/`, { commit: true })).status, 200);
    const refused = await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'offline' });
    assert.equal(refused.status, 400);
    assert.match(refused.body.detail, /merged/);
    assert.equal((await inBranch.post(DEVICES, { name: 'x' })).status, 400);
    assert.equal((await inBranch.delete(`${DEVICES}${dev.id}/`)).status, 400);
    assert.equal((await inBranch.get(`${DEVICES}${dev.id}/`)).body.status, 'planned');
  });
});
