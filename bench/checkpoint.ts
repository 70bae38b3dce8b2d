// How long a commit holds the event loop, by the write-ahead log's automatic checkpoint size.
//   npx tsx bench/checkpoint.ts [pages ...]   (default: 1000 500 200 100)
// A file database set up as the service sets its own (WAL, synchronous = NORMAL, an 8 MB cache),
// written by transactions the size of scenario 9's writes (about 20 pages each: rows appended to
// three indexed tables, as the changelog, stream events and comments are, and rows of a
// 20,000-row table updated, as checks and reviews are). For each `wal_autocheckpoint`: the
// commits' durations (mean, p99, max, how many over 2 and 5 ms), and the largest the log file
// grew. COMMITS (default 3,000) commits per setting. Variants, for what the wait is made of:
// SYNC=OFF runs without any fsync (not safe for the service: to measure the copy alone);
// MANUAL=N checkpoints by hand after every N commits, its fsyncs outside the timed commit
// (MODE=copy: the copy itself runs without fsync, timed as "checkpoints"; MODE=safe: the copy
// runs with its fsyncs, after the log was written to disk ahead).
// WORKER=1 runs the service's checkpointer thread (`server/host/db/wal-checkpointer.ts`) beside
// the commits instead, the pages given being its `checkpointPages`; the event loop turns between
// commits (GAP=ms waits that long between commits, in either mode), and "writes held" is how long commits waited for the
// writer lock its second pass holds.
import SQLite from 'better-sqlite3';
import { fdatasyncSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { betterSqlite3 } from '../server/host/db/sqlite-better-sqlite3';
import type { SqliteConnection } from '../server/host/db/sqlite-driver';
import { DEFAULT_CHECKPOINTER, WalCheckpointer } from '../server/host/db/wal-checkpointer';

const MANUAL = Number(process.env.MANUAL ?? 0);
const MODE = process.env.MODE ?? 'copy';
const COMMITS = Number(process.env.COMMITS ?? 3000);
const WORKER = process.env.WORKER === '1';
const GAP = Number(process.env.GAP ?? 0);
const settings = process.argv.slice(2).map(Number);
if (settings.length === 0) settings.push(1000, 500, 200, 100);

/** The service's writer lock, as `database.ts` has it: one at a time, in order. */
function fifoLock(): { lock(): Promise<void>; unlock(): void } {
  let held = false;
  const waiting: Array<() => void> = [];
  return {
    async lock() {
      if (!held) held = true;
      else await new Promise<void>((resolve) => waiting.push(resolve));
    },
    unlock() {
      const next = waiting.shift();
      if (next) next();
      else held = false;
    },
  };
}

async function run(pages: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-checkpoint-'));
  const file = join(dir, 'bench.sqlite3');
  try {
    const db = new SQLite(file);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${process.env.SYNC ?? 'NORMAL'}`);
    db.pragma('cache_size = -8000');
    db.exec(`
      create table big (id integer primary key, status text, summary text, updated integer);
      create index big_status on big (status, updated);
      create table log (id integer primary key, object integer, at integer, data text);
      create index log_object on log (object, at);
      create table events (id integer primary key, topic integer, data text);
      create index events_topic on events (topic, id);
      create table notes (id integer primary key, parent integer, body text);
      create index notes_parent on notes (parent);
    `);
    const seed = db.prepare('insert into big (status, summary, updated) values (?, ?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 20000; i++) seed.run(i % 3 ? 'success' : 'failure', 'x'.repeat(200), i);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma(`wal_autocheckpoint = ${pages}`);
    const update = db.prepare('update big set status = ?, summary = ?, updated = ? where id = ?');
    const log = db.prepare('insert into log (object, at, data) values (?, ?, ?)');
    const event = db.prepare('insert into events (topic, data) values (?, ?)');
    const note = db.prepare('insert into notes (parent, body) values (?, ?)');
    const begin = db.prepare('begin immediate');
    const commit = db.prepare('commit');
    const wal = `${file}-wal`;
    const durations: number[] = [];
    let largest = 0;
    let walFd: number | undefined;
    let dbFd: number | undefined;
    const checkpoints: number[] = [];
    const lock = fifoLock();
    const checkpointer = WORKER
      ? new WalCheckpointer(db as unknown as SqliteConnection, betterSqlite3, file, lock, {
          ...DEFAULT_CHECKPOINTER,
          startPages: 1,
          checkpointPages: pages,
        })
      : null;
    let writesHeld = 0;
    if (checkpointer) {
      db.prepare('update big set updated = updated where id = 1').run();
      checkpointer.committed();
      await checkpointer.running();
    }
    for (let n = 0; n < COMMITS; n++) {
      if (checkpointer) {
        const waited = performance.now();
        await lock.lock();
        writesHeld += performance.now() - waited;
      }
      begin.run();
      for (let k = 0; k < 4; k++)
        update.run(
          n % 2 ? 'success' : 'failure',
          `run ${n} ${'y'.repeat(150)}`,
          n,
          1 + ((n * 7919 + k * 104729) % 20000),
        );
      for (let k = 0; k < 3; k++) log.run((n * 31 + k) % 5000, n, 'z'.repeat(400));
      for (let k = 0; k < 2; k++) event.run(n % 40, 'e'.repeat(300));
      note.run(n % 2000, 'n'.repeat(300));
      const start = performance.now();
      commit.run();
      if (MANUAL && n % MANUAL === MANUAL - 1) {
        // Off the loop in the service: the log's pages written to disk before the copy.
        fdatasyncSync((walFd ??= openSync(wal, 'r+')));
        const copy = performance.now();
        if (MODE === 'copy') db.pragma('synchronous = OFF');
        db.pragma('wal_checkpoint(PASSIVE)');
        if (MODE === 'copy') db.pragma('synchronous = NORMAL');
        checkpoints.push(performance.now() - copy);
        // Off the loop too: the database's pages written to disk after the copy.
        if (MODE === 'copy') fdatasyncSync((dbFd ??= openSync(file, 'r+')));
        durations.push(copy - start);
        continue;
      }
      durations.push(performance.now() - start);
      if (n % 50 === 0) largest = Math.max(largest, statSync(wal).size);
      if (checkpointer) {
        lock.unlock();
        checkpointer.committed();
      }
      if (checkpointer || GAP) await new Promise((resolve) => (GAP ? setTimeout(resolve, GAP) : setImmediate(resolve)));
    }
    largest = Math.max(largest, statSync(wal).size);
    if (checkpointer) {
      await checkpointer.settled();
      checkpoints.push(checkpointer.counts.checkpoints);
      await checkpointer.stop();
    }
    db.close();
    checkpointer?.release();
    const sorted = [...durations].sort((a, b) => a - b);
    const total = durations.reduce((a, b) => a + b, 0);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return [
      `${checkpointer ? 'thread at' : 'wal_autocheckpoint'} ${String(pages).padStart(4)}:`,
      `mean ${(total / COMMITS).toFixed(3)} ms`,
      `p99 ${at(0.99).toFixed(2)} ms`,
      `p99.9 ${at(0.999).toFixed(2)} ms`,
      `max ${sorted[sorted.length - 1]!.toFixed(2)} ms`,
      `> 2 ms ${durations.filter((d) => d > 2).length}`,
      `> 5 ms ${durations.filter((d) => d > 5).length}`,
      ...(checkpointer ? [`thread checkpoints ${checkpoints[0]}, writes held ${writesHeld.toFixed(0)} ms in all`] : []),
      ...(checkpoints.length && !checkpointer
        ? [
            `checkpoints ${checkpoints.length}: mean ${(checkpoints.reduce((a, b) => a + b, 0) / checkpoints.length).toFixed(2)} ms, max ${Math.max(...checkpoints).toFixed(2)} ms`,
          ]
        : []),
      `log file ≤ ${(largest / 1024 / 1024).toFixed(1)} MB`,
    ].join(', ');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Twice round, so that each setting is measured once early and once late in the machine's load.
void (async () => {
  // The checkpointer's thread does not keep a process alive by itself (the service's server does).
  const alive = setInterval(() => undefined, 1000);
  for (let round = 0; round < 2; round++) for (const pages of settings) console.log(await run(pages));
  clearInterval(alive);
})();
