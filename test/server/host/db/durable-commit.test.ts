import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { observeStatements, openDatabase, type OpenDatabase } from '../../../../server/host/db/database';
import { createDataVersion } from '../../../../server/host/db/data-version';
import { SENT_WITH_NEXT } from '../../../../server/host/db/pg-client';
import { newTestSchemaUrl, onPostgres, TEST_DATABASE_URL } from '../../../support/database';

/** The URL of a schema with `synchronous_commit` set for every session. */
function withSynchronousCommit(url: string, setting: 'on' | 'off'): string {
  const u = new URL(url);
  u.searchParams.set('options', `${u.searchParams.get('options') ?? ''} -c synchronous_commit=${setting}`.trim());
  return u.toString();
}

/**
 * On PostgreSQL a write transaction commits without waiting for the log's flush, so that the
 * write lock passes to the next writer at once, and its round trip then waits for the flush
 * (the flush barrier after COMMIT): the caller is answered once the transaction is durable.
 * Runs when the service tests run on PostgreSQL (TEST_DATABASE_URL).
 */
if (onPostgres) {
  describe('PostgreSQL: a write transaction answered once durable, the write lock released before the flush', () => {
    let durable: OpenDatabase;
    let asynchronous: OpenDatabase;
    let admin: pg.Client;

    before(async () => {
      const schema = await newTestSchemaUrl();
      durable = openDatabase(withSynchronousCommit(schema, 'on'));
      asynchronous = openDatabase(withSynchronousCommit(schema, 'off'));
      await createDataVersion(durable.db);
      await sql`create table kept (id integer primary key, value text not null)`.execute(durable.db);
      admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
    });

    after(async () => {
      await durable?.close();
      await asynchronous?.close();
      await admin?.end();
    });

    const statementsOf = async (db: OpenDatabase, work: () => Promise<unknown>): Promise<string[]> => {
      const seen: string[] = [];
      const stop = observeStatements(db.db, (q) => seen.push(q));
      try {
        await work().catch((err: unknown) => {
          seen.push(`failed: ${(err as Error).message}`);
        });
      } finally {
        stop();
      }
      return seen;
    };

    const valueOf = async (id: number) =>
      (await sql<{ value: string }>`select value from kept where id = ${id}`.execute(durable.db)).rows[0];
    /** A write held back to go with the transaction's next statement. */
    const held = (query: ReturnType<typeof sql>) => sql`${query} ${sql.raw(SENT_WITH_NEXT)}`;

    it('ends a transaction that wrote with COMMIT and the barrier, and answers once the log is flushed past its writes', async () => {
      for (let i = 1; i <= 5; i++) {
        let written = '';
        const seen = await statementsOf(durable, () =>
          durable.db.transaction().execute(async (trx) => {
            await sql`insert into kept (id, value) values (${i}, ${`row ${i}`})`.execute(trx);
            written = (await sql<{ lsn: string }>`select pg_current_wal_insert_lsn()::text as lsn`.execute(trx))
              .rows[0]!.lsn;
          }),
        );
        // Asked at once, on another connection: the log is on disk at least as far as the writes.
        const { rows } = await admin.query<{ flushed: boolean }>(
          'select pg_current_wal_flush_lsn() >= $1::pg_lsn as flushed',
          [written],
        );
        assert.equal(rows[0]!.flushed, true, `the log was not flushed past ${written} when the commit answered`);
        assert.equal(
          seen.at(-1),
          "set local synchronous_commit to off; commit; select pg_logical_emit_message(true, 'change-control', '')",
          seen.join('\n'),
        );
        assert.equal((await valueOf(i))?.value, `row ${i}`);
      }
    });

    it('sends the writes it held with that COMMIT, and nothing of a transaction whose held write fails is written', async () => {
      const seen = await statementsOf(durable, () =>
        durable.db.transaction().execute(async (trx) => {
          await held(sql`update kept set value = ${'held'} where id = ${1}`).execute(trx);
        }),
      );
      assert.match(
        seen.at(-1)!,
        /^begin; .*; update kept set value = 'held' where id = '?1'? \/\* sent with the next statement \*\/; set local synchronous_commit to off; commit; select pg_logical_emit_message\(true, 'change-control', ''\)$/s,
      );
      assert.equal((await valueOf(1))?.value, 'held');

      // The held write fails when the COMMIT's text runs: neither COMMIT nor the barrier runs after it.
      const failed = await statementsOf(durable, () =>
        durable.db.transaction().execute(async (trx) => {
          await sql`update kept set value = ${'never'} where id = ${2}`.execute(trx);
          await held(sql`insert into kept (id, value) values (${1}, ${'duplicate'})`).execute(trx);
        }),
      );
      assert.match(failed.at(-1)!, /^failed: .*duplicate key/, failed.join('\n'));
      assert.equal((await valueOf(2))?.value, 'row 2');
      // The connections are usable afterwards.
      await durable.db.transaction().execute(async (trx) => {
        await sql`update kept set value = ${'after'} where id = ${2}`.execute(trx);
      });
      assert.equal((await valueOf(2))?.value, 'after');
    });

    it('ends a transaction that only read with a plain COMMIT (it has nothing to flush)', async () => {
      const seen = await statementsOf(durable, () =>
        durable.db.transaction().execute(async (trx) => {
          await sql`select value from kept where id = ${1}`.execute(trx);
        }),
      );
      assert.equal(seen.at(-1), 'commit', seen.join('\n'));
    });

    it('ends a write with a plain COMMIT in a session that commits without waiting for the flush anyway', async () => {
      const seen = await statementsOf(asynchronous, () =>
        asynchronous.db.transaction().execute(async (trx) => {
          await sql`insert into kept (id, value) values (${10}, ${'asynchronous'})`.execute(trx);
        }),
      );
      assert.equal(seen.at(-1), 'commit', seen.join('\n'));
      assert.equal((await valueOf(10))?.value, 'asynchronous');
    });
  });
}
