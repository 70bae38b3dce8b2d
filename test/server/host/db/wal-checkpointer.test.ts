import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, walCheckpointerOf, type OpenDatabase } from '../../../../server/host/db/database';
import { processSqliteDriver } from '../../../../server/host/db/sqlite-driver-choice';
import type { CheckpointerSettings, WalCheckpointer } from '../../../../server/host/db/wal-checkpointer';

/**
 * A SQLite file's write-ahead log checkpointed by a thread of its own while the service writes
 * (`server/host/db/wal-checkpointer.ts`): SQLite's automatic checkpoint is raised to a backstop
 * while the thread runs and set back when it ends, stops or dies.
 */
describe('database file: the checkpointer thread', () => {
  let dir = '';
  let file = '';
  let database: OpenDatabase;
  let checkpointer: WalCheckpointer;
  // Each write below adds about 5 pages (a 16 kB row). The thread starts once writes have added 20
  // pages (within an hour).
  const settings: CheckpointerSettings = {
    startPages: 20,
    startWindowMs: 3_600_000,
    checkpointPages: 100,
    backstopPages: 100_000,
    idleMs: 60_000,
  };

  async function open(overrides: Partial<CheckpointerSettings> = {}): Promise<void> {
    database = openDatabase(file, { checkpointer: { ...settings, ...overrides } });
    checkpointer = walCheckpointerOf(database.db)!;
    await sql`create table filler (id integer primary key, x blob)`.execute(database.db);
  }

  const write = () =>
    database.db.transaction().execute((tx) => sql`insert into filler (x) values (zeroblob(16384))`.execute(tx));
  const autocheckpoint = async () =>
    database.db
      .transaction()
      .execute(
        async (tx) =>
          Object.values((await sql.raw('pragma wal_autocheckpoint').execute(tx)).rows[0] as object)[0] as number,
      );
  const logBytes = () => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
  /** The largest the log file grew over `count` writes, each followed by what the checkpointer started. */
  async function writeMany(count: number): Promise<number> {
    let largest = 0;
    for (let i = 0; i < count; i++) {
      await write();
      await checkpointer.settled();
      largest = Math.max(largest, logBytes());
    }
    return largest;
  }
  async function started(): Promise<void> {
    while (checkpointer.state === 'off') await write();
    await checkpointer.running();
  }
  const rowCount = async () =>
    (await sql<{ n: number }>`select count(*) as n from filler`.execute(database.db)).rows[0]!.n;
  /** Once the database is closed: a connection reading no log finds `rows` rows in the file itself. */
  function findInFile(rows: number): void {
    const plain = processSqliteDriver().driver.open(file, { readonly: true });
    try {
      assert.equal((plain.prepare('select count(*) as n from filler').get([]) as { n: number }).n, rows);
    } finally {
      plain.close();
    }
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cc-checkpointer-'));
    file = join(dir, 'db.sqlite');
  });
  afterEach(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not started while the log is small, and leaves the automatic checkpoint at 1,000 pages', async () => {
    await open();
    await write();
    assert.equal(checkpointer.state, 'off');
    assert.equal(checkpointer.counts.started, 0);
    assert.equal(await autocheckpoint(), 1000);
  });

  it('counts only the pages added within its window: slower writes are left to the automatic checkpoint', async () => {
    // A window shorter than any commit: only a commit of 20 pages by itself would start it.
    await open({ startWindowMs: -1 });
    for (let i = 0; i < 20; i++) await write();
    assert.equal(checkpointer.state, 'off');
    await database.db.transaction().execute((tx) => sql`insert into filler (x) values (zeroblob(131072))`.execute(tx));
    assert.equal(checkpointer.state, 'starting');
    await checkpointer.running();
    assert.equal(checkpointer.state, 'on');
  });

  it('once started, raises the automatic checkpoint to the backstop and keeps the log bounded itself, every row kept', async () => {
    await open();
    await started();
    assert.equal(checkpointer.state, 'on');
    assert.equal(await autocheckpoint(), 100_000);
    // 300 writes of 5 pages: 1,500 pages, 6 MB, which the automatic checkpoint (at 100,000
    // pages now) would leave in the log.
    const largest = await writeMany(300);
    assert.ok(checkpointer.counts.checkpoints >= 10, `${checkpointer.counts.checkpoints} checkpoints`);
    assert.ok(largest < 150 * 4096, `log file of ${largest} bytes`);
    const rows = await rowCount();
    assert.ok(rows > 300);
    // Written into the database file itself: a connection that reads no log finds them all.
    await database.close();
    findInFile(rows);
    database = openDatabase(file, { checkpointer: false });
  });

  it('gives the writer its automatic checkpoint back for good when the thread dies, and the log stays bounded', async () => {
    await open();
    await started();
    await checkpointer.thread!.terminate();
    assert.equal(checkpointer.state, 'failed');
    assert.equal(checkpointer.thread, null);
    assert.equal(await autocheckpoint(), 1000);
    // 800 writes of 5 pages: 4,000 pages, which the automatic checkpoint cuts at about 1,000.
    const largest = await writeMany(800);
    assert.ok(largest < 1200 * 4200, `log file of ${largest} bytes`);
    assert.equal(checkpointer.counts.started, 1);
    assert.equal(checkpointer.state, 'failed');
  });

  it('ends the thread once no checkpoint was needed for a while, after copying the log, and starts one again when the log grows', async () => {
    await open({ idleMs: 20 });
    await started();
    const thread = checkpointer.thread!;
    await new Promise((resolve) => thread.once('exit', resolve));
    assert.equal(checkpointer.state, 'off');
    assert.equal(checkpointer.counts.checkpoints, 1);
    assert.equal(await autocheckpoint(), 1000);
    // The log was copied: the next write starts it again, and no thread starts for it.
    await write();
    assert.equal(checkpointer.state, 'off');
    await started();
    assert.equal(checkpointer.counts.started, 2);
  });

  it('is ended by close before the writer closes: no thread left, the log removed, no write lost', async () => {
    await open();
    await started();
    await writeMany(50);
    const thread = checkpointer.thread!;
    let exited = false;
    thread.once('exit', () => (exited = true));
    const rows = await rowCount();
    await database.close();
    assert.ok(exited);
    assert.equal(checkpointer.state, 'closed');
    assert.equal(checkpointer.thread, null);
    // The writer closed last: it copied the rest of the log and removed it.
    assert.equal(existsSync(`${file}-wal`), false);
    findInFile(rows);
    database = openDatabase(file, { checkpointer: false });
  });

  it('is absent for a database in memory and when turned off', async () => {
    const memory = openDatabase(':memory:');
    try {
      assert.equal(walCheckpointerOf(memory.db), undefined);
    } finally {
      await memory.close();
    }
    database = openDatabase(file, { checkpointer: false });
    assert.equal(walCheckpointerOf(database.db), undefined);
  });
});
