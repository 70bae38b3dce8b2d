import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type OpenDatabase } from '../../../../server/host/db/database';
import {
  createDataVersion,
  readDataVersions,
  VERSIONS_READ_SQL,
  type DataVersions,
} from '../../../../server/host/db/data-version';
import { newTestSchemaUrl, onPostgres, TEST_DATABASE_URL } from '../../../support/database';

/**
 * On PostgreSQL each read of the versions outside a transaction is a round trip: callers asking
 * while one is on its way share the next, sent once it answers. Runs when the service tests run
 * on PostgreSQL (TEST_DATABASE_URL).
 */
if (onPostgres) {
  describe('PostgreSQL: reads of the versions outside transactions', () => {
    let database: OpenDatabase;
    let admin: pg.Client;
    /** Watches the reads from outside the lock's transaction. */
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
          `select count(*)::int as n from pg_stat_activity where query = $1 and wait_event_type = 'Lock' and datname = current_database()`,
          [VERSIONS_READ_SQL],
        )
      ).rows[0]!.n;

    it('shares one read among the callers that asked while another was on its way, sent after it answers, which sees what was committed before they asked', async () => {
      // Two connections open in the pool (a connection opening meanwhile would wait for the lock too).
      await Promise.all([1, 2].map(() => sql`select pg_sleep(0.05)`.execute(database.db)));
      // The table locked by another session: every read of it waits, on its way, until the lock goes.
      await admin.query('begin');
      await admin.query(`lock table ${schema}.data_version in access exclusive mode`);
      let released = false;
      try {
        const first = readDataVersions(database.db);
        const next = [readDataVersions(database.db), readDataVersions(database.db)];
        for (let i = 0; i < 50 && (await waitingReads()) < 1; i++) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(await waitingReads(), 1, 'one read on its way, the next held back until it answers');
        // A commit made before the next read was sent (the lock's own transaction): it sees it.
        await admin.query(`update ${schema}.data_version set version = version + 1 where id = 1`);
        await admin.query('commit');
        released = true;
        const answers: DataVersions[] = await Promise.all([first, ...next]);
        assert.equal(answers[1], answers[2], 'one answer for the callers that shared the read');
        assert.notEqual(answers[0], answers[1]);
        assert.deepEqual([answers[1]!.global, answers[2]!.global], [1, 1]);
        // Nothing on its way any more: the next read goes at once, alone.
        assert.equal((await readDataVersions(database.db)).global, 1);
      } finally {
        if (!released) await admin.query('rollback');
      }
    });
  });
}
