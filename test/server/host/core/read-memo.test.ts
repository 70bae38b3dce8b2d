import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import {
  AT_COMMIT_ENTRIES,
  estimateBytes,
  ReadMemo,
  UncheckedReads,
  UncheckedReadsStale,
} from '../../../../server/host/core/read-memo';
import { parseConfig } from '../../../../server/host/core/config';
import { sql } from 'kysely';
import { foldedLike } from '../../../../server/host/db/portable';
import { observeStatements, walCheckpointerOf } from '../../../../server/host/db/database';
import {
  bumpDataVersion,
  readDataVersions,
  readVersionWith,
  tableVersionRow,
  versionsAsked,
  versionsMayHaveMoved,
  versionsOf,
  VERSIONS_READ_SQL,
  type DataVersions,
} from '../../../../server/host/db/data-version';
import type { Kysely, RootOperationNode } from 'kysely';
import { PARTITION_BUCKETS, partitionName, writtenPartitions } from '../../../../server/host/db/partitions';
import { compiledSelect } from '../../../../server/host/db/compiled-select';
import { branchContributors, contributorsReads } from '../../../../server/host/events/contributors-repository';
import { auditingMemoReads, UnnamedTableRead } from '../../../../server/host/db/read-audit';
import { onPostgres } from '../../../support/database';
import { instancesForEachTest, startService, withService, type TestService } from '../../../support/service';
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

/** One changelog entry in branch `branchId` (null: main), as the changelog's writer inserts it. */
function changelogEntry(branchId: number | null, userId = 1) {
  return {
    time: 'now',
    user_id: userId,
    user_name: 'admin',
    request_id: 'r',
    action: 'update' as const,
    changed_object_type: 'users.user',
    changed_object_id: 1,
    object_repr: 'x',
    prechange_data: null,
    postchange_data: null,
    branch_id: branchId,
  };
}

/** Branches with these ids (the changelog's entries name them). */
async function insertBranches(db: TestService['host']['db'], ids: number[]): Promise<void> {
  await db
    .insertInto('branches')
    .values(
      ids.map((id) => ({
        id,
        name: `b${id}`,
        schema_id: `s${id}`,
        status: 'ready',
        description: '',
        owner: null,
        last_sync: null,
        merged_time: null,
        merged_by: null,
        created: 'now',
        last_updated: 'now',
      })),
    )
    .execute();
}

/** A read of the changelog entries of branch 7, naming only that branch's partition; each computation answers the next number. */
function countedBranchRead(memo: ReadMemo): (scope: Parameters<ReadMemo['get']>[0]) => Promise<number> {
  let computed = 0;
  return (scope) =>
    memo.get(
      scope,
      'branch-7',
      async () => {
        await scope.db.selectFrom('object_changes').select('id').where('branch_id', '=', 7).execute();
        return ++computed;
      },
      [partitionName('object_changes', 7)],
    );
}

/** A group row as its writer inserts it. */
const groupRow = (name: string) => ({ name, description: '', created: 'now', last_updated: 'now' });

/**
 * What a write transaction keeps for the readers (`keepAtCommit`): served by the first read after
 * it commits (on SQLite, in memory or a file); not if the transaction wrote the answer's tables
 * after keeping it, nor if it rolled back; dropped by the next commit of its tables. On
 * PostgreSQL nothing is kept (the versions it commits are not read).
 */
