import assert from 'node:assert/strict';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { ReadMemo } from '../../../../server/host/core/read-memo';
import { sql } from 'kysely';
import { instancesForEachTest, startService, type TestService } from '../../../support/service';
import { actor } from '../users/fixtures';

/** The version row as stored. */
async function versionRow(svc: TestService): Promise<number> {
  return (await svc.host.db.selectFrom('data_version').select('version').where('id', '=', 1).executeTakeFirstOrThrow()).version;
}

function ctxOf(svc: TestService) {
  return createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
}

describe('the data version and the read memo (one invalidation mechanism)', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startService();
  });
  afterEach(async () => {
    await svc.close();
  });

  it('moves once per committed write transaction, not for reads, failed writes or read-only transactions', async () => {
    const v0 = await versionRow(svc);
    assert.equal((await svc.admin.get('/api/users/users/')).status, 200);
    assert.equal(await versionRow(svc), v0);
    assert.equal((await svc.admin.post('/api/users/users/', { username: 'alice' })).status, 201);
    const v1 = await versionRow(svc);
    assert.equal(v1, v0 + 1);
    // Refused (the name is taken): rolled back, the version with it.
    assert.equal((await svc.admin.post('/api/users/users/', { username: 'alice' })).status, 400);
    assert.equal(await versionRow(svc), v1);
    await inTransaction(ctxOf(svc), async (tx) => {
      await tx.db.selectFrom('users').select('id').execute();
    });
    assert.equal(await versionRow(svc), v1);
  });

  it('serves an answer again until any write commits, then computes it afresh', async () => {
    const memo = new ReadMemo();
    const ctx = ctxOf(svc);
    let computed = 0;
    const read = () => memo.get(ctx, 'k', async () => ++computed);
    assert.equal(await read(), 1);
    assert.equal(await read(), 1);
    await inTransaction(ctx, async (tx) => {
      await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
    });
    assert.equal(await read(), 2);
    // A write on the service's handle outside any transaction counts too.
    await svc.host.db.updateTable('users').set({ first_name: 'B' }).where('username', '=', 'admin').execute();
    assert.equal(await read(), 3);
    assert.equal(await read(), 3);
  });

  it('inside a transaction, keeps answers for that transaction until it writes', async () => {
    const memo = new ReadMemo();
    let computed = 0;
    await inTransaction(ctxOf(svc), async (tx) => {
      const read = () => memo.get(tx, 'k', async () => ++computed);
      assert.equal(await read(), 1);
      assert.equal(await read(), 1);
      await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
      assert.equal(await read(), 2);
      assert.equal(await read(), 2);
    });
    // Nothing of the transaction is served outside it.
    assert.equal(await memo.get(ctxOf(svc), 'k', async () => ++computed), 3);
  });

  it('inside a transaction, keeps an answer that names the tables it reads across writes of other tables', async () => {
    const memo = new ReadMemo();
    let computed = 0;
    await inTransaction(ctxOf(svc), async (tx) => {
      const read = () => memo.get(tx, 'k', async () => ++computed, ['groups']);
      assert.equal(await read(), 1);
      await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
      assert.equal(await read(), 1);
      await tx.db.insertInto('groups').values({ name: 'g', description: '', created: 'now', last_updated: 'now' }).execute();
      assert.equal(await read(), 2);
      await tx.db.deleteFrom('groups').where('name', '=', 'g').execute();
      assert.equal(await read(), 3);
      // Raw SQL cannot say which table it writes: it counts for every table.
      await sql`update users set last_name = 'B' where username = 'admin'`.execute(tx.db);
      assert.equal(await read(), 4);
      await sql`select count(*) from users`.execute(tx.db);
      assert.equal(await read(), 4);
    });
  });

  it('shares an answer naming its tables between transactions that did not write them and reads outside', async () => {
    const memo = new ReadMemo(100, svc.host.db);
    const ctx = ctxOf(svc);
    let computed = 0;
    const read = (scope: { db: typeof svc.host.db; inTransaction: boolean }) => memo.get(scope, 'k', async () => ++computed, ['groups']);
    assert.equal(await read(ctx), 1);
    await inTransaction(ctx, async (tx) => {
      assert.equal(await read(tx), 1);
      await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
      assert.equal(await read(tx), 1);
      await tx.db.insertInto('groups').values({ name: 'g', description: '', created: 'now', last_updated: 'now' }).execute();
      // Its own write: computed again, for this transaction alone.
      assert.equal(await read(tx), 2);
    });
    assert.equal(await read(ctx), 3);
    // Computed inside a transaction that never writes the table: kept for the reads after it.
    await inTransaction(ctx, async (tx) => {
      await tx.db.updateTable('users').set({ first_name: 'B' }).where('username', '=', 'admin').execute();
      assert.equal(await read(tx), 3);
    });
    assert.equal(await read(ctx), 3);
    await svc.host.db.deleteFrom('groups').where('name', '=', 'g').execute();
    assert.equal(await read(ctx), 4);
  });

  it('is bounded: the least recently used answer goes first', async () => {
    const memo = new ReadMemo(3);
    const ctx = ctxOf(svc);
    const computed: string[] = [];
    const read = (key: string) => memo.get(ctx, key, async () => (computed.push(key), key));
    for (const key of ['a', 'b', 'c']) await read(key);
    await read('a');
    await read('d');
    assert.equal(memo.size, 3);
    await read('a');
    await read('c');
    await read('d');
    assert.deepEqual(computed, ['a', 'b', 'c', 'd']);
    await read('b');
    assert.deepEqual(computed, ['a', 'b', 'c', 'd', 'b']);
  });
});

