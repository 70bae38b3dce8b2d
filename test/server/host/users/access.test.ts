import assert from 'node:assert/strict';
import { type ApiResponse, eachTestService } from '../../../support/service';
import { actor, createToken, createUser, grant } from './fixtures';

const ids = (list: { results: Array<{ id: number }> }): number[] => list.results.map((o) => o.id);

const READS = [
  '/api/users/users/',
  '/api/users/groups/',
  '/api/users/tokens/',
  '/api/users/permissions/',
  '/api/users/me/',
  '/api/core/object-types/',
];

function assertRefused(res: ApiResponse, why: string): void {
  assert.equal(res.status, 403, `${why}: ${JSON.stringify(res.body)}`);
  assert.equal(typeof res.body.detail, 'string', why);
}

describe('host: authentication refusals', () => {
  const svc = eachTestService();

  it('refuses no token, an unknown token and a malformed header with 403 and a detail', async () => {
    const unknown = svc.as('f'.repeat(40)).fromManyAddresses();
    for (const path of READS) {
      assertRefused(await svc.anonymous.get(path), `no token ${path}`);
      assertRefused(await unknown.get(path), `unknown token ${path}`);
      assertRefused(await svc.anonymous.get(path, { headers: { Authorization: 'Basic abc' } }), `bad header ${path}`);
    }
    assertRefused(await svc.anonymous.post('/api/users/groups/', { name: 'x' }), 'no token write');
    assertRefused(await unknown.post('/api/users/tokens/', {}), 'unknown token write');
  });

  it('refuses an expired token', async () => {
    const alice = await createUser(svc, 'alice');
    const key = await createToken(svc, alice, { expires: '2026-11-02T09:00:00Z' });
    assert.equal((await svc.as(key).get('/api/users/me/')).status, 200);
    svc.clock.set('2026-11-02T09:00:01Z');
    assertRefused(await svc.as(key).get('/api/users/me/'), 'expired');
    assertRefused(await svc.as(key).get('/api/users/tokens/'), 'expired');
  });

  it('refuses the tokens of an inactive user, and accepts them again once reactivated', async () => {
    const alice = await actor(svc, 'alice', [{ object_types: ['users.group'], actions: ['view'] }]);
    assert.equal((await alice.client.get('/api/users/groups/')).status, 200);
    assert.equal((await svc.admin.patch(`/api/users/users/${alice.id}/`, { is_active: false })).status, 200);
    const refused = await alice.client.get('/api/users/groups/');
    assertRefused(refused, 'inactive');
    assert.match(refused.body.detail, /inactive/i);
    await svc.admin.patch(`/api/users/users/${alice.id}/`, { is_active: true });
    assert.equal((await alice.client.get('/api/users/groups/')).status, 200);
  });

  it('lets a write_enabled:false token read but never write', async () => {
    const key = await createToken(svc, 1, { write_enabled: false });
    const reader = svc.as(key);
    for (const path of READS) assert.equal((await reader.get(path)).status, 200, path);
    const group = (await svc.admin.post('/api/users/groups/', { name: 'netops' })).body.id as number;
    const writes: Array<[string, Promise<ApiResponse>]> = [
      ['create user', reader.post('/api/users/users/', { username: 'x' })],
      ['create group', reader.post('/api/users/groups/', { name: 'x' })],
      ['update group', reader.patch(`/api/users/groups/${group}/`, { name: 'y' })],
      ['delete group', reader.delete(`/api/users/groups/${group}/`)],
      ['create token', reader.post('/api/users/tokens/', {})],
      [
        'create permission',
        reader.post('/api/users/permissions/', { name: 'p', object_types: ['dcim.site'], actions: ['view'] }),
      ],
    ];
    for (const [what, pending] of writes) assertRefused(await pending, what);
    assert.equal((await svc.admin.get(`/api/users/groups/${group}/`)).body.name, 'netops');
    assert.equal((await svc.admin.get('/api/users/users/?username=x')).body.count, 0);
  });

  it('refuses a user lacking the permission with 403', async () => {
    const plain = await actor(svc, 'plain');
    const group = (await svc.admin.post('/api/users/groups/', { name: 'netops' })).body.id as number;
    assertRefused(await plain.client.get('/api/users/users/'), 'list users');
    assertRefused(await plain.client.get('/api/users/users/1/'), 'read user');
    assertRefused(await plain.client.post('/api/users/users/', { username: 'x' }), 'create user');
    assertRefused(await plain.client.get('/api/users/groups/'), 'list groups');
    assertRefused(await plain.client.patch(`/api/users/groups/${group}/`, { name: 'x' }), 'change group');
    assertRefused(await plain.client.get('/api/users/permissions/'), 'list permissions');
    assertRefused(
      await plain.client.post('/api/users/permissions/', {
        name: 'p',
        object_types: ['dcim.site'],
        actions: ['view'],
        users: [plain.id],
      }),
      'self-grant',
    );

    const viewer = await actor(svc, 'viewer', [{ object_types: ['users.group'], actions: ['view'] }]);
    assert.equal((await viewer.client.get(`/api/users/groups/${group}/`)).status, 200);
    assertRefused(await viewer.client.patch(`/api/users/groups/${group}/`, { name: 'x' }), 'view is not change');
    assertRefused(await viewer.client.delete(`/api/users/groups/${group}/`), 'view is not delete');
    assert.equal((await svc.admin.get(`/api/users/groups/${group}/`)).body.name, 'netops');
  });
});

