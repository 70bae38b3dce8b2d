import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { ReadMemo } from '../../../../server/host/cache/read-memo';
import { parseConfig } from '../../../../server/host/core/config';
import { sql } from 'kysely';
import { foldedLike } from '../../../../server/host/db/portable';
import { observeStatements, walCheckpointerOf } from '../../../../server/host/db/database';
import { processSqliteDriver } from '../../../../server/host/db/sqlite-driver-choice';
import {
  bumpDataVersion,
  readDataVersions,
  readVersionWith,
  tableVersionRow,
  versionsOf,
  VERSIONS_READ_SQL,
  type DataVersions,
} from '../../../../server/host/db/data-version';
import type { Kysely } from 'kysely';
import { compiledSelect } from '../../../../server/host/db/compiled-select';
import { branchContributors, CONTRIBUTORS_READS } from '../../../../server/host/events/contributors-repository';
import { auditingMemoReads, UnnamedTableRead } from '../../../../server/host/db/read-audit';
import { onPostgres } from '../../../support/database';
import { instancesForEachTest, startService, withService, type TestService } from '../../../support/service';
import { settled } from '../../../support/quiet';
import { actor } from '../users/fixtures';

/** The version row as stored. */
async function versionRow(svc: TestService): Promise<number> {
  return (await svc.host.db.selectFrom('data_version').select('version').where('id', '=', 1).executeTakeFirstOrThrow())
    .version;
}

function ctxOf(svc: TestService) {
  return createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
}

