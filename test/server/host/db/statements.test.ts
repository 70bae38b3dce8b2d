import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { databaseKind, observeStatements } from '../../../../server/host/db/database';
import pg from 'pg';
import { quoted, sentWithNext } from '../../../../server/host/db/pg-client';
import { COMMIT_TEXT } from '../../../support/database';
import { suiteService, type TestService } from '../../../support/service';

/**
 * On PostgreSQL a write transaction's BEGIN (with the write lock and the versions) goes with its
 * first statement, and writes marked `sentWithNext` (on PostgreSQL, held back and sent with the transaction's next
 * statement, values written into the text) behave as any write: in order, read back by the
 * transaction, committed with it or not at all.
 */
describe('database statements: writes sent with the next statement', () => {
  const svc = suiteService();

  const ctx = () => createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
  const version = async () =>
    (await svc.host.db.selectFrom('data_version').select('version').where('id', '=', 1).executeTakeFirstOrThrow())
      .version;
  const firstName = async (username: string) =>
    (
      await svc.host.db
        .selectFrom('users')
        .select('first_name')
        .where('username', '=', username)
        .executeTakeFirstOrThrow()
    ).first_name;
  const rename = (db: TestService['host']['db'], username: string, first: string) =>
    sentWithNext(db.updateTable('users').set({ first_name: first }).where('username', '=', username)).execute();

  it('are read back by their transaction and committed with it, quotes, backslashes and all', async () => {
    const v0 = await version();
    const seen: string[] = [];
    const stop = observeStatements(svc.host.db, (q) => seen.push(q));
    try {
      await inTransaction(ctx(), async (tx) => {
        await rename(tx.db, 'admin', `O'Brien \\ $1 "x"`);
        assert.equal(
          (
            await tx.db
              .selectFrom('users')
              .select('first_name')
              .where('username', '=', 'admin')
              .executeTakeFirstOrThrow()
          ).first_name,
          `O'Brien \\ $1 "x"`,
        );
        // A statement with a quote of its own: the held write goes first, by itself.
        await rename(tx.db, 'admin', 'Second');
        assert.equal(
          (await sql<{ n: string }>`select first_name as n from users where username = 'admin'`.execute(tx.db)).rows[0]!
            .n,
          'Second',
        );
        // The last write of the transaction goes with COMMIT.
        await rename(tx.db, 'admin', 'Third');
      });
    } finally {
      stop();
    }
    assert.equal(await firstName('admin'), 'Third');
    assert.equal(await version(), v0 + 1);
    if (databaseKind(svc.host.db) === 'postgres') {
      const held = seen.filter((q) => q.includes('/* sent with the next statement */'));
      assert.equal(held.length, 3, seen.join('\n'));
      // The transaction's first round trip: BEGIN (the lock, the versions), the write, the read.
      assert.match(
        held[0]!,
        /^begin; select pg_advisory_xact_lock\(.*\); select "id", "version" from "data_version"; update "users" set "first_name" = +E?'O''Brien .*; select "first_name" from "users"/,
      );
      assert.match(held[1]!, /^update "users" .*Second.*\*\/$/, 'sent by itself before the quoted statement');
      assert.match(held[2]!, new RegExp(`^update "users" .*Third.*; insert into "data_version" .*; ${COMMIT_TEXT}$`));
    }
  });

  it('are not written when their transaction fails, whether the write itself or what follows it fails', async () => {
    await svc.admin.post('/api/users/users/', { username: 'taken' });
    const v0 = await version();
    // The write refused (a name taken) is found out at the next statement: nothing of the transaction stays.
    await assert.rejects(
      inTransaction(ctx(), async (tx) => {
        await tx.db.updateTable('users').set({ first_name: 'Before' }).where('username', '=', 'admin').execute();
        await sentWithNext(
          tx.db.updateTable('users').set({ username: 'taken' }).where('username', '=', 'admin'),
        ).execute();
        await tx.db.selectFrom('users').select('id').execute();
      }),
    );
    // The same write last: found out at COMMIT.
    await assert.rejects(
      inTransaction(ctx(), async (tx) => {
        await tx.db.updateTable('users').set({ first_name: 'Before' }).where('username', '=', 'admin').execute();
        await sentWithNext(
          tx.db.updateTable('users').set({ username: 'taken' }).where('username', '=', 'admin'),
        ).execute();
      }),
    );
    // A held write, then the transaction fails for another reason.
    await assert.rejects(
      inTransaction(ctx(), async (tx) => {
        await rename(tx.db, 'admin', 'Never');
        throw new Error('refused');
      }),
      /refused/,
    );
    // On PostgreSQL the held writes go as prepared statements, prepared in the same text when
    // the connection has not prepared them yet: the first fails, so the second's `prepare`
    // never runs. It is prepared again when it is next sent, on whichever connection.
    const lastName = (db: TestService['host']['db'], value: string) =>
      sentWithNext(
        db.updateTable('users').set({ last_name: value }).where('username', '=', 'admin').where('id', '>', 0),
      ).execute();
    for (let i = 0; i < 3; i++) {
      await assert.rejects(
        inTransaction(ctx(), async (tx) => {
          await tx.db.selectFrom('users').select('id').where('username', '=', 'admin').execute();
          await sentWithNext(
            tx.db.updateTable('users').set({ username: 'taken' }).where('username', '=', 'admin').where('id', '>', 0),
          ).execute();
          await lastName(tx.db, `Never ${i}`);
        }),
      );
      await inTransaction(ctx(), async (tx) => {
        await tx.db.selectFrom('users').select('id').where('username', '=', 'admin').execute();
        await lastName(tx.db, `Written ${i}`);
      });
      assert.equal(
        (
          await svc.host.db
            .selectFrom('users')
            .select('last_name')
            .where('username', '=', 'admin')
            .executeTakeFirstOrThrow()
        ).last_name,
        `Written ${i}`,
      );
    }
    assert.equal(await firstName('admin'), 'Third');
    assert.equal(await version(), v0 + 3);
    // The connections are usable afterwards, in and out of transactions.
    await inTransaction(ctx(), async (tx) => rename(tx.db, 'admin', 'After'));
    assert.equal(await firstName('admin'), 'After');
  });

  it('begin with their first statement on PostgreSQL, and a transaction that reads or writes nothing sends nothing', async () => {
    const seen: string[] = [];
    const stop = observeStatements(svc.host.db, (q) => seen.push(q));
    const onPostgres = databaseKind(svc.host.db) === 'postgres';
    try {
      // Nothing read, nothing written: no round trip (on SQLite, BEGIN and COMMIT of its own connection).
      assert.equal(await inTransaction(ctx(), async () => 'nothing'), 'nothing');
      if (onPostgres) assert.deepEqual(seen, []);
      // Only a held write, then a failure: nothing was sent, nothing is written.
      seen.length = 0;
      await assert.rejects(
        inTransaction(ctx(), async (tx) => {
          await rename(tx.db, 'admin', 'Dropped');
          throw new Error('refused');
        }),
        /refused/,
      );
      if (onPostgres) assert.deepEqual(seen, []);
      assert.notEqual(await firstName('admin'), 'Dropped');
      // The first statement, a read with its values: in the round trip that begins, and answered.
      seen.length = 0;
      const read = await inTransaction(
        ctx(),
        async (tx) =>
          (await tx.db.selectFrom('users').select('username').where('username', '=', 'admin').executeTakeFirstOrThrow())
            .username,
      );
      assert.equal(read, 'admin');
      if (onPostgres) {
        assert.equal(seen.length, 2, seen.join('\n'));
        assert.match(
          seen[0]!,
          /^begin; select pg_advisory_xact_lock\(.*\); select "id", "version" from "data_version"; select "username" from "users" where "username" = 'admin'$/,
        );
        assert.equal(seen[1], 'commit');
      }
      // A first statement that fails ends the transaction: its error, nothing written, the connection usable.
      await assert.rejects(
        inTransaction(ctx(), async (tx) => {
          await sql`select * from no_such_table where id = ${1}`.execute(tx.db);
        }),
        /no_such_table/,
      );
      await inTransaction(ctx(), async (tx) => rename(tx.db, 'admin', 'Begun'));
      assert.equal(await firstName('admin'), 'Begun');
    } finally {
      stop();
    }
  });

  it("write a value into the text as the driver's own quoting does, whatever its quotes and backslashes", () => {
    const samples = [
      '',
      'plain',
      "O'Brien",
      "''",
      '\\',
      'a\\b',
      "it's a \\ path",
      "\\'",
      "E'x'",
      '$1 "x" ;',
      'ünïcødé \u{1F600}',
      '\n\t',
    ];
    // And some random ones, mostly of the characters that matter.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 200; n++)
      samples.push(Array.from({ length: next() % 12 }, () => 'ab\'\\ é"$'[next() % 8]).join(''));
    for (const text of samples) assert.equal(quoted(text), pg.escapeLiteral(text), JSON.stringify(text));
  });

  it('meet a NUL character in a value as a parameter does (PostgreSQL refuses it, naming it), first statement or held write', async () => {
    const onPostgres = databaseKind(svc.host.db) === 'postgres';
    const nul = 'a\0b';
    const refused = (err: unknown) => (err as { code?: string }).code === '22021';
    const read = inTransaction(ctx(), async (tx) =>
      tx.db.selectFrom('users').select('id').where('username', '=', nul).execute(),
    );
    if (onPostgres) await assert.rejects(read, refused);
    else assert.deepEqual(await read, []);
    const held = inTransaction(ctx(), async (tx) => {
      await tx.db.selectFrom('users').select('id').execute();
      await rename(tx.db, 'admin', nul);
    });
    if (onPostgres) await assert.rejects(held, refused);
    else await held;
    // The connections are usable afterwards.
    await inTransaction(ctx(), async (tx) => rename(tx.db, 'admin', 'Clean'));
    assert.equal(await firstName('admin'), 'Clean');
  });
});
