import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type OpenDatabase } from '../../../../server/host/db/database';
import {
  createDataVersion,
  readDataVersions,
  VERSION_READS_IN_FLIGHT,
  VERSIONS_READ_SQL,
  type DataVersions,
} from '../../../../server/host/db/data-version';
import { newTestSchemaUrl, onPostgres, TEST_DATABASE_URL } from '../../../support/database';

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * On PostgreSQL each read of the versions outside a transaction is a round trip, shared by the
 * callers that asked before it was sent; two may be on their way at once. Runs when the service
 * tests run on PostgreSQL (TEST_DATABASE_URL).
 */
if (onPostgres) {
  describe('PostgreSQL: reads of the versions outside transactions', () => {
    let database: OpenDatabase;
    let admin: pg.Client;
    /** Watches the reads from outside the lock's transaction (inside one, pg_stat_activity is a snapshot taken at its first use). */
    let watcher: pg.Client;
    let schema = '';

    before(async () => {
      const url = await newTestSchemaUrl();
      schema = /search_path=(\w+)/.exec(decodeURIComponent(url))![1]!;
      database = openDatabase(url);
      await createDataVersion(database.db);
      admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      watcher = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await watcher.connect();
    });

    after(async () => {
      await database?.close();
      await admin?.end();
      await watcher?.end();
    });

    /** How many reads of the versions are on their way (waiting for the table's lock). */
    const waitingReads = async () =>
      (
        await watcher.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where query = $1 and wait_event_type = 'Lock'`,
          [VERSIONS_READ_SQL],
        )
      ).rows[0]!.n;

    it('sends the next read at the end of the turn while one is on its way, two at most, shared by every caller that asked before it went', async () => {
      assert.equal(VERSION_READS_IN_FLIGHT, 2);
      // Three connections open in the pool (a connection opening meanwhile would wait for the lock too).
      await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(database.db)));
      // The table locked by another session: every read of it waits, on its way, until the lock goes.
      await admin.query('begin');
      await admin.query(`lock table ${schema}.data_version in access exclusive mode`);
      let released = false;
      try {
        const first = readDataVersions(database.db);
        await turn();
        // Asked while the first is on its way: one read for both, sent at the end of the turn.
        const second = [readDataVersions(database.db), readDataVersions(database.db)];
        await turn();
        // Two are on their way: the third waits for one of them to come back.
        const third = [readDataVersions(database.db), readDataVersions(database.db)];
        for (let i = 0; i < 50 && (await waitingReads()) < 2; i++) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(await waitingReads(), 2, 'two reads on their way, the third held back');
        // A commit made before the third read was sent (the lock's own transaction): the third sees it.
        await admin.query(`update ${schema}.data_version set version = version + 1 where id = 1`);
        await admin.query('commit');
        released = true;
        const answers: DataVersions[] = await Promise.all([first, ...second, ...third]);
        // One read's answer for the callers that shared it, another for the next ones.
        assert.equal(answers[1], answers[2]);
        assert.equal(answers[3], answers[4]);
        assert.notEqual(answers[1], answers[3]);
        assert.notEqual(answers[0], answers[1]);
        // The first two may have read before the commit or after it; the third went after it.
        assert.deepEqual(
          answers.slice(3).map((a) => a.global),
          [1, 1],
        );
        // Nothing on its way any more: the next read goes at once, alone.
        assert.equal((await readDataVersions(database.db)).global, 1);
      } finally {
        if (!released) await admin.query('rollback');
      }
    });
  });
}
