import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import { CHANGES, createBranch, createUser } from './fixtures';

describe('branching: the changes endpoint', () => {
  const svc = eachTestService();

  it('lists, retrieves and filters by branch_id, object_type and action; it is read-only', async () => {
    const a = await createBranch(svc, 'a');
    const b = await createBranch(svc, 'b');
    const site = (await svc.admin.post('/api/dcim/sites/', { name: 's' })).body;
    await svc.admin.inBranch(a.schema_id).post('/api/dcim/devices/', { name: 'd' });
    await svc.admin.inBranch(a.schema_id).patch(`/api/dcim/sites/${site.id}/`, { name: 's2' });
    await svc.admin.inBranch(b.schema_id).delete(`/api/dcim/sites/${site.id}/`);

    const all = (await svc.admin.get(CHANGES)).body;
    assert.equal(all.count, 3);
    const q = async (query: string) =>
      (await svc.admin.get(`${CHANGES}?${query}`)).body.results.map((c: any) => [c.branch, c.object_type, c.action]);
    assert.deepEqual(await q(`branch_id=${a.id}`), [
      [a.id, 'dcim.device', 'create'],
      [a.id, 'dcim.site', 'update'],
    ]);
    assert.deepEqual(await q('object_type=dcim.site'), [
      [a.id, 'dcim.site', 'update'],
      [b.id, 'dcim.site', 'delete'],
    ]);
    assert.deepEqual(await q('action=delete&action=create'), [
      [a.id, 'dcim.device', 'create'],
      [b.id, 'dcim.site', 'delete'],
    ]);
    assert.deepEqual(await q(`branch_id=${a.id}&object_type=dcim.site`), [[a.id, 'dcim.site', 'update']]);
    assert.equal((await svc.admin.get(`${CHANGES}?action=move`)).status, 400);
    assert.equal((await svc.admin.get(`${CHANGES}?branch_id=x`)).status, 400);

    const one = all.results[1];
    const detail = await svc.admin.get(`${CHANGES}${one.id}/`);
    assert.deepEqual(detail.body, one);
    assert.equal(one.url, `${svc.url}${CHANGES}${one.id}/`);
    assert.equal(one.display, 's2 (update)');
    assert.equal((await svc.admin.get(`${CHANGES}9999/`)).status, 404);
    assert.equal((await svc.admin.post(CHANGES, {})).status, 405);
    assert.equal((await svc.admin.delete(`${CHANGES}${one.id}/`)).status, 405);
  });

  it('needs view_changediff, and constraints hide changes', async () => {
    const a = await createBranch(svc, 'a');
    await svc.admin.inBranch(a.schema_id).post('/api/dcim/devices/', { name: 'd' });
    await svc.admin.inBranch(a.schema_id).post('/api/ipam/vlans/', { name: 'v' });
    const nobody = await createUser(svc, 'nobody');
    assert.equal((await nobody.client.get(CHANGES)).status, 403);
    const dcim = await createUser(svc, 'dcim', [
      { object_types: ['branching.changediff'], actions: ['view'], constraints: { object_type: 'dcim.device' } },
      { object_types: ['branching.branch', 'dcim.device', 'ipam.vlan'], actions: ['view'] },
    ]);
    const list = (await dcim.client.get(CHANGES)).body;
    assert.deepEqual(
      list.results.map((c: any) => c.object_type),
      ['dcim.device'],
    );
    const vlan = (await svc.admin.get(`${CHANGES}?object_type=ipam.vlan`)).body.results[0];
    assert.equal((await dcim.client.get(`${CHANGES}${vlan.id}/`)).status, 404);
  });

  it("shows only changes of branches the caller can view, and of objects whose view permission and constraints admit the branch's state (main's for a delete)", async () => {
    const seen = await createBranch(svc, 'seen');
    const hidden = await createBranch(svc, 'hidden');
    const lab = (await svc.admin.post('/api/dcim/devices/', { name: 'lab-1', role: 'lab' })).body;
    const core = (await svc.admin.post('/api/dcim/devices/', { name: 'core-1', role: 'core' })).body;
    const inSeen = svc.admin.inBranch(seen.schema_id);
    await inSeen.post('/api/dcim/devices/', { name: 'lab-new', role: 'lab' });
    await inSeen.post('/api/dcim/devices/', { name: 'core-new', role: 'core' });
    await inSeen.patch(`/api/dcim/devices/${lab.id}/`, { role: 'core' }); // the branch's state is core: hidden
    await inSeen.delete(`/api/dcim/devices/${core.id}/`); // main's state is core: hidden
    await inSeen.post('/api/ipam/vlans/', { name: 'v1' }); // no view on VLANs
    await svc.admin.inBranch(hidden.schema_id).post('/api/dcim/devices/', { name: 'lab-secret', role: 'lab' });

    const labOnly = await createUser(svc, 'lab-viewer', [
      { object_types: ['branching.changediff'], actions: ['view'] },
      { object_types: ['branching.branch'], actions: ['view'], constraints: { name: 'seen' } },
      { object_types: ['dcim.device'], actions: ['view'], constraints: { role: 'lab' } },
    ]);
    const list = (await labOnly.client.get(CHANGES)).body;
    assert.deepEqual(
      list.results.map((c: any) => c.object_repr),
      ['lab-new'],
    );
    assert.equal(list.count, 1);
    assert.equal((await labOnly.client.get(`${CHANGES}?limit=1&offset=0`)).body.count, 1, 'counted after filtering');
    const all = (await svc.admin.get(CHANGES)).body.results;
    assert.equal(all.length, 6);
    for (const change of all) {
      const expected = change.object_repr === 'lab-new' ? 200 : 404;
      assert.equal((await labOnly.client.get(`${CHANGES}${change.id}/`)).status, expected, change.object_repr);
    }
    // Without constraints on devices, every device change of the visible branch shows; the hidden branch's never does.
    const devices = await createUser(svc, 'device-viewer', [
      { object_types: ['branching.changediff'], actions: ['view'] },
      { object_types: ['branching.branch'], actions: ['view'], constraints: { name: 'seen' } },
      { object_types: ['dcim.device'], actions: ['view'] },
    ]);
    assert.deepEqual(
      (await devices.client.get(`${CHANGES}?ordering=id`)).body.results.map((c: any) => c.object_repr),
      ['lab-new', 'core-new', 'lab-1', 'core-1'],
    );
  });

  it('needs the object permissions to write in a branch', async () => {
    const a = await createBranch(svc, 'a');
    const viewer = await createUser(svc, 'viewer', [
      { object_types: ['dcim.device', 'branching.branch'], actions: ['view'] },
    ]);
    assert.equal((await viewer.client.inBranch(a.schema_id).post('/api/dcim/devices/', { name: 'd' })).status, 403);
    assert.equal((await viewer.client.inBranch(a.schema_id).get('/api/dcim/devices/')).status, 200);
  });
});

