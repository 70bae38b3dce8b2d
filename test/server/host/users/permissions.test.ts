import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import { actor, createUser } from './fixtures';

const ids = (list: { results: Array<{ id: number }> }): number[] => list.results.map((o) => o.id);

describe('host: permissions', () => {
  const svc = eachTestService();

  it('creates, reads, updates (PATCH and PUT) and deletes a permission', async () => {
    const user = await createUser(svc, 'alice');
    const group = (await svc.admin.post('/api/users/groups/', { name: 'netops' })).body.id as number;
    const created = await svc.admin.post('/api/users/permissions/', {
      name: 'view devices',
      description: 'Read the device inventory',
      object_types: ['dcim.device', 'dcim.site'],
      actions: ['view'],
      constraints: { status: 'active' },
      users: [user],
      groups: [group],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as number;
    assert.deepEqual(
      { ...created.body, created: undefined, last_updated: undefined },
      {
        id,
        url: `${svc.url}/api/users/permissions/${id}/`,
        display: 'view devices',
        name: 'view devices',
        description: 'Read the device inventory',
        enabled: true,
        object_types: ['dcim.device', 'dcim.site'],
        actions: ['view'],
        constraints: { status: 'active' },
        users: [user],
        groups: [group],
        created: undefined,
        last_updated: undefined,
      },
    );
    assert.equal((await svc.admin.get(`/api/users/permissions/${id}/`)).body.name, 'view devices');

    const patched = await svc.admin.patch(`/api/users/permissions/${id}/`, {
      enabled: false,
      constraints: [{ status: 'active' }, { id__in: [1, 2] }],
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.enabled, false);
    assert.deepEqual(patched.body.constraints, [{ status: 'active' }, { id__in: [1, 2] }]);
    assert.deepEqual(patched.body.users, [user]);

    const put = await svc.admin.put(`/api/users/permissions/${id}/`, {
      name: 'devices',
      object_types: ['dcim.device'],
      actions: ['view', 'change'],
      constraints: null,
      users: [],
    });
    assert.equal(put.status, 200);
    assert.equal(put.body.constraints, null);
    assert.deepEqual(put.body.actions, ['view', 'change']);
    assert.deepEqual(put.body.users, []);

    assert.equal((await svc.admin.delete(`/api/users/permissions/${id}/`)).status, 204);
    assert.equal((await svc.admin.get(`/api/users/permissions/${id}/`)).status, 404);
    const changes = await svc.host.db
      .selectFrom('object_changes')
      .select('action')
      .where('changed_object_type', '=', 'users.objectpermission')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      changes.map((c) => c.action),
      ['create', 'update', 'update', 'delete'],
    );
  });

  it('lists with each filter: id, name, enabled, object_type, action, user_id, group_id', async () => {
    const alice = await createUser(svc, 'alice');
    const group = (await svc.admin.post('/api/users/groups/', { name: 'netops' })).body.id as number;
    const make = async (body: Record<string, unknown>): Promise<number> => {
      const res = await svc.admin.post('/api/users/permissions/', body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as number;
    };
    const p1 = await make({ name: 'p1', object_types: ['dcim.device'], actions: ['view'], users: [alice] });
    const p2 = await make({
      name: 'p2',
      object_types: ['dcim.site'],
      actions: ['view', 'change'],
      groups: [group],
      enabled: false,
    });
    const p3 = await make({
      name: 'p3',
      object_types: ['dcim.site', 'users.group'],
      actions: ['delete'],
      users: [alice],
      groups: [group],
    });

    const query = async (q: string): Promise<number[]> => {
      const res = await svc.admin.get(`/api/users/permissions/?${q}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return ids(res.body);
    };
    assert.deepEqual(await query(`id=${p1}&id=${p3}`), [p1, p3]);
    assert.deepEqual(await query('name=p2'), [p2]);
    assert.deepEqual(await query('enabled=false'), [p2]);
    assert.deepEqual(await query('object_type=dcim.site'), [p2, p3]);
    assert.deepEqual(await query('object_type=dcim.device&object_type=users.group'), [p1, p3]);
    assert.deepEqual(await query('action=change'), [p2]);
    assert.deepEqual(await query(`user_id=${alice}`), [p1, p3]);
    assert.deepEqual(await query(`group_id=${group}&object_type=dcim.site`), [p2, p3]);
    assert.deepEqual(await query('ordering=-name'), [p3, p2, p1]);
    const bad = await svc.admin.get('/api/users/permissions/?user_id=abc');
    assert.equal(bad.status, 400);
    assert.ok(bad.body.user_id);
  });

  it('refuses unknown object types, empty actions, bad constraints and unknown users or groups', async () => {
    const base = { name: 'p', object_types: ['dcim.device'], actions: ['view'] };
    const cases: Array<[Record<string, unknown>, string, RegExp?]> = [
      [{ ...base, object_types: ['dcim.spaceship'] }, 'object_types', /dcim\.spaceship/],
      [{ ...base, object_types: ['nodot'] }, 'object_types.0'],
      [{ ...base, object_types: [] }, 'object_types'],
      [{ ...base, actions: [] }, 'actions'],
      [{ ...base, actions: [''] }, 'actions.0'],
      [{ ...base, actions: 'view' }, 'actions'],
      [{ ...base, constraints: 'status=active' }, 'constraints'],
      [{ ...base, constraints: [] }, 'constraints'],
      [{ ...base, constraints: { id__in: 3 } }, 'constraints.id__in', /list/],
      [{ ...base, constraints: { id__gt: 3 } }, 'constraints.id__gt'],
      [{ ...base, constraints: [{ status: 'active' }, { site: { id: 1 } }] }, 'constraints.1.site'],
      [{ ...base, users: [4242] }, 'users', /4242/],
      [{ ...base, groups: [4343] }, 'groups', /4343/],
      [{ ...base, name: '' }, 'name'],
    ];
    for (const [body, field, message] of cases) {
      const res = await svc.admin.post('/api/users/permissions/', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(res.body[field], `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`);
      if (message) assert.match(res.body[field].join(' '), message);
    }
    assert.equal((await svc.admin.post('/api/users/permissions/', base)).status, 201);
    const dup = await svc.admin.post('/api/users/permissions/', base);
    assert.equal(dup.status, 400);
    assert.ok(dup.body.name);
    assert.equal((await svc.admin.get('/api/users/permissions/')).body.count, 1);
  });

  it('takes effect at once: granting, disabling, group membership and deletion', async () => {
    const group = (await svc.admin.post('/api/users/groups/', { name: 'viewers' })).body.id as number;
    const alice = await actor(svc, 'alice');
    const list = (): Promise<number> => alice.client.get('/api/users/groups/').then((r) => r.status);
    assert.equal(await list(), 403);

    const direct = await svc.admin.post('/api/users/permissions/', {
      name: 'direct',
      object_types: ['users.group'],
      actions: ['view'],
      users: [alice.id],
    });
    assert.equal(await list(), 200);
    await svc.admin.patch(`/api/users/permissions/${direct.body.id}/`, { enabled: false });
    assert.equal(await list(), 403);

    await svc.admin.post('/api/users/permissions/', {
      name: 'by group',
      object_types: ['users.group'],
      actions: ['view'],
      groups: [group],
    });
    assert.equal(await list(), 403);
    await svc.admin.patch(`/api/users/users/${alice.id}/`, { groups: [group] });
    assert.equal(await list(), 200);
    await svc.admin.patch(`/api/users/users/${alice.id}/`, { groups: [] });
    assert.equal(await list(), 403);

    await svc.admin.patch(`/api/users/permissions/${direct.body.id}/`, { enabled: true });
    assert.equal(await list(), 200);
    await svc.admin.delete(`/api/users/permissions/${direct.body.id}/`);
    assert.equal(await list(), 403);
  });

  it('lets a holder of users.*_objectpermission manage permissions', async () => {
    const manager = await actor(svc, 'manager', [
      { object_types: ['users.objectpermission'], actions: ['view', 'add', 'change', 'delete'] },
    ]);
    const created = await manager.client.post('/api/users/permissions/', {
      name: 'sites',
      object_types: ['dcim.site'],
      actions: ['view'],
    });
    assert.equal(created.status, 201);
    assert.equal(
      (await manager.client.patch(`/api/users/permissions/${created.body.id}/`, { actions: ['view', 'add'] })).status,
      200,
    );
    assert.equal((await manager.client.delete(`/api/users/permissions/${created.body.id}/`)).status, 204);

    const viewer = await actor(svc, 'viewer', [{ object_types: ['users.objectpermission'], actions: ['view'] }]);
    assert.equal((await viewer.client.get('/api/users/permissions/')).status, 200);
    const refused = await viewer.client.post('/api/users/permissions/', {
      name: 'mine',
      object_types: ['users.objectpermission'],
      actions: ['add'],
      users: [viewer.id],
    });
    assert.equal(refused.status, 403);
    assert.ok(refused.body.detail);
  });
});