async function keptAtCommit(svc: TestService): Promise<void> {
  const memo = svc.host.readMemo;
  const ctx = ctxOf(svc);
  let computed = 0;
  const read = (key: string) => memo.get(ctx, key, async () => `computed ${++computed}`, ['groups']);
  const kept = (value: string) => (onPostgres ? /^computed/ : new RegExp(`^${value}$`));
  await inTransaction(ctx, async (tx) => {
    await tx.db.insertInto('groups').values(groupRow('g')).execute();
    memo.keepAtCommit(tx, 'at-commit', 'kept by the writer', ['groups']);
    // A write of another table keeps it.
    await tx.db.updateTable('users').set({ first_name: 'A' }).where('username', '=', 'admin').execute();
  });
  assert.match(await read('at-commit'), kept('kept by the writer'));
  assert.match(await read('at-commit'), kept('kept by the writer'));

  await inTransaction(ctx, async (tx) => {
    memo.keepAtCommit(tx, 'rewritten', 'stale', ['groups']);
    await tx.db.deleteFrom('groups').where('name', '=', 'g').execute();
  });
  assert.match(await read('rewritten'), /^computed/);

  await assert.rejects(
    inTransaction(ctx, async (tx) => {
      await tx.db.insertInto('groups').values(groupRow('h')).execute();
      memo.keepAtCommit(tx, 'rolled back', 'never committed', ['groups']);
      throw new Error('rolled back');
    }),
  );
  assert.match(await read('rolled back'), /^computed/);

  await inTransaction(ctx, async (tx) => {
    await tx.db.insertInto('groups').values(groupRow('i')).execute();
    memo.keepAtCommit(tx, 'later', 'kept until the next write', ['groups']);
  });
  assert.match(await read('later'), kept('kept until the next write'));
  await inTransaction(ctx, (tx) => tx.db.deleteFrom('groups').where('name', '=', 'i').execute());
  assert.match(await read('later'), /^computed/);

  // One transaction hands over its first AT_COMMIT_ENTRIES answers, no more.
  await inTransaction(ctx, async (tx) => {
    await tx.db.insertInto('groups').values(groupRow('j')).execute();
    for (let i = 0; i <= AT_COMMIT_ENTRIES; i++) memo.keepAtCommit(tx, `many ${i}`, `kept ${i}`, ['groups']);
  });
  assert.match(await read(`many ${AT_COMMIT_ENTRIES - 1}`), kept(`kept ${AT_COMMIT_ENTRIES - 1}`));
  assert.match(await read(`many ${AT_COMMIT_ENTRIES}`), /^computed/);
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

  it("keeps an answer naming a table's partition across writes of its other partitions, never across one of its own or a write that does not say its rows", async () => {
    const db = svc.host.db;
    await insertBranches(db, [7, 8, 7 + PARTITION_BUCKETS]);
    const read = countedBranchRead(new ReadMemo({ maxEntries: 100 }, db));
    const ctx = ctxOf(svc);
    const write = (f: (tx: ReturnType<typeof ctxOf>) => Promise<unknown>) => inTransaction(ctxOf(svc), f);
    assert.equal(await read(ctx), 1);
    // Another branch's entries, main's, several rows of other branches in one statement: kept.
    await write((tx) => tx.db.insertInto('object_changes').values(changelogEntry(8)).execute());
    await write((tx) =>
      tx.db
        .insertInto('object_changes')
        .values([changelogEntry(null), changelogEntry(8, 2)])
        .execute(),
    );
    await write((tx) =>
      tx.db.updateTable('object_changes').set({ object_repr: 'y' }).where('branch_id', 'in', [8]).execute(),
    );
    assert.equal(await read(ctx), 1);
    // Its own branch: computed afresh, inside a transaction too.
    await write(async (tx) => {
      assert.equal(await read(tx), 1);
      await tx.db.insertInto('object_changes').values(changelogEntry(7)).execute();
      assert.equal(await read(tx), 2);
    });
    assert.equal(await read(ctx), 3);
    // A branch sharing its bucket moves it too (the versions stay a fixed number of rows).
    await write((tx) =>
      tx.db
        .insertInto('object_changes')
        .values(changelogEntry(7 + PARTITION_BUCKETS))
        .execute(),
    );
    assert.equal(await read(ctx), 4);
    // A write by id says nothing of its rows' branch: every partition moves.
    const anyEntry = (
      await db.selectFrom('object_changes').select('id').where('branch_id', '=', 8).executeTakeFirstOrThrow()
    ).id;
    await write((tx) =>
      tx.db.updateTable('object_changes').set({ object_repr: 'z' }).where('id', '=', anyEntry).execute(),
    );
    assert.equal(await read(ctx), 5);
    // Moving a row out of another branch into this one writes both.
    await write((tx) => tx.db.updateTable('object_changes').set({ branch_id: 7 }).where('branch_id', '=', 8).execute());
    assert.equal(await read(ctx), 6);
    // Raw SQL moves everything.
    await write((tx) => sql`update object_changes set object_repr = 'w' where branch_id = 8`.execute(tx.db));
    assert.equal(await read(ctx), 7);
    assert.equal(await read(ctx), 7);
  });

  it('says which partitions a write statement writes, or that it cannot tell', () => {
    const db = svc.host.db;
    const parts = (q: { toOperationNode(): RootOperationNode }) => writtenPartitions(q.toOperationNode()).sort();
    const p = (branch: number | null) => partitionName('object_changes', branch);
    assert.deepEqual(
      parts(db.insertInto('object_changes').values([changelogEntry(3), changelogEntry(null), changelogEntry(3)])),
      [p(3), p(null)].sort(),
    );
    assert.deepEqual(
      parts(
        db
          .updateTable('object_changes')
          .set({ object_repr: 'a' })
          .where('object_repr', '=', 'b')
          .where('branch_id', '=', 3),
      ),
      [p(3)],
    );
    assert.deepEqual(parts(db.deleteFrom('object_changes').where('branch_id', 'in', [3, 4])), [p(3), p(4)].sort());
    assert.deepEqual(
      parts(db.updateTable('object_changes').set({ branch_id: 4 }).where('branch_id', '=', 3)),
      [p(3), p(4)].sort(),
    );
    // Conditions that do not bind the column to values, ORs, upserts whose conflict is another row: not told.
    assert.deepEqual(parts(db.deleteFrom('object_changes').where('id', '=', 3)), ['object_changes#*']);
    assert.deepEqual(
      parts(db.deleteFrom('object_changes').where((eb) => eb.or([eb('branch_id', '=', 3), eb('id', '=', 9)]))),
      ['object_changes#*'],
    );
    assert.deepEqual(parts(db.deleteFrom('object_changes').where('branch_id', '>', 3)), ['object_changes#*']);
    assert.deepEqual(
      parts(
        db
          .updateTable('object_changes')
          .set((eb) => ({ branch_id: eb.ref('user_id') }))
          .where('branch_id', '=', 3),
      ),
      ['object_changes#*'],
    );
    assert.deepEqual(
      parts(
        db
          .insertInto('object_changes')
          .values(changelogEntry(3))
          .onConflict((oc) => oc.column('id').doUpdateSet({ object_repr: 'x' })),
      ),
      ['object_changes#*'],
    );
    // A table that is not partitioned has none.
    assert.deepEqual(parts(db.deleteFrom('groups').where('id', '=', 3)), []);
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
    // A partition named covers the reads restricted to it (raw SQL and statements compiled once too), not others.
    const ofBranch = (branchId: number) => [partitionName('object_changes', branchId)];
    const compiled = compiledSelect((db, branchId: number) =>
      db.selectFrom('object_changes').select('id').where('branch_id', '=', branchId),
    );
    assert.equal(
      await memo.get(
        ctx,
        'part',
        async () =>
          (await ctx.db.selectFrom('object_changes as o').select('o.id').where('o.branch_id', '=', 3).execute()).length,
        ofBranch(3),
      ),
      0,
    );
    assert.equal(
      (await memo.get(ctx, 'part-contributors', () => branchContributors(ctx, 3), contributorsReads(3))).size,
      0,
    );
    assert.equal(await memo.get(ctx, 'part-compiled', async () => (await compiled(ctx.db, 3)).length, ofBranch(3)), 0);
    for (const [key, read] of [
      ['other', () => ctx.db.selectFrom('object_changes').select('id').where('branch_id', '=', 4).execute()],
      ['unbound', () => ctx.db.selectFrom('object_changes').select('id').where('branch_id', '>', 3).execute()],
      [
        'or',
        () =>
          ctx.db
            .selectFrom('object_changes')
            .select('id')
            .where((eb) => eb.or([eb('branch_id', '=', 3), eb('id', '=', 1)]))
            .execute(),
      ],
      [
        'twice',
        () =>
          ctx.db
            .selectFrom('object_changes')
            .select('id')
            .where('branch_id', '=', 3)
            .where('id', 'in', (eb) => eb.selectFrom('object_changes').select('id'))
            .execute(),
      ],
      [
        'raw-or',
        async () =>
          (await sql<{ id: number }>`select id from object_changes where branch_id = ${3} or id = 1`.execute(ctx.db))
            .rows,
      ],
      ['compiled-other', () => compiled(ctx.db, 4)],
    ] as const) {
      await assert.rejects(memo.get(ctx, key, read, ofBranch(3)), UnnamedTableRead, key);
    }
    // A partition is covered, inside another answer, by itself or its whole table.
    assert.equal(
      await memo.get(ctx, 'whole', () => memo.get(ctx, 'part-inner', async () => 1, ofBranch(3)), ['object_changes']),
      1,
    );
    await assert.rejects(
      memo.get(ctx, 'outer-part', () => memo.get(ctx, 'part-inner-4', async () => 1, ofBranch(4)), ofBranch(3)),
      UnnamedTableRead,
    );
    // An answer naming no tables depends on everything: nothing inside it is checked.
    assert.equal(
      await memo.get(ctx, 'all', async () => (await ctx.db.selectFrom('tokens').selectAll().execute()).length),
      1,
    );
  });

  it('shares an answer naming its tables between transactions that did not write them and reads outside', async () => {
    const read = countedGroupsRead(new ReadMemo({ maxEntries: 100 }, svc.host.db));
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
    const memo = new ReadMemo({ maxEntries: 100 }, svc.host.db);
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

  it('serves what a write transaction kept for the readers after it commits, unless it wrote its tables after keeping it or rolled back', async () => {
    await keptAtCommit(svc);
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
    const memo = new ReadMemo({ maxEntries: 3 });
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
  it('is bounded by size: the least recently used answers go until the estimated bytes fit the budget', async () => {
    // Answers of about 10 kB (a page of presented requests is a few times that), a budget of 35 kB.
    const answer = (tag: string, n = 10) =>
      Array.from({ length: n }, (_, i) => ({ tag, text: 'x'.repeat(1000 - 60), i }));
    const one = estimateBytes(answer('a'));
    assert.ok(one > 9_000 && one < 12_000, `estimate ${one}`);
    const memo = new ReadMemo({ maxBytes: 35_000 });
    const ctx = ctxOf(svc);
    const computed: string[] = [];
    const read = (key: string, n?: number) => memo.get(ctx, key, async () => (computed.push(key), answer(key, n)));
    for (const key of ['a', 'b', 'c']) await read(key);
    assert.equal(memo.size, 3);
    assert.ok(memo.bytes > 3 * one && memo.bytes <= 35_000);
    await read('a'); // now the most recently used
    await read('d'); // pushes out b, the least recently used
    assert.deepEqual(computed, ['a', 'b', 'c', 'd']);
    await read('a');
    await read('c');
    await read('d');
    assert.deepEqual(computed, ['a', 'b', 'c', 'd']);
    // One answer twice as large pushes out two.
    await read('e', 20);
    assert.equal(memo.size, 2);
    assert.ok(memo.bytes <= 35_000);
    await read('d');
    await read('e');
    assert.deepEqual(computed, ['a', 'b', 'c', 'd', 'e']);
    await read('a');
    assert.deepEqual(computed, ['a', 'b', 'c', 'd', 'e', 'a']);
  });

  it('never keeps an answer larger than its whole budget', async () => {
    const memo = new ReadMemo({ maxBytes: 5_000 });
    const ctx = ctxOf(svc);
    let computed = 0;
    const read = () => memo.get(ctx, 'big', async () => (++computed, 'x'.repeat(10_000)));
    assert.equal((await read()).length, 10_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(memo.size, 0);
    assert.equal(memo.bytes, 0);
    await read();
    assert.equal(computed, 2);
    // A budget of 0 keeps nothing.
    const none = new ReadMemo({ maxBytes: 0 });
    let small = 0;
    await none.get(ctx, 'k', async () => ++small);
    await none.get(ctx, 'k', async () => ++small);
    assert.equal(small, 2);
  });

  it('estimates an answer by what it holds: shared parts once, cycles end, a long array by a sample, a large answer only up to the limit', () => {
    const row = { id: 1, title: 'y'.repeat(500) };
    assert.ok(estimateBytes([row, row]) < estimateBytes([row, { ...row }]));
    assert.ok(estimateBytes(new Map([[1, row]])) > estimateBytes(row));
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    assert.ok(estimateBytes(cyclic) > 0);
    const large = Array.from({ length: 100_000 }, (_, i) => ({ i, text: `change ${i}` }));
    const capped = estimateBytes(large, 50_000);
    // The array itself counts at once; of its items, only about the limit is walked.
    assert.ok(capped > 50_000 && capped < 800_032 + 60_000, `capped estimate ${capped}`);
    assert.ok(estimateBytes(large) > 5_000_000);
    // A long array is estimated from a sample of its items: alike items give the same estimate.
    const ratio = estimateBytes(large) / (100 * estimateBytes(large.slice(0, 1000)));
    assert.ok(ratio > 0.9 && ratio < 1.1, `ratio ${ratio}`);
  });
});

describe("the read memo's budget in the configuration (host.read_cache_mb)", () => {
  it('is 16 MiB by default, refuses a negative value naming the key, and 0 keeps no answers', async () => {
    assert.equal(parseConfig({}).host.read_cache_mb, 16);
    assert.throws(() => parseConfig({ host: { read_cache_mb: -1 } }), /host\.read_cache_mb/);
    await withService(startService({ config: { host: { read_cache_mb: 0 } } }), async (svc) => {
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
    const read = countedGroupsRead(new ReadMemo({ maxEntries: 10 }));
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
    const read = countedGroupsRead(new ReadMemo({ maxEntries: 100 }, b.host.db));
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
    // A partition: another instance's write of another partition keeps it, of its own moves it.
    await insertBranches(a.host.db, [7, 8]);
    const branchRead = countedBranchRead(new ReadMemo({ maxEntries: 100 }, b.host.db));
    assert.equal(await branchRead(ctxOf(b)), 1);
    await inTransaction(ctxOf(a), (tx) => tx.db.insertInto('object_changes').values(changelogEntry(8)).execute());
    assert.equal(await branchRead(ctxOf(b)), 1);
    await inTransaction(ctxOf(a), (tx) => tx.db.insertInto('object_changes').values(changelogEntry(7)).execute());
    assert.equal(await branchRead(ctxOf(b)), 2);
    // An instance that does not know the partitions (an older version of the service) moves only the table's version: every partition moves.
    await inTransaction(ctxOf(a), (tx) => bumpDataVersion(tx.db, ['object_changes']));
    assert.equal(await branchRead(ctxOf(b)), 3);
    assert.equal(await branchRead(ctxOf(b)), 3);
    // A writer beside the service moves the data version alone: every table moves with it.
    await a.host.db
      .updateTable('data_version')
      .set((eb) => ({ version: eb('version', '+', 1) }))
      .where('id', '=', 1)
      .execute();
    assert.equal(await read(ctxOf(b)), 4);
  });

  it("serves a kept answer before a write unchecked; the write's transaction confirms it under the write lock, and rolls back when another instance wrote its tables", async () => {
    const memo = new ReadMemo({ maxEntries: 100 }, b.host.db);
    const read = countedGroupsRead(memo);
    const rename = (name: string) => (tx: { db: TestService['host']['db'] }) =>
      tx.db.updateTable('users').set({ first_name: name }).where('username', '=', 'admin').execute();
    const firstName = async () =>
      (
        await b.host.db
          .selectFrom('users')
          .select('first_name')
          .where('username', '=', 'admin')
          .executeTakeFirstOrThrow()
      ).first_name;
    const unchecked = () => ({ db: b.host.db, inTransaction: false, unchecked: new UncheckedReads() });
    // Nothing kept yet: read as always, nothing to confirm.
    const first = unchecked();
    assert.equal(await read(first), 1);
    assert.equal(first.unchecked.size, 0);
    const kept = unchecked();
    assert.equal(await read(kept), 1);
    assert.equal(kept.unchecked.size, 1);
    // Another instance's commit of other tables: confirmed, the write commits.
    await inTransaction(ctxOf(a), rename('A'));
    await inTransaction(ctxOf(b), rename('B'), kept.unchecked);
    assert.equal(await firstName(), 'B');
    // Of its table: the write rolls back, and says so rather than the work's own failure.
    const stale = unchecked();
    assert.equal(await read(stale), 1);
    await inTransaction(ctxOf(a), (tx) =>
      tx.db
        .insertInto('groups')
        .values({ name: 'moved', description: '', created: 'now', last_updated: 'now' })
        .execute(),
    );
    await assert.rejects(inTransaction(ctxOf(b), rename('stale'), stale.unchecked), UncheckedReadsStale);
    await assert.rejects(
      inTransaction(
        ctxOf(b),
        async () => {
          throw new Error('refused on a stale identity');
        },
        stale.unchecked,
      ),
      UncheckedReadsStale,
    );
    assert.equal(await firstName(), 'B');
    // Read as always again: computed afresh.
    assert.equal(await read(ctxOf(b)), 2);
    // This process's own write of its tables outside transactions: not served unchecked.
    await b.host.db.deleteFrom('groups').where('name', '=', 'moved').execute();
    const local = unchecked();
    assert.equal(await read(local), 3);
    assert.equal(local.unchecked.size, 0);
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

    it('serves what a write transaction kept for the readers after it commits, at the versions it committed', async () => {
      await keptAtCommit(svc);
    });

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
      // Another connection (as another process would): seen from the next turn of the event loop,
      // or at once after a request arrived; a commit that moves no version keeps the versions.
      const other = new SQLite(join(dir, 'one.sqlite'));
      const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
      try {
        const seen = await readDataVersions(svc.host.db);
        other.prepare('update "users" set "first_name" = ? where "username" = ?').run('Beside', 'admin');
        await nextTurn();
        assert.deepEqual(await readDataVersions(svc.host.db), seen);
        other.prepare('update "data_version" set "version" = "version" + 1 where "id" = 1').run();
        assert.equal((await readDataVersions(svc.host.db)).global, seen.global, 'within the turn, asked once');
        await nextTurn();
        assert.equal((await readDataVersions(svc.host.db)).global, seen.global + 1);
        other.prepare('update "data_version" set "version" = "version" + 1 where "id" = 1').run();
        assert.equal((await readDataVersions(svc.host.db)).global, seen.global + 1);
        versionsMayHaveMoved();
        assert.equal((await readDataVersions(svc.host.db)).global, seen.global + 2, 'a request arrived: asked again');
      } finally {
        other.close();
      }
    });

    it('answers every cached read of one request after one read of the versions, and reads them again for the next request', async () => {
      await svc.admin.get('/api/users/users/?username=admin');
      const start = versionsAsked(svc.host.db);
      await svc.admin.get('/api/users/users/?username=admin');
      // The caller's identity, the permission rows, the list's rows: one ask.
      assert.equal(versionsAsked(svc.host.db) - start, 1);
      await svc.admin.get('/api/users/users/?username=admin');
      assert.equal(versionsAsked(svc.host.db) - start, 2);
    });

    it('serves a kept answer at once (its own promise) once the request has read the versions, until a write of its tables, and keeps it across writes of others', async () => {
      const memo = svc.host.readMemo;
      const scope = { db: svc.host.db, inTransaction: false };
      let computed = 0;
      const compute = async () => ++computed;
      assert.equal(await memo.get(scope, 'served at once', compute, ['groups']), 1);
      const kept = memo.get(scope, 'served at once', compute, ['groups']);
      assert.equal(
        memo.get(scope, 'served at once', compute, ['groups']),
        kept,
        'the kept promise itself, with no read of the versions to wait for',
      );
      assert.equal(await kept, 1);
      await inTransaction(ctxOf(svc), (tx) =>
        tx.db
          .insertInto('groups')
          .values({ name: 'served', description: '', created: 'now', last_updated: 'now' })
          .execute(),
      );
      assert.equal(
        await memo.get(scope, 'served at once', compute, ['groups']),
        2,
        'its table written: computed afresh',
      );
      await bumpDataVersion(svc.host.db, ['webhooks']);
      assert.equal(
        await memo.get(scope, 'served at once', compute, ['groups']),
        2,
        'another table written: still kept',
      );
      const other = new SQLite(join(dir, 'one.sqlite'));
      try {
        other
          .prepare('update "data_version" set "version" = "version" + 1 where "id" in (1, ?)')
          .run(tableVersionRow('groups'));
        versionsMayHaveMoved();
        assert.equal(
          await memo.get(scope, 'served at once', compute, ['groups']),
          3,
          "another connection's commit of its table, once a request arrived: computed afresh",
        );
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
