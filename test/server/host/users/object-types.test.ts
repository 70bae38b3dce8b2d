import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import { actor } from './fixtures';

interface TypeOut {
  id: number;
  app_label: string;
  model: string;
  display: string;
  url: string;
}
const names = (list: { results: TypeOut[] }): string[] => list.results.map((t) => `${t.app_label}.${t.model}`);

describe('host: object types', () => {
  const svc = eachTestService();

  it('lists every registered object type to any signed-in user, read-only', async () => {
    const plain = await actor(svc, 'plain');
    const list = await plain.client.get('/api/core/object-types/?limit=1000');
    assert.equal(list.status, 200);
    const all = names(list.body);
    assert.equal(list.body.count, svc.host.objectTypes.all().length);
    for (const name of [
      'dcim.site',
      'dcim.device',
      'ipam.ipaddress',
      'tenancy.tenant',
      'users.user',
      'users.objectpermission',
    ]) {
      assert.ok(all.includes(name), name);
    }
    assert.deepEqual(new Set(all), new Set(svc.host.objectTypes.all().map((t) => t.name)));
    const device = list.body.results.find((t: TypeOut) => t.app_label === 'dcim' && t.model === 'device') as TypeOut;
    assert.equal(device.display, 'Device');
    assert.equal(device.url, `${svc.url}/api/core/object-types/${device.id}/`);

    const detail = await plain.client.get(`/api/core/object-types/${device.id}/`);
    assert.deepEqual(detail.body, device);
    assert.equal((await plain.client.get('/api/core/object-types/999999/')).status, 404);
    assert.equal((await svc.admin.post('/api/core/object-types/', { app_label: 'x', model: 'y' })).status, 405);
    assert.equal((await svc.admin.delete(`/api/core/object-types/${device.id}/`)).status, 405);
    assert.equal((await svc.anonymous.get('/api/core/object-types/')).status, 403);
  });

  it('filters by app_label (repeated is OR), model and id, and refuses an unknown app_label', async () => {
    const dcim = await svc.admin.get('/api/core/object-types/?app_label=dcim&ordering=model');
    assert.deepEqual(names(dcim.body), ['dcim.cable', 'dcim.device', 'dcim.interface', 'dcim.rack', 'dcim.site']);
    const two = await svc.admin.get('/api/core/object-types/?app_label=ipam&app_label=tenancy&limit=1000');
    assert.deepEqual(
      new Set(names(two.body)),
      new Set(['ipam.vrf', 'ipam.prefix', 'ipam.ipaddress', 'ipam.vlan', 'tenancy.tenant']),
    );
    assert.deepEqual(names((await svc.admin.get('/api/core/object-types/?model=device&model=user')).body).sort(), [
      'dcim.device',
      'users.user',
    ]);
    assert.deepEqual(names((await svc.admin.get('/api/core/object-types/?app_label=users&model=group')).body), [
      'users.group',
    ]);
    const one = (await svc.admin.get('/api/core/object-types/?model=site')).body.results[0] as TypeOut;
    assert.deepEqual(names((await svc.admin.get(`/api/core/object-types/?id=${one.id}`)).body), ['dcim.site']);
    const bad = await svc.admin.get('/api/core/object-types/?app_label=nonsense');
    assert.equal(bad.status, 400);
    assert.ok(bad.body.app_label);
  });
});