describe('branching: changed objects are named as people name them', () => {
  const svc = eachTestService();

  it("object_repr: a prefix by its prefix, an IP address by its address, a VLAN by name and number, an interface with its device (the branch's name, else main's, only when the caller may view it), a cable by its label", async () => {
    const a = await createBranch(svc, 'naming');
    const inA = svc.admin.inBranch(a.schema_id);
    const onMain = (await svc.admin.post('/api/dcim/devices/', { name: 'core-1' })).body;
    const inBranch = (await inA.post('/api/dcim/devices/', { name: 'sw1' })).body;
    await inA.post('/api/ipam/prefixes/', { prefix: '10.0.0.0/24', status: 'active' });
    await inA.post('/api/ipam/ip-addresses/', { address: '10.0.0.1/24' });
    await inA.post('/api/ipam/vlans/', { name: 'users', vid: 20 });
    await inA.post('/api/dcim/interfaces/', { name: 'eth0', device: inBranch.id });
    await inA.post('/api/dcim/interfaces/', { name: 'eth1', device: onMain.id });
    await inA.post('/api/dcim/interfaces/', { name: 'eth2', device: { id: 999, name: 'nested' } });
    await inA.post('/api/dcim/cables/', { label: 'uplink-7' });
    const cable = (await inA.post('/api/dcim/cables/', { type: 'cat6' })).body;
    const names = async (client = svc.admin) =>
      (await client.get(`${CHANGES}?branch_id=${a.id}&ordering=id`)).body.results.map((c: any) => c.object_repr);
    assert.deepEqual(await names(), [
      'sw1',
      '10.0.0.0/24',
      '10.0.0.1/24',
      'users (20)',
      'sw1 · eth0',
      'core-1 · eth1',
      'nested · eth2',
      'uplink-7',
      `Cable #${cable.id}`,
    ]);
    // Someone who may see interfaces but not devices learns no device's name.
    const ifOnly = await createUser(svc, 'interfaces-only', [
      { object_types: ['branching.changediff', 'branching.branch', 'dcim.interface'], actions: ['view'] },
    ]);
    assert.deepEqual(await names(ifOnly.client), [
      `Device ${inBranch.id} · eth0`,
      `Device ${onMain.id} · eth1`,
      'nested · eth2',
    ]);
  });
});