describe('host: permission constraints', () => {
  const svc = eachTestService();

  it('hides what a view constraint excludes: absent from the list, 404 on detail', async () => {
    const netops = (await svc.admin.post('/api/users/groups/', { name: 'netops' })).body.id as number;
    const other = (await svc.admin.post('/api/users/groups/', { name: 'other' })).body.id as number;
    const reviewers = (await svc.admin.post('/api/users/groups/', { name: 'reviewers' })).body.id as number;
    const alice = await actor(svc, 'alice', [
      { object_types: ['users.group'], actions: ['view'], constraints: { name__in: ['netops', 'reviewers'] } },
    ]);
    const list = await alice.client.get('/api/users/groups/');
    assert.equal(list.status, 200);
    assert.deepEqual(ids(list.body), [netops, reviewers]);
    assert.equal(list.body.count, 2);
    assert.equal((await alice.client.get(`/api/users/groups/${netops}/`)).status, 200);
    const hidden = await alice.client.get(`/api/users/groups/${other}/`);
    assert.equal(hidden.status, 404);
    assert.deepEqual(hidden.body, { detail: 'Not found.' });
    // Paging and filters apply to what is visible.
    const page = await alice.client.get('/api/users/groups/?limit=1&offset=1');
    assert.deepEqual(ids(page.body), [reviewers]);
    assert.equal(page.body.count, 2);
    assert.deepEqual(ids((await alice.client.get(`/api/users/groups/?id=${other}&id=${netops}`)).body), [netops]);
    // A list of constraint objects is OR.
    await grant(
      svc,
      { users: [alice.id] },
      { object_types: ['users.group'], actions: ['view'], constraints: [{ id: other }] },
    );
    assert.deepEqual(ids((await alice.client.get('/api/users/groups/')).body), [netops, other, reviewers]);
  });

  it('resolves "$user" to the caller: users see only themselves, tokens only their own', async () => {
    const bob = await createUser(svc, 'bob');
    const alice = await actor(svc, 'alice', [
      { object_types: ['users.user'], actions: ['view', 'change'], constraints: { id: '$user' } },
      { object_types: ['users.token'], actions: ['view'], constraints: { user: '$user' } },
    ]);
    const list = await alice.client.get('/api/users/users/');
    assert.deepEqual(ids(list.body), [alice.id]);
    assert.equal((await alice.client.get(`/api/users/users/${bob}/`)).status, 404);
    const renamed = await alice.client.patch(`/api/users/users/${alice.id}/`, { first_name: 'Alice' });
    assert.equal(renamed.status, 200);
    assert.equal((await alice.client.patch(`/api/users/users/${bob}/`, { first_name: 'Bob' })).status, 404);

    await createToken(svc, bob);
    const tokens = await alice.client.get('/api/users/tokens/');
    assert.ok(tokens.body.results.every((t: { user: number }) => t.user === alice.id));
    assert.equal(tokens.body.count, 1);

    const bobKey = await createToken(svc, bob);
    await grant(
      svc,
      { users: [bob] },
      { object_types: ['users.user'], actions: ['view'], constraints: { id: '$user' } },
    );
    assert.deepEqual(ids((await svc.as(bobKey).get('/api/users/users/')).body), [bob]);
  });

  it("refuses a write the change permission's constraint excludes, though the object is visible (403)", async () => {
    const netops = (await svc.admin.post('/api/users/groups/', { name: 'netops' })).body.id as number;
    const other = (await svc.admin.post('/api/users/groups/', { name: 'other' })).body.id as number;
    const alice = await actor(svc, 'alice', [
      { object_types: ['users.group'], actions: ['view'] },
      { object_types: ['users.group'], actions: ['change', 'delete'], constraints: { name: 'netops' } },
    ]);
    assert.equal((await alice.client.get(`/api/users/groups/${other}/`)).status, 200);
    assertRefused(
      await alice.client.patch(`/api/users/groups/${other}/`, { description: 'mine now' }),
      'change excluded',
    );
    assertRefused(
      await alice.client.put(`/api/users/groups/${other}/`, { name: 'other', description: 'mine now' }),
      'put excluded',
    );
    assertRefused(await alice.client.delete(`/api/users/groups/${other}/`), 'delete excluded');
    assert.equal((await svc.admin.get(`/api/users/groups/${other}/`)).body.description, '');

    assert.equal((await alice.client.patch(`/api/users/groups/${netops}/`, { description: 'ours' })).status, 200);
    // The constraint must hold after the change too: renaming netops away is refused and rolled back.
    assertRefused(
      await alice.client.patch(`/api/users/groups/${netops}/`, { name: 'renamed' }),
      'change leaving the constraint',
    );
    assert.equal((await svc.admin.get(`/api/users/groups/${netops}/`)).body.name, 'netops');
    assert.equal((await alice.client.delete(`/api/users/groups/${netops}/`)).status, 204);
  });

  it('applies an add constraint to the object being created', async () => {
    const alice = await actor(svc, 'alice', [
      { object_types: ['users.group'], actions: ['view', 'add'], constraints: { name__in: ['allowed'] } },
    ]);
    assert.equal((await alice.client.post('/api/users/groups/', { name: 'allowed' })).status, 201);
    assertRefused(await alice.client.post('/api/users/groups/', { name: 'forbidden' }), 'add excluded');
    assert.equal((await svc.admin.get('/api/users/groups/?name=forbidden')).body.count, 0);
  });
});