/** A read of key `k` through `memo` that names the table groups; each computation answers the next number (1, 2, 3, ...). */
function countedGroupsRead(memo: ReadMemo): (scope: Parameters<ReadMemo['get']>[0]) => Promise<number> {
  let computed = 0;
  return (scope) => memo.get(scope, 'k', async () => ++computed, ['groups']);
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

  it('shares one read of the data version between reads asked together, each seeing every write committed before it asked', async () => {
    const memo = new ReadMemo();
    const ctx = ctxOf(svc);
    let computed = 0;
    // Each answer says which computation it was and what it read of the data.
    const read = () =>
      memo.get(ctx, 'k', async () => {
        const n = ++computed;
        const row = await svc.host.db
          .selectFrom('users')
          .select('first_name')
          .where('username', '=', 'admin')
          .executeTakeFirstOrThrow();
        return { n, name: row.first_name };
      });
    await settled(svc);
    const seen: string[] = [];
    const stop = observeStatements(svc.host.db, (q) => seen.push(q));
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, read));
      assert.deepEqual(new Set(answers.map((a) => a.n)), new Set([1]));
      // On PostgreSQL each read of the versions is a round trip: the one on its way, and the next.
      if (onPostgres) assert.ok(seen.filter((q) => q === VERSIONS_READ_SQL).length <= 2, seen.join('\n'));
      // A read asked while a write is on its way may answer from before it or after it (and may
      // compute once more for it); reads asked after the commit see it, and share one computation.
      const asked = read();
      await inTransaction(ctx, async (tx) => {
        await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
      });
      const after = await Promise.all([read(), read()]);
      assert.equal(after[0], after[1]);
      assert.equal(after[0].name, 'A');
      assert.ok(after[0].n >= 2 && after[0].n <= 3, `computed ${after[0].n} times`);
      assert.ok((await asked).n <= after[0].n);
      assert.equal(await read(), after[0]);
    } finally {
      stop();
    }
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
    const read = countedGroupsRead(new ReadMemo());
    await inTransaction(ctxOf(svc), async (tx) => {
      assert.equal(await read(tx), 1);
      await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
      assert.equal(await read(tx), 1);
      await tx.db
        .insertInto('groups')
        .values({ name: 'g', description: '', created: 'now', last_updated: 'now' })
        .execute();
      assert.equal(await read(tx), 2);
      await tx.db.deleteFrom('groups').where('name', '=', 'g').execute();
      assert.equal(await read(tx), 3);
      // Raw SQL cannot say which table it writes: it counts for every table.
      await sql`update users set last_name = 'B' where username = 'admin'`.execute(tx.db);
      assert.equal(await read(tx), 4);
      await sql`select count(*) from users`.execute(tx.db);
      assert.equal(await read(tx), 4);
    });
  });

  it('fails a computation reading a table its answer does not name (the tests audit every cached read)', async () => {
    assert.equal(auditingMemoReads(), true);
    const memo = new ReadMemo();
    const ctx = ctxOf(svc);
    // Joins, subqueries and raw SQL are seen; a common table expression or a column's table is not a table.
    const named = await memo.get(
      ctx,
      'named',
      async () => {
        await ctx.db
          .selectFrom('users as u')
          .innerJoin('user_groups', 'user_groups.user_id', 'u.id')
          .select('u.id')
          .execute();
        await ctx.db
          .with('mine', (db) => db.selectFrom('groups').select('id'))
          .selectFrom('mine')
          .selectAll()
          .execute();
        await sql`select count(*) from users`.execute(ctx.db);
        return 'ok';
      },
      ['users', 'user_groups', 'groups'],
    );
    assert.equal(named, 'ok');
    await assert.rejects(
      memo.get(
        ctx,
        'short',
        async () =>
          (
            await ctx.db
              .selectFrom('users')
              .where('id', 'in', (eb) => eb.selectFrom('tokens').select('user_id'))
              .selectAll()
              .execute()
          ).length,
        ['users'],
      ),
      (err: Error) => err instanceof UnnamedTableRead && /"short" reads tokens/.test(err.message),
    );
    await assert.rejects(
      memo.get(ctx, 'raw', async () => (await sql`select * from tokens`.execute(ctx.db)).rows.length, ['users']),
      UnnamedTableRead,
    );
    // A cached read inside another must name only tables the outer one names (served, its statements are not seen).
    await memo.get(ctx, 'inner', async () => 1, ['tokens']);
    await assert.rejects(
      memo.get(ctx, 'outer', () => memo.get(ctx, 'inner', async () => 1, ['tokens']), ['users']),
      (err: Error) => err instanceof UnnamedTableRead && /"inner" inside "outer" reads tokens/.test(err.message),
    );
    await assert.rejects(
      memo.get(ctx, 'outer2', () => memo.get(ctx, 'any', async () => 1), ['users']),
      UnnamedTableRead,
    );
    // A statement compiled once is seen at each run.
    const compiled = compiledSelect((db, branchId: number) =>
      db.selectFrom('object_changes').select('id').where('branch_id', '=', branchId),
    );
    await assert.rejects(
      memo.get(ctx, 'compiled', async () => (await compiled(ctx.db, 3)).length, ['users']),
      UnnamedTableRead,
    );
    assert.equal(
      await memo
        .get(ctx, 'contributors', () => branchContributors(ctx, 3), [...CONTRIBUTORS_READS])
        .then((c) => c.size),
      0,
    );
    // An answer naming no tables depends on everything: nothing inside it is checked.
    assert.equal(
      await memo.get(ctx, 'all', async () => (await ctx.db.selectFrom('tokens').selectAll().execute()).length),
      1,
    );
  });

  it('shares an answer naming its tables between transactions that did not write them and reads outside', async () => {
    const read = countedGroupsRead(new ReadMemo(100, svc.host.db));
    const ctx = ctxOf(svc);
    assert.equal(await read(ctx), 1);
    await inTransaction(ctx, async (tx) => {
      assert.equal(await read(tx), 1);
      await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
      assert.equal(await read(tx), 1);
      await tx.db
        .insertInto('groups')
        .values({ name: 'g', description: '', created: 'now', last_updated: 'now' })
        .execute();
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

  it('shares an answer naming no tables with a transaction until it writes anything, and keeps nothing it computed after', async () => {
    const memo = new ReadMemo(100, svc.host.db);
    const ctx = ctxOf(svc);
    let computed = 0;
    const read = (scope: { db: typeof svc.host.db; inTransaction: boolean }) =>
      memo.get(scope, 'k', async () => ++computed);
    assert.equal(await read(ctx), 1);
    await inTransaction(ctx, async (tx) => {
      // Nothing written yet: what the read before it computed is the committed state.
      assert.equal(await read(tx), 1);
      await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
      assert.equal(await read(tx), 2);
      assert.equal(await read(tx), 2);
    });
    // Its write committed: computed afresh, and what the transaction computed is not served.
    assert.equal(await read(ctx), 3);
    // Computed inside a transaction before it writes: kept for the reads after it only if it writes nothing.
    await inTransaction(ctx, async (tx) => {
      assert.equal(await memo.get(tx, 'fresh', async () => 'read-only'), 'read-only');
    });
    assert.equal(await memo.get(ctx, 'fresh', async () => 'again'), 'read-only');
    await inTransaction(ctx, async (tx) => {
      assert.equal(await memo.get(tx, 'written', async () => 'before the write'), 'before the write');
      await tx.db.updateTable('users').set({ first_name: 'B' }).where('username', '=', 'admin').execute();
    });
    assert.equal(await memo.get(ctx, 'written', async () => 'after the commit'), 'after the commit');
  });

  it('inside a transaction, serves what a writer says it wrote until the next write of its tables', async () => {
    const memo = new ReadMemo();
    const read = countedGroupsRead(memo);
    await inTransaction(ctxOf(svc), async (tx) => {
      assert.equal(await read(tx), 1);
      await tx.db
        .insertInto('groups')
        .values({ name: 'g', description: '', created: 'now', last_updated: 'now' })
        .execute();
      memo.written(tx, 'k', 10, ['groups']);
      await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
      assert.equal(await read(tx), 10);
      await tx.db.deleteFrom('groups').where('name', '=', 'g').execute();
      assert.equal(await read(tx), 2);
    });
    // Outside a transaction it keeps nothing.
    memo.written(ctxOf(svc), 'k', 20, ['groups']);
    assert.equal(await read(ctxOf(svc)), 3);
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

describe("the read memo's bound in the configuration (host.read_cache_entries)", () => {
  it('is 256 answers by default, refuses a negative value naming the key, and 0 keeps no answers', async () => {
    assert.equal(parseConfig({}).host.read_cache_entries, 256);
    assert.throws(() => parseConfig({ host: { read_cache_entries: -1 } }), /host\.read_cache_entries/);
    await withService(startService({ config: { host: { read_cache_entries: 0 } } }), async (svc) => {
      const ctx = ctxOf(svc);
      let computed = 0;
      await svc.host.readMemo.get(ctx, 'k', async () => ++computed);
      await svc.host.readMemo.get(ctx, 'k', async () => ++computed);
      assert.equal(computed, 2);
    });
  });
});

describe('several instances on one database', () => {
  const [a, b] = instancesForEachTest();

  it('serves a kept answer to a read of the versions that arrives after a newer one, when the tables it names stood the same in both; computes it otherwise, keeping nothing', async () => {
    // Reads of the versions answered in another order than they were sent (PostgreSQL, commits streaming in).
    const db = {} as Kysely<unknown>;
    let next: DataVersions = versionsOf([]);
    readVersionWith(db, () => Promise.resolve(next));
    const at = (global: number, groups: number) =>
      versionsOf([
        { id: 1, version: global },
        { id: 2, version: global },
        { id: tableVersionRow('groups'), version: groups },
      ]);
    const read = countedGroupsRead(new ReadMemo(10));
    const scope = { db, inTransaction: false };
    next = at(5, 1);
    assert.equal(await read(scope), 1);
    next = at(7, 1);
    assert.equal(await read(scope), 1, 'commits of other tables keep it');
    next = at(6, 1);
    assert.equal(await read(scope), 1, 'an older read, the groups as they stand: served');
    next = at(8, 2);
    assert.equal(await read(scope), 2, 'the groups moved');
    next = at(7, 1);
    assert.equal(await read(scope), 3, 'an older read that saw other groups: computed');
    next = at(8, 2);
    assert.equal(await read(scope), 2, 'and not kept');
  });

  it("keeps an answer naming its tables across another instance's commits of other tables, never across one of them", async () => {
    const read = countedGroupsRead(new ReadMemo(100, b.host.db));
    assert.equal(await read(ctxOf(b)), 1);
    await inTransaction(ctxOf(a), (tx) =>
      tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute(),
    );
    assert.equal(await read(ctxOf(b)), 1);
    await inTransaction(ctxOf(b), async (tx) => assert.equal(await read(tx), 1));
    await inTransaction(ctxOf(a), (tx) =>
      tx.db.insertInto('groups').values({ name: 'g', description: '', created: 'now', last_updated: 'now' }).execute(),
    );
    assert.equal(await read(ctxOf(b)), 2);
    await inTransaction(ctxOf(a), (tx) => tx.db.deleteFrom('groups').where('name', '=', 'g').execute());
    await inTransaction(ctxOf(b), async (tx) => assert.equal(await read(tx), 3));
    // A writer beside the service moves the data version alone: every table moves with it.
    await a.host.db
      .updateTable('data_version')
      .set((eb) => ({ version: eb('version', '+', 1) }))
      .where('id', '=', 1)
      .execute();
    assert.equal(await read(ctxOf(b)), 4);
  });

  it('refuses a write by an identity or permission another instance withdrew, and writes nothing; accepts one it granted', async () => {
    const alice = await actor(a, 'alice', [{ object_types: ['users.group'], actions: ['add', 'view'] }]);
    const onB = b.as(alice.key);
    const created = async (name: string) =>
      (await b.host.db.selectFrom('groups').select('id').where('name', '=', name).execute()).length;
    assert.equal((await onB.post('/api/users/groups/', { name: 'g1' })).status, 201);
    assert.equal((await onB.post('/api/users/groups/', { name: 'g2' })).status, 201);

    const permissions = await a.admin.get('/api/users/permissions/');
    for (const p of permissions.body.results)
      assert.equal((await a.admin.delete(`/api/users/permissions/${p.id}/`)).status, 204);
    assert.equal((await onB.post('/api/users/groups/', { name: 'g3' })).status, 403);
    assert.equal(await created('g3'), 0);

    assert.equal(
      (
        await a.admin.post('/api/users/permissions/', {
          name: 'again',
          object_types: ['users.group'],
          actions: ['add', 'view'],
          users: [alice.id],
        })
      ).status,
      201,
    );
    assert.equal((await onB.post('/api/users/groups/', { name: 'g4' })).status, 201);

    assert.equal((await a.admin.patch(`/api/users/users/${alice.id}/`, { is_active: false })).status, 200);
    assert.equal((await onB.post('/api/users/groups/', { name: 'g5' })).status, 403);
    assert.equal(await created('g5'), 0);
  });

  it("never serves a cached identity or permission after another instance's write", async () => {
    const alice = await actor(a, 'alice', [{ object_types: ['users.user'], actions: ['view'] }]);
    const onB = b.as(alice.key);
    assert.equal((await onB.get('/api/users/me/')).status, 200);
    assert.equal((await onB.get('/api/users/users/')).status, 200);
    assert.equal((await onB.get('/api/users/users/')).status, 200);

    const permissions = await a.admin.get('/api/users/permissions/');
    for (const p of permissions.body.results)
      assert.equal((await a.admin.delete(`/api/users/permissions/${p.id}/`)).status, 204);
    assert.equal((await onB.get('/api/users/users/')).status, 403);

    assert.equal((await a.admin.patch(`/api/users/users/${alice.id}/`, { is_active: false })).status, 200);
    assert.equal((await onB.get('/api/users/me/')).status, 403);
  });
});

// SQLite's two connections to one file: a writer and a reader. (On PostgreSQL every statement
// outside a transaction has a connection of its own; there is no writer to wait for.)
if (!onPostgres) {
  describe('a database file: reads beside the write transaction', () => {
    let dir = '';
    let svc: TestService;
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'cc-reader-'));
      svc = await startService({ db: join(dir, 'one.sqlite') });
      // The token's first use is written now, not during the tests below (a write waits for the writer).
      assert.equal((await svc.admin.get('/api/users/me/')).status, 200);
    });
    afterEach(async () => {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A write transaction that has written and now waits; `release` lets it commit. */
    async function openWriteTransaction(firstName: string): Promise<{ release: () => void; done: Promise<void> }> {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const done = inTransaction(ctxOf(svc), async (tx) => {
        await tx.db.updateTable('users').set({ first_name: firstName }).where('username', '=', 'admin').execute();
        entered();
        await held;
      });
      await inside;
      return { release, done };
    }

    const adminRow = () =>
      svc.host.db
        .selectFrom('users')
        .select(['first_name', 'last_name'])
        .where('username', '=', 'admin')
        .executeTakeFirstOrThrow();

    it('answers reads while a write transaction is open and waiting, from the last commit, and the write once it commits', async () => {
      const before = await adminRow();
      const { release, done } = await openWriteTransaction('Pending');
      // Neither a read through the service's handle nor a request waits for the transaction, and
      // neither sees what it has not committed.
      assert.deepEqual(await adminRow(), before);
      const users = await svc.admin.get('/api/users/users/?username=admin');
      assert.equal(users.status, 200);
      assert.equal(users.body.results[0].first_name, before.first_name);
      release();
      await done;
      assert.equal((await adminRow()).first_name, 'Pending');
      assert.equal((await svc.admin.get('/api/users/users/?username=admin')).body.results[0].first_name, 'Pending');
    });

    it("tells an observer every statement, on the writer and on the reader, but not the data version's reads; nothing once it stops", async () => {
      await settled(svc);
      const seen: string[] = [];
      const stop = observeStatements(svc.host.db, (q) => seen.push(q));
      const { release, done } = await openWriteTransaction('Observed');
      // On the reader: the writer is held.
      await adminRow();
      release();
      await done;
      // On the free writer, and through a cached read (which reads the versions first).
      await adminRow();
      await svc.host.readMemo.get(ctxOf(svc), 'observed', async () => 1);
      stop();
      await adminRow();
      const reads = seen.filter((q) => q.startsWith('select "first_name"'));
      assert.deepEqual(
        [
          seen.filter((q) => q === 'begin').length,
          seen.filter((q) => q.startsWith('update "users"')).length,
          seen.filter((q) => q === 'commit').length,
          reads.length,
        ],
        [1, 1, 1, 2],
        seen.join('\n'),
      );
      assert.ok(!seen.some((q) => q.includes('data_version') && q.startsWith('select')), seen.join('\n'));
    });

    it('reads the versions again only once something was committed: by this process or by another connection to the file', async () => {
      const first = readDataVersions(svc.host.db);
      assert.equal(
        await readDataVersions(svc.host.db),
        await first,
        'nothing committed: the same versions, not parsed again',
      );
      await inTransaction(ctxOf(svc), (tx) =>
        tx.db
          .insertInto('groups')
          .values({ name: 'g', description: '', created: 'now', last_updated: 'now' })
          .execute(),
      );
      const afterOwn = readDataVersions(svc.host.db);
      assert.equal((await afterOwn).global, (await first).global + 1);
      assert.notEqual(
        (await afterOwn).rows.get(tableVersionRow('groups')),
        (await first).rows.get(tableVersionRow('groups')),
      );
      // A write outside a transaction is seen at once too.
      const before = await readDataVersions(svc.host.db);
      await bumpDataVersion(svc.host.db, ['groups']);
      assert.equal((await readDataVersions(svc.host.db)).global, before.global + 1);
      // Another connection (as another process would): seen at the next read; a commit that
      // moves no version keeps the versions.
      const other = processSqliteDriver().driver.open(join(dir, 'one.sqlite'), { readonly: false });
      try {
        const seen = await readDataVersions(svc.host.db);
        other.prepare('update "users" set "first_name" = ? where "username" = ?').run(['Beside', 'admin']);
        assert.deepEqual(await readDataVersions(svc.host.db), seen);
        other.prepare('update "data_version" set "version" = "version" + 1 where "id" = 1').run([]);
        assert.equal((await readDataVersions(svc.host.db)).global, seen.global + 1);
      } finally {
        other.close();
      }
    });

    it('sends a write outside transactions to the writer, after the open transaction', async () => {
      const { release, done } = await openWriteTransaction('First');
      let written = false;
      const write = svc.host.db
        .updateTable('users')
        .set({ last_name: 'Second' })
        .where('username', '=', 'admin')
        .execute()
        .then(() => {
          written = true;
        });
      await new Promise((resolve) => setTimeout(resolve, 20));
      try {
        assert.equal(written, false);
      } finally {
        release();
      }
      await Promise.all([done, write]);
      assert.deepEqual(await adminRow(), { first_name: 'First', last_name: 'Second' });
    });

    it('never keeps an answer as having seen a write outside transactions that was still waiting for the writer', async () => {
      const memo = new ReadMemo();
      const read = () => memo.get(ctxOf(svc), 'admin', async () => (await adminRow()).last_name);
      // A transaction that only reads holds the writer: nothing it does moves the data version.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const done = inTransaction(ctxOf(svc), async (tx) => {
        await tx.db.selectFrom('users').select('id').execute();
        entered();
        await held;
      });
      await inside;
      const write = svc.host.db
        .updateTable('users')
        .set({ last_name: 'Waited' })
        .where('username', '=', 'admin')
        .execute();
      try {
        assert.notEqual(await read(), 'Waited');
      } finally {
        // Whatever the assertion found, the writer is let go: a test that failed holding it would stall every later one.
        release();
      }
      await Promise.all([done, write]);
      assert.equal(await read(), 'Waited');
    });

    it('checkpoints the write-ahead log every 1,000 pages and cuts its file back to 16 MB after a larger transaction', async () => {
      const pragma = async (name: string) =>
        inTransaction(
          ctxOf(svc),
          async (tx) => Object.values((await sql.raw(`pragma ${name}`).execute(tx.db)).rows[0] as object)[0] as unknown,
        );
      assert.equal(await pragma('wal_autocheckpoint'), 1000);
      assert.equal(await pragma('journal_size_limit'), 16 * 1024 * 1024);
      // 24 MB in one transaction, then two small ones: the first checkpoints, the next starts the log again.
      await sql.raw('create table filler (x blob)').execute(svc.host.db);
      await inTransaction(ctxOf(svc), async (tx) => {
        for (let i = 0; i < 24; i++) await sql.raw('insert into filler (x) values (zeroblob(1048576))').execute(tx.db);
      });
      const wal = join(dir, 'one.sqlite-wal');
      assert.ok(statSync(wal).size > 24 * 1024 * 1024);
      // The first copies the log (in its commit, or on the checkpointer's thread once that has
      // started: awaited), the next starts the log again.
      for (const name of ['Ada', 'Grace']) {
        await svc.host.db.updateTable('users').set({ first_name: name }).where('username', '=', 'admin').execute();
        await walCheckpointerOf(svc.host.db)?.settled();
      }
      assert.ok(statSync(wal).size <= 16 * 1024 * 1024, `log file of ${statSync(wal).size} bytes`);
    });

    it('folds case beyond ASCII on the reader as on the writer', async () => {
      await svc.host.db.updateTable('users').set({ first_name: 'ÉLODIE' }).where('username', '=', 'admin').execute();
      const folded = (db: typeof svc.host.db) =>
        db
          .selectFrom('users')
          .select('username')
          .where((eb) => foldedLike(db, eb.ref('first_name'), '%élodie%'))
          .execute();
      assert.deepEqual(await folded(svc.host.db), [{ username: 'admin' }]);
      await inTransaction(ctxOf(svc), async (tx) =>
        assert.deepEqual(await folded(tx.db as typeof svc.host.db), [{ username: 'admin' }]),
      );
    });
  });
}