describe('several instances on one database', () => {
  let a: TestService;
  let b: TestService;
  instancesForEachTest((first, second) => {
    a = first;
    b = second;
  });

  it("keeps an answer naming its tables across another instance's commits of other tables, never across one of them", async () => {
    const memo = new ReadMemo(100, b.host.db);
    let computed = 0;
    const read = (scope: { db: typeof b.host.db; inTransaction: boolean }) => memo.get(scope, 'k', async () => ++computed, ['groups']);
    assert.equal(await read(ctxOf(b)), 1);
    await inTransaction(ctxOf(a), (tx) => tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute());
    assert.equal(await read(ctxOf(b)), 1);
    await inTransaction(ctxOf(b), async (tx) => assert.equal(await read(tx), 1));
    await inTransaction(ctxOf(a), (tx) => tx.db.insertInto('groups').values({ name: 'g', description: '', created: 'now', last_updated: 'now' }).execute());
    assert.equal(await read(ctxOf(b)), 2);
    await inTransaction(ctxOf(a), (tx) => tx.db.deleteFrom('groups').where('name', '=', 'g').execute());
    await inTransaction(ctxOf(b), async (tx) => assert.equal(await read(tx), 3));
    // A writer beside the service moves the data version alone: every table moves with it.
    await a.host.db.updateTable('data_version').set((eb) => ({ version: eb('version', '+', 1) })).where('id', '=', 1).execute();
    assert.equal(await read(ctxOf(b)), 4);
  });

  it("never serves a cached identity or permission after another instance's write", async () => {
    const alice = await actor(a, 'alice', [{ object_types: ['users.user'], actions: ['view'] }]);
    const onB = b.as(alice.key);
    assert.equal((await onB.get('/api/users/me/')).status, 200);
    assert.equal((await onB.get('/api/users/users/')).status, 200);
    assert.equal((await onB.get('/api/users/users/')).status, 200);

    const permissions = await a.admin.get('/api/users/permissions/');
    for (const p of permissions.body.results) assert.equal((await a.admin.delete(`/api/users/permissions/${p.id}/`)).status, 204);
    assert.equal((await onB.get('/api/users/users/')).status, 403);

    assert.equal((await a.admin.patch(`/api/users/users/${alice.id}/`, { is_active: false })).status, 200);
    assert.equal((await onB.get('/api/users/me/')).status, 403);
  });
});
