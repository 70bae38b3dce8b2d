import assert from 'node:assert/strict';
import { hashPassword, verifyPassword } from '../../../../server/host/core/secrets';
import { createHash, randomBytes, scryptSync } from 'node:crypto';
import { ManualClock } from '../../../../server/host/core/clock';
import { bootstrapAdmin } from '../../../../server/host/users/bootstrap';
import { duringSchemaChange, onPostgres } from '../../../support/database';
import { ADMIN_TOKEN, eachTestService, instancesForEachTest, type TestService } from '../../../support/service';
import { actor, createToken, createUser, grant } from './fixtures';

const ids = (list: { results: Array<{ id: number }> }): number[] => list.results.map((o) => o.id);
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('host: tokens', () => {
  const svc = eachTestService();

  it('lets any user create, list, read, update and delete their own tokens, the key shown only once', async () => {
    const alice = await actor(svc, 'alice');
    const created = await alice.client.post('/api/users/tokens/', { description: 'laptop' });
    assert.equal(created.status, 201);
    const key = created.body.key as string;
    assert.match(key, /^[0-9a-f]{40}$/);
    assert.equal(created.body.user, alice.id);
    assert.equal(created.body.write_enabled, true);
    assert.equal(created.body.expires, null);
    assert.equal(created.body.description, 'laptop');
    assert.equal(created.body.last_used, null);
    assert.equal(created.body.url, `${svc.url}/api/users/tokens/${created.body.id}/`);
    assert.ok(created.body.display.startsWith(key.slice(0, 6)));
    assert.ok(!created.body.display.includes(key));

    const detail = await alice.client.get(`/api/users/tokens/${created.body.id}/`);
    assert.equal(detail.status, 200);
    assert.equal('key' in detail.body, false);
    const list = await alice.client.get('/api/users/tokens/');
    assert.equal(list.status, 200);
    assert.equal(list.body.count, 2);
    for (const token of list.body.results) assert.equal('key' in token, false);
    assert.ok(!JSON.stringify(list.body).includes(key));

    const fresh = svc.as(key);
    assert.equal((await fresh.get('/api/users/me/')).body.username, 'alice');
    assert.notEqual((await alice.client.get(`/api/users/tokens/${created.body.id}/`)).body.last_used, null);

    const patched = await alice.client.patch(`/api/users/tokens/${created.body.id}/`, {
      description: 'old laptop',
      write_enabled: false,
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.description, 'old laptop');
    assert.equal(patched.body.write_enabled, false);
    assert.equal('key' in patched.body, false);
    assert.equal((await fresh.post('/api/users/tokens/', {})).status, 403);

    const put = await alice.client.put(`/api/users/tokens/${created.body.id}/`, {
      description: 'laptop',
      write_enabled: true,
    });
    assert.equal(put.status, 200);
    assert.equal(put.body.write_enabled, true);

    assert.equal((await alice.client.delete(`/api/users/tokens/${created.body.id}/`)).status, 204);
    assert.equal((await alice.client.get(`/api/users/tokens/${created.body.id}/`)).status, 404);
    assert.equal((await fresh.get('/api/users/me/')).status, 403);
  });

  it('stores keys hashed: no column holds the key', async () => {
    const key = 'abcdefabcdefabcdefabcdefabcdefabcdef1234';
    const created = await svc.admin.post('/api/users/tokens/', { key, description: 'given key' });
    assert.equal(created.status, 201);
    assert.equal(created.body.key, key);
    const row = await svc.host.db
      .selectFrom('tokens')
      .selectAll()
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_hash, sha256(key));
    assert.notEqual(row.key_hash, key);
    for (const [column, value] of Object.entries(row)) {
      assert.ok(!String(value).includes(key), `column ${column} holds the key`);
    }
    assert.equal((await svc.as(key).get('/api/users/me/')).status, 200);

    const again = await svc.admin.post('/api/users/tokens/', { key });
    assert.equal(again.status, 400);
    assert.ok(again.body.key);
    const short = await svc.admin.post('/api/users/tokens/', { key: 'short' });
    assert.equal(short.status, 400);
    assert.ok(short.body.key);
    const rekey = await svc.admin.patch(`/api/users/tokens/${created.body.id}/`, { key: 'x'.repeat(40) });
    assert.equal(rekey.status, 400);
    assert.ok(rekey.body.key);
  });

  it('filters by id, user_id (including me) and write_enabled', async () => {
    const bob = await createUser(svc, 'bob');
    const t1 = (await svc.admin.post('/api/users/tokens/', { user: bob })).body.id as number;
    const t2 = (await svc.admin.post('/api/users/tokens/', { user: bob, write_enabled: false })).body.id as number;
    const adminToken = 1;
    assert.deepEqual(ids((await svc.admin.get(`/api/users/tokens/?user_id=${bob}`)).body), [t1, t2]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/tokens/?user_id=me')).body), [adminToken]);
    assert.deepEqual(ids((await svc.admin.get(`/api/users/tokens/?id=${t2}&id=${adminToken}`)).body), [adminToken, t2]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/tokens/?write_enabled=false')).body), [t2]);
    assert.deepEqual(ids((await svc.admin.get(`/api/users/tokens/?user_id=${bob}&write_enabled=true`)).body), [t1]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/tokens/?ordering=-id')).body), [t2, t1, adminToken]);
    assert.equal((await svc.admin.get('/api/users/tokens/?write_enabled=maybe')).status, 400);
  });

  it('shows a user only their own tokens unless they hold users.view_token', async () => {
    const alice = await actor(svc, 'alice');
    const bob = await actor(svc, 'bob');
    const aliceTokens = ids((await alice.client.get('/api/users/tokens/')).body);
    assert.equal(aliceTokens.length, 1);
    const bobToken = ids((await bob.client.get('/api/users/tokens/')).body)[0]!;
    assert.equal((await alice.client.get(`/api/users/tokens/${bobToken}/`)).status, 404);
    assert.equal((await alice.client.delete(`/api/users/tokens/${bobToken}/`)).status, 404);

    await grant(svc, { users: [alice.id] }, { object_types: ['users.token'], actions: ['view'] });
    const all = await alice.client.get('/api/users/tokens/');
    assert.equal(all.body.count, 3);
    assert.equal((await alice.client.get(`/api/users/tokens/${bobToken}/`)).status, 200);
    // Seeing is not deleting.
    assert.equal((await alice.client.delete(`/api/users/tokens/${bobToken}/`)).status, 403);
    assert.equal((await svc.admin.get('/api/users/tokens/')).body.count, 3);
  });

  it("creates a token for someone else only with users.add_token, and never by moving one's own", async () => {
    const alice = await actor(svc, 'alice');
    const bob = await createUser(svc, 'bob');
    const refused = await alice.client.post('/api/users/tokens/', { user: bob });
    assert.equal(refused.status, 403);
    assert.ok(refused.body.detail);
    const own = await alice.client.post('/api/users/tokens/', { user: alice.id });
    assert.equal(own.status, 201);
    const moved = await alice.client.patch(`/api/users/tokens/${own.body.id}/`, { user: bob });
    assert.equal(moved.status, 403);
    assert.equal((await svc.admin.get(`/api/users/tokens/${own.body.id}/`)).body.user, alice.id);
    assert.equal((await svc.admin.get(`/api/users/tokens/?user_id=${bob}`)).body.count, 0);

    await grant(svc, { users: [alice.id] }, { object_types: ['users.token'], actions: ['add'] });
    const allowed = await alice.client.post('/api/users/tokens/', { user: bob });
    assert.equal(allowed.status, 201);
    assert.equal(allowed.body.user, bob);
    const unknownUser = await alice.client.post('/api/users/tokens/', { user: 98765 });
    assert.equal(unknownUser.status, 400);
    assert.ok(unknownUser.body.user);
  });

  it('honours constraints on users.add_token: {"user__in": [...]} limits whom tokens are made for', async () => {
    const alice = await actor(svc, 'alice');
    const bob = await createUser(svc, 'bob');
    const carol = await createUser(svc, 'carol');
    await grant(
      svc,
      { users: [alice.id] },
      { object_types: ['users.token'], actions: ['add'], constraints: { user__in: [bob] } },
    );
    assert.equal((await alice.client.post('/api/users/tokens/', { user: bob })).status, 201);
    assert.equal((await alice.client.post('/api/users/tokens/', { user: carol })).status, 403);
    assert.equal((await svc.admin.get(`/api/users/tokens/?user_id=${carol}`)).body.count, 0);
  });

  it('refuses an expired token with 403', async () => {
    const alice = await createUser(svc, 'alice');
    const expires = new Date(svc.clock.now().getTime() + 3_600_000).toISOString();
    const key = await createToken(svc, alice, { expires });
    const client = svc.as(key);
    assert.equal((await client.get('/api/users/me/')).status, 200);
    svc.clock.advance(2 * 3_600_000);
    const expired = await client.get('/api/users/me/');
    assert.equal(expired.status, 403);
    assert.match(expired.body.detail, /expired/i);
    assert.equal((await svc.admin.post('/api/users/tokens/', { expires: 'tomorrow' })).status, 400);
  });
});

describe('host: tokens/provision', () => {
  const svc = eachTestService();

  it('provisions a token from a username and password, with no token', async () => {
    const id = await createUser(svc, 'alice', { password: 'correct horse' });
    const res = await svc.anonymous.post('/api/users/tokens/provision/', {
      username: 'alice',
      password: 'correct horse',
      description: 'ci',
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.user, id);
    assert.equal(res.body.description, 'ci');
    assert.match(res.body.key, /^[0-9a-f]{40}$/);
    assert.equal((await svc.as(res.body.key).get('/api/users/me/')).body.id, id);
    const change = await svc.host.db
      .selectFrom('object_changes')
      .selectAll()
      .where('changed_object_type', '=', 'users.token')
      .where('changed_object_id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    assert.equal(change.user_name, 'alice');
    assert.ok(!JSON.stringify(change).includes(res.body.key));
  });

  it('refuses bad credentials and inactive users with 403 and a detail', async () => {
    await createUser(svc, 'alice', { password: 'correct horse' });
    await createUser(svc, 'nopass');
    await createUser(svc, 'gone', { password: 'correct horse', is_active: false });
    const attempts = [
      { username: 'alice', password: 'wrong' },
      { username: 'nobody', password: 'correct horse' },
      { username: 'nopass', password: '' },
      { username: 'gone', password: 'correct horse' },
    ];
    for (const body of attempts) {
      const res = await svc.anonymous.post('/api/users/tokens/provision/', body);
      assert.equal(res.status, 403, JSON.stringify(body));
      assert.equal(typeof res.body.detail, 'string');
      assert.equal(res.body.key, undefined);
    }
    const inactive = await svc.anonymous.post('/api/users/tokens/provision/', {
      username: 'gone',
      password: 'correct horse',
    });
    assert.match(inactive.body.detail, /inactive/i);
    assert.equal((await svc.host.db.selectFrom('tokens').select('id').execute()).length, 1);
    assert.equal((await svc.anonymous.post('/api/users/tokens/provision/', { username: 'alice' })).status, 400);
  });

  const PROVISION = '/api/users/tokens/provision/';
  const guess = (from: string, username: string, password: string) =>
    svc.anonymous.from(from).post(PROVISION, { username, password });

  it('throttles failed provisioning per client address: after 10 failures within 60 s, 429 with Retry-After until the window passes', async () => {
    await createUser(svc, 'alice', { password: 'correct horse' });
    for (let i = 0; i < 10; i++)
      assert.equal((await guess('127.0.0.2', `user${i}`, 'guess')).status, 403, `attempt ${i + 1}`);
    svc.clock.advance(30_000);
    const refused = await guess('127.0.0.2', 'alice', 'correct horse');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '30');
    assert.match(refused.body.detail, /Too many failed attempts/);
    assert.equal(refused.body.key, undefined);
    // Another address is unaffected; once the window has passed, the first one is too.
    assert.equal((await guess('127.0.0.3', 'alice', 'correct horse')).status, 201);
    svc.clock.advance(30_001);
    assert.equal((await guess('127.0.0.2', 'alice', 'correct horse')).status, 201);
  });

  it('throttles failed provisioning per username: the addresses guessing it get 429, a correct password from another address is unaffected', async () => {
    await createUser(svc, 'alice', { password: 'correct horse' });
    // Ten addresses, one guess each: no address reaches its own limit, the username does.
    for (let i = 0; i < 10; i++) assert.equal((await guess(`127.0.1.${i + 1}`, 'alice', `guess ${i}`)).status, 403);
    for (let i = 0; i < 10; i++) {
      const again = await guess(`127.0.1.${i + 1}`, 'alice', 'correct horse');
      assert.equal(again.status, 429, `address ${i + 1}`);
      assert.ok(Number(again.headers.get('retry-after')) > 0);
    }
    assert.equal((await guess('127.0.2.1', 'alice', 'correct horse')).status, 201, 'the user at their own machine');
    // Other usernames from the guessing addresses are still checked.
    await createUser(svc, 'bob', { password: 'battery staple' });
    assert.equal((await guess('127.0.1.1', 'bob', 'battery staple')).status, 201);
  });

  it('throttles failed token authentication per client address: after 10 bad tokens, 429 with Retry-After even for a good token from that address', async () => {
    const bad = svc.as('0'.repeat(40)).from('127.0.0.4');
    for (let i = 0; i < 10; i++) assert.equal((await bad.get('/api/users/me/')).status, 403, `attempt ${i + 1}`);
    const refused = await svc.admin.from('127.0.0.4').get('/api/users/me/');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '60');
    assert.equal((await bad.get('/api/status/')).status, 429, 'public routes too, when a token is sent');
    assert.equal(
      (await svc.anonymous.from('127.0.0.4').get('/api/status/')).status,
      200,
      'no token, nothing to throttle',
    );
    assert.equal(
      (await svc.admin.from('127.0.0.5').get('/api/users/me/')).status,
      200,
      'another address is unaffected',
    );
    svc.clock.advance(60_001);
    assert.equal((await svc.admin.from('127.0.0.4').get('/api/users/me/')).status, 200);
  });

  it('hashes and checks passwords off the event loop: other callbacks run while scrypt works', async () => {
    const stored = await hashPassword('correct horse');
    for (const work of [() => hashPassword('correct horse'), () => verifyPassword('correct horse', stored)]) {
      let ranMeanwhile = false;
      setImmediate(() => {
        ranMeanwhile = true;
      });
      const result = await work();
      assert.ok(result, 'a hash, or a match');
      assert.equal(ranMeanwhile, true);
    }
    assert.equal(await verifyPassword('wrong', stored), false);
  });

  it("checks a password against a hash stored with scrypt's defaults, and several hashes at once each get their own answer", async () => {
    const salt = randomBytes(16);
    const stored = `scrypt$${salt.toString('hex')}$${scryptSync('correct horse', salt, 32).toString('hex')}`;
    const answers = await Promise.all(
      ['correct horse', 'wrong', 'correct horse', 'Correct horse'].map((p) => verifyPassword(p, stored)),
    );
    assert.deepEqual(answers, [true, false, true, false]);
    const hashes = await Promise.all(['a', 'b', 'c'].map((p) => hashPassword(p)));
    assert.deepEqual(await Promise.all(hashes.map((h, i) => verifyPassword(['a', 'b', 'c'][i]!, h))), [
      true,
      true,
      true,
    ]);
    assert.equal(await verifyPassword('b', hashes[0]!), false);
  });
});

describe('host: the password throttle across instances on one database', () => {
  const [a, b] = instancesForEachTest();

  it('counts failed passwords once for every instance: guesses spread over two instances reach the limit together, and the window passes for both', async () => {
    await createUser(a, 'alice', { password: 'correct horse' });
    const guess = (svc: TestService, password: string) =>
      svc.anonymous.from('127.0.3.1').post('/api/users/tokens/provision/', { username: 'alice', password });
    for (let i = 0; i < 10; i++) assert.equal((await guess(i % 2 ? a : b, `guess ${i}`)).status, 403, `guess ${i + 1}`);
    for (const svc of [a, b]) {
      const refused = await guess(svc, 'correct horse');
      assert.equal(refused.status, 429, 'the eleventh attempt, on either instance');
      assert.equal(refused.headers.get('retry-after'), '60');
    }
    for (const svc of [a, b]) svc.clock.advance(60_001);
    assert.equal((await guess(b, 'correct horse')).status, 201);
    // Failures older than the window are deleted as new ones come.
    await guess(a, 'wrong again');
    const rows = await a.host.db.selectFrom('credential_failures').select('at').execute();
    assert.ok(
      rows.every((r) => Number(r.at) === Number(rows[0]!.at)),
      'only the last failure is kept',
    );
    assert.equal(rows.length, 3, 'one row per key: address, username, both');
  });
});

if (onPostgres) {
  describe('host: the administrator bootstrap while another instance changes the tables (PostgreSQL)', () => {
    const svc = eachTestService();

    it('runs again on statements prepared afresh when a statement prepared before the change is stale', async () => {
      const undo = (schema: string) => [`alter table "${schema}".tokens alter column user_id type bigint`];
      await duringSchemaChange(svc.host.db, undo, async ({ own, admin, schema }) => {
        const clock = new ManualClock();
        assert.equal(await bootstrapAdmin(own.db, clock, ADMIN_TOKEN), null);
        // A rolling upgrade: another instance's migration changes a column the bootstrap reads.
        await admin.query(`alter table "${schema}".tokens alter column user_id type integer`);
        assert.equal(await bootstrapAdmin(own.db, clock, ADMIN_TOKEN), null);
        assert.equal((await svc.admin.get('/api/users/users/?username=admin')).body.results[0].is_superuser, true);
      });
    });
  });
}
