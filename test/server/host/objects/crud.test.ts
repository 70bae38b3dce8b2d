import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import { changelogOf, createUser } from '../../plugins/branching/fixtures';

const DEVICES = '/api/dcim/devices/';

describe('source-of-truth objects on main', () => {
  const svc = eachTestService();

  it('creates, reads, updates (PATCH and PUT) and deletes an object with free-form attributes', async () => {
    const created = await svc.admin.post(DEVICES, { name: 'edge-1', status: 'active', site: 4, tags: ['core'] });
    assert.equal(created.status, 201);
    const id = created.body.id;
    assert.equal(created.body.display, 'edge-1');
    assert.equal(created.body.url, `${svc.url}${DEVICES}${id}/`);
    assert.deepEqual(created.body.tags, ['core']);
    assert.equal(created.body.created, '2026-11-01T09:00:00.000Z');

    const read = await svc.admin.get(`${DEVICES}${id}/`);
    assert.deepEqual(read.body, created.body);

    svc.clock.advanceDays(1);
    const patched = await svc.admin.patch(`${DEVICES}${id}/`, { status: 'planned' });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.status, 'planned');
    assert.equal(patched.body.site, 4, 'PATCH keeps the attributes not sent');
    assert.equal(patched.body.last_updated, '2026-11-02T09:00:00.000Z');
    assert.equal(patched.body.created, created.body.created);

    const put = await svc.admin.put(`${DEVICES}${id}/`, { name: 'edge-1b' });
    assert.equal(put.status, 200);
    assert.deepEqual(Object.keys(put.body).sort(), ['created', 'display', 'id', 'last_updated', 'name', 'url']);

    assert.equal((await svc.admin.delete(`${DEVICES}${id}/`)).status, 204);
    assert.equal((await svc.admin.get(`${DEVICES}${id}/`)).status, 404);
  });

  it('shows "<Type> <id>" without a name and ignores read-only fields sent in a body', async () => {
    const created = await svc.admin.post('/api/ipam/ip-addresses/', {
      id: 999,
      url: 'x',
      display: 'x',
      created: 'x',
      address: '10.0.0.1/24',
    });
    assert.equal(created.status, 201);
    assert.notEqual(created.body.id, 999);
    assert.equal(created.body.display, `IP address ${created.body.id}`);
    assert.equal(created.body.created, '2026-11-01T09:00:00.000Z');
  });

  it('gives every object a distinct id across types', async () => {
    const a = await svc.admin.post('/api/dcim/sites/', { name: 'a' });
    const b = await svc.admin.post(DEVICES, { name: 'b' });
    assert.notEqual(a.body.id, b.body.id);
    assert.equal((await svc.admin.get(`${DEVICES}${a.body.id}/`)).status, 404, 'a site is not a device');
  });

  it('filters by id, q and any attribute (repeated is OR, different are AND) and orders', async () => {
    const ids: number[] = [];
    for (const [name, status, site] of [
      ['edge-1', 'active', 1],
      ['edge-2', 'planned', 1],
      ['core-1', 'active', 2],
      ['Core-2', 'offline', 2],
    ] as const) {
      ids.push((await svc.admin.post(DEVICES, { name, status, site })).body.id);
    }
    const names = async (query: string) =>
      (await svc.admin.get(`${DEVICES}?${query}`)).body.results.map((o: { name: string }) => o.name);
    assert.deepEqual(await names(`id=${ids[0]}&id=${ids[2]}`), ['edge-1', 'core-1']);
    assert.deepEqual(await names('q=CORE'), ['core-1', 'Core-2']);
    assert.deepEqual(await names('status=active&status=offline'), ['edge-1', 'core-1', 'Core-2']);
    assert.deepEqual(await names('status=active&site=2'), ['core-1']);
    assert.deepEqual(await names('site=1&ordering=-name'), ['edge-2', 'edge-1']);
    assert.deepEqual(await names('limit=2&offset=1'), ['edge-2', 'core-1']);
    assert.equal((await svc.admin.get(`${DEVICES}?status=nope`)).body.count, 0);
    const bad = await svc.admin.get(`${DEVICES}?id=abc`);
    assert.equal(bad.status, 400);
    assert.ok(bad.body.id);
  });

  it('records every write in the changelog and emits object events', async () => {
    const seen: string[] = [];
    svc.host.events.subscribe(async (_ctx, e) => {
      seen.push(`${e.event}:${e.objectType}`);
    });
    const id = (await svc.admin.post(DEVICES, { name: 'edge-1' })).body.id;
    await svc.admin.patch(`${DEVICES}${id}/`, { status: 'active' });
    await svc.admin.patch(`${DEVICES}${id}/`, { status: 'active' });
    await svc.admin.delete(`${DEVICES}${id}/`);
    const log = await changelogOf(svc, 'dcim.device', id);
    assert.deepEqual(
      log.map((r) => r.action),
      ['create', 'update', 'delete'],
      'an update that changes nothing records nothing',
    );
    assert.equal(log[1]!.branch_id, null);
    assert.equal(JSON.parse(log[1]!.prechange_data!).status, undefined);
    assert.equal(JSON.parse(log[1]!.postchange_data!).status, 'active');
    assert.deepEqual(seen, ['object_created:dcim.device', 'object_updated:dcim.device', 'object_deleted:dcim.device']);
  });

  it('refuses malformed bodies and unknown ids with client errors', async () => {
    assert.equal((await svc.admin.post(DEVICES, ['x'])).status, 400);
    assert.equal((await svc.admin.post(DEVICES, 'text')).status, 400);
    const badName = await svc.admin.post(DEVICES, { 'bad key': 1 });
    assert.equal(badName.status, 400);
    assert.equal(
      (await svc.admin.post(DEVICES, undefined, { raw: '{bad', headers: { 'Content-Type': 'application/json' } }))
        .status,
      400,
    );
    assert.equal((await svc.admin.patch(`${DEVICES}12345/`, { name: 'x' })).status, 404);
    assert.equal((await svc.admin.delete(`${DEVICES}abc/`)).status, 404);
    assert.equal((await svc.admin.get(`${DEVICES}?ordering=-`)).status, 400);
  });

  it('consults the main write guards before a write on main, not in a branch', async () => {
    const id = (await svc.admin.post(DEVICES, { name: 'edge-1' })).body.id;
    const guarded: string[] = [];
    svc.host.mainWriteGuards.push(async (_ctx, objectType) => {
      guarded.push(objectType);
      return objectType === 'dcim.device' ? 'Direct changes to main are disabled.' : null;
    });
    const refused = await svc.admin.patch(`${DEVICES}${id}/`, { name: 'edge-2' });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { detail: 'Direct changes to main are disabled.' });
    assert.equal((await svc.admin.post(DEVICES, { name: 'x' })).status, 400);
    assert.equal((await svc.admin.delete(`${DEVICES}${id}/`)).status, 400);
    assert.equal((await svc.admin.get(`${DEVICES}${id}/`)).body.name, 'edge-1');
    assert.equal((await svc.admin.post('/api/dcim/sites/', { name: 's' })).status, 201);

    const branch = (await svc.admin.post('/api/plugins/branching/branches/', { name: 'b1' })).body;
    assert.equal(
      (await svc.admin.inBranch(branch.schema_id).patch(`${DEVICES}${id}/`, { name: 'edge-2' })).status,
      200,
    );
    assert.deepEqual(guarded, ['dcim.device', 'dcim.device', 'dcim.device', 'dcim.site']);
  });

  it('applies object permissions: 403 without, constraints hide (404) and refuse writes (403)', async () => {
    const mine = (await svc.admin.post(DEVICES, { name: 'edge-1', tenant: 'blue' })).body.id;
    const theirs = (await svc.admin.post(DEVICES, { name: 'edge-2', tenant: 'red' })).body.id;
    const nobody = await createUser(svc, 'nobody');
    assert.equal((await nobody.client.get(DEVICES)).status, 403);
    assert.equal((await nobody.client.post(DEVICES, { name: 'x' })).status, 403);

    const blue = await createUser(svc, 'blue', [
      { object_types: ['dcim.device'], actions: ['view', 'add', 'change', 'delete'], constraints: { tenant: 'blue' } },
    ]);
    const list = await blue.client.get(DEVICES);
    assert.deepEqual(
      list.body.results.map((o: { id: number }) => o.id),
      [mine],
    );
    assert.equal(list.body.count, 1);
    assert.equal((await blue.client.get(`${DEVICES}${theirs}/`)).status, 404);
    assert.equal((await blue.client.patch(`${DEVICES}${theirs}/`, { name: 'x' })).status, 404);
    assert.equal(
      (await blue.client.patch(`${DEVICES}${mine}/`, { tenant: 'red' })).status,
      403,
      'the result must satisfy the constraint too',
    );
    assert.equal((await blue.client.post(DEVICES, { name: 'x', tenant: 'red' })).status, 403);
    assert.equal((await blue.client.post(DEVICES, { name: 'x', tenant: 'blue' })).status, 201);
    assert.equal((await blue.client.get(`${DEVICES}${mine}/`)).body.tenant, 'blue');
    assert.equal((await blue.client.get('/api/dcim/sites/')).status, 403);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 3);
  });
});
