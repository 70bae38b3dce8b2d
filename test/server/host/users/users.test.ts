import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import { actor, createUser } from './fixtures';

const ids = (list: { results: Array<{ id: number }> }): number[] => list.results.map((o) => o.id);

describe('host: users', () => {
  const svc = eachTestService();

  it('creates, reads, updates (PATCH and PUT) and deletes a user, never showing the password', async () => {
    const group = await svc.admin.post('/api/users/groups/', { name: 'netops' });
    const created = await svc.admin.post('/api/users/users/', {
      username: 'alice',
      password: 's3cret-pass',
      first_name: 'Alice',
      email: 'alice@example.com',
      groups: [group.body.id],
    });
    assert.equal(created.status, 201);
    const id = created.body.id as number;
    assert.equal(created.body.display, 'alice');
    assert.equal(created.body.url, `${svc.url}/api/users/users/${id}/`);
    assert.deepEqual(created.body.groups, [group.body.id]);
    assert.equal(created.body.is_active, true);
    assert.equal(created.body.is_superuser, false);
    assert.equal('password' in created.body, false);
    assert.ok(created.body.created && created.body.last_updated);

    const read = await svc.admin.get(`/api/users/users/${id}/`);
    assert.equal(read.status, 200);
    assert.equal(read.body.first_name, 'Alice');
    assert.equal('password' in read.body, false);
    const stored = await svc.host.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.match(stored.password_hash ?? '', /^scrypt\$/);
    assert.ok(!stored.password_hash?.includes('s3cret-pass'));

    const patched = await svc.admin.patch(`/api/users/users/${id}/`, { last_name: 'Smith', groups: [] });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.last_name, 'Smith');
    assert.equal(patched.body.first_name, 'Alice');
    assert.deepEqual(patched.body.groups, []);

    const put = await svc.admin.put(`/api/users/users/${id}/`, { username: 'alice2', is_active: false });
    assert.equal(put.status, 200);
    assert.equal(put.body.username, 'alice2');
    assert.equal(put.body.is_active, false);

    assert.equal((await svc.admin.delete(`/api/users/users/${id}/`)).status, 204);
    assert.equal((await svc.admin.get(`/api/users/users/${id}/`)).status, 404);
    const changes = await svc.host.db
      .selectFrom('object_changes')
      .select('action')
      .where('changed_object_type', '=', 'users.user')
      .where('changed_object_id', '=', id)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      changes.map((c) => c.action),
      ['create', 'update', 'update', 'delete'],
    );
  });

  it('lists with each filter: id, username, is_superuser, is_active, group_id', async () => {
    const g1 = (await svc.admin.post('/api/users/groups/', { name: 'g1' })).body.id as number;
    const g2 = (await svc.admin.post('/api/users/groups/', { name: 'g2' })).body.id as number;
    const a = await createUser(svc, 'a', { groups: [g1] });
    const b = await createUser(svc, 'b', { groups: [g2], is_active: false });
    const c = await createUser(svc, 'c', { groups: [g1, g2] });
    const admin = 1;

    assert.deepEqual(ids((await svc.admin.get(`/api/users/users/?id=${a}&id=${c}`)).body), [a, c]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/users/?id=me')).body), [admin]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/users/?username=b')).body), [b]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/users/?is_superuser=true')).body), [admin]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/users/?is_superuser=false')).body), [a, b, c]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/users/?is_active=false')).body), [b]);
    assert.deepEqual(ids((await svc.admin.get(`/api/users/users/?group_id=${g1}`)).body), [a, c]);
    assert.deepEqual(ids((await svc.admin.get(`/api/users/users/?group_id=${g2}&is_active=true`)).body), [c]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/users/?ordering=-username&is_superuser=false')).body), [
      c,
      b,
      a,
    ]);
    const all = await svc.admin.get('/api/users/users/');
    assert.equal(all.body.count, 4);
  });

  it('refuses bad input with field errors', async () => {
    await createUser(svc, 'taken');
    const cases: Array<[unknown, string]> = [
      [{ username: 'taken' }, 'username'],
      [{ username: '' }, 'username'],
      [{ username: 'has space' }, 'username'],
      [{ username: 'x', groups: [4242] }, 'groups'],
      [{ username: 'x', email: 'not-an-email' }, 'email'],
      [{ username: 'x', is_active: 'yes' }, 'is_active'],
      [{ username: 'x', unknown: 1 }, 'unknown'],
      [{}, 'username'],
    ];
    for (const [body, field] of cases) {
      const res = await svc.admin.post('/api/users/users/', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(res.body[field], `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`);
    }
    const groupsError = await svc.admin.post('/api/users/users/', { username: 'x', groups: [4242] });
    assert.match(groupsError.body.groups[0], /4242/);
  });

  it('records a password-only change in the changelog and lets the new password provision a token', async () => {
    const id = await createUser(svc, 'bob', { password: 'first-password' });
    const res = await svc.admin.patch(`/api/users/users/${id}/`, { password: 'second-password' });
    assert.equal(res.status, 200);
    const updates = await svc.host.db
      .selectFrom('object_changes')
      .selectAll()
      .where('changed_object_type', '=', 'users.user')
      .where('action', '=', 'update')
      .execute();
    assert.equal(updates.length, 1);
    assert.ok(!JSON.stringify(updates[0]).includes('second-password'));
    assert.equal(
      (await svc.anonymous.post('/api/users/tokens/provision/', { username: 'bob', password: 'first-password' }))
        .status,
      403,
    );
    assert.equal(
      (await svc.anonymous.post('/api/users/tokens/provision/', { username: 'bob', password: 'second-password' }))
        .status,
      201,
    );
  });

  it('lets a holder of users.* permissions manage users, but only superusers grant or touch superuser status', async () => {
    const manager = await actor(svc, 'manager', [
      { object_types: ['users.user'], actions: ['view', 'add', 'change', 'delete'] },
    ]);
    const created = await manager.client.post('/api/users/users/', { username: 'carol' });
    assert.equal(created.status, 201);
    assert.equal(
      (await manager.client.patch(`/api/users/users/${created.body.id}/`, { first_name: 'Carol' })).status,
      200,
    );

    const escalate = await manager.client.post('/api/users/users/', { username: 'root2', is_superuser: true });
    assert.equal(escalate.status, 403);
    assert.ok(escalate.body.detail);
    assert.equal((await manager.client.patch(`/api/users/users/${manager.id}/`, { is_superuser: true })).status, 403);
    assert.equal((await manager.client.patch('/api/users/users/1/', { password: 'taken-over' })).status, 403);
    assert.equal((await manager.client.delete('/api/users/users/1/')).status, 403);
    assert.equal((await svc.admin.get('/api/users/users/1/')).body.is_superuser, true);

    assert.equal((await manager.client.delete(`/api/users/users/${created.body.id}/`)).status, 204);
  });

  it('drops a deleted user from the permissions that named it', async () => {
    const id = await createUser(svc, 'dave');
    const other = await createUser(svc, 'erin');
    const perm = await svc.admin.post('/api/users/permissions/', {
      name: 'p',
      object_types: ['users.group'],
      actions: ['view'],
      users: [id, other],
    });
    assert.equal((await svc.admin.delete(`/api/users/users/${id}/`)).status, 204);
    assert.deepEqual((await svc.admin.get(`/api/users/permissions/${perm.body.id}/`)).body.users, [other]);
  });
});

describe('host: users/me', () => {
  const svc = eachTestService();

  it('answers the caller as a user object, to any signed-in user', async () => {
    const group = (await svc.admin.post('/api/users/groups/', { name: 'viewers' })).body.id as number;
    const plain = await actor(svc, 'plain', [], { groups: [group] });
    const me = await plain.client.get('/api/users/me/');
    assert.equal(me.status, 200);
    assert.equal(me.body.id, plain.id);
    assert.equal(me.body.username, 'plain');
    assert.equal(me.body.display, 'plain');
    assert.equal(me.body.is_superuser, false);
    assert.deepEqual(me.body.groups, [group]);

    const admin = await svc.admin.get('/api/users/me/');
    assert.equal(admin.body.username, 'admin');
    assert.equal(admin.body.is_superuser, true);

    const anonymous = await svc.anonymous.get('/api/users/me/');
    assert.equal(anonymous.status, 403);
    assert.ok(anonymous.body.detail);
  });
});
