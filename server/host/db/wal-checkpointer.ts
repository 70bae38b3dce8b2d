import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { SqliteConnection, SqliteDriver } from './sqlite-driver';

/**
 * The writer's automatic checkpoint when no checkpointer thread runs: SQLite copies the
 * write-ahead log into the database inside the commit that takes the log past this many pages,
 * while the event loop waits.
 */
export const AUTOMATIC_CHECKPOINT_PAGES = 1000;

export interface CheckpointerSettings {
  /**
   * The thread is started when this process's commits have added this many pages to the log
   * within `startWindowMs` (it runs only while the service writes that fast: a burst below it is
   * left to the automatic checkpoint, one wait now and then).
   */
  startPages: number;
  startWindowMs: number;
  /** Pages not yet in the database at which the thread copies them. */
  checkpointPages: number;
  /**
   * The writer's own automatic checkpoint while the thread runs: should the thread fall behind
   * or stop answering, the log still never grows past this many pages.
   */
  backstopPages: number;
  /**
   * The thread ends once this long has passed without a checkpoint (its memory returns to the
   * system), after copying what the log holds.
   */
  idleMs: number;
}

export const DEFAULT_CHECKPOINTER: CheckpointerSettings = {
  startPages: 2 * AUTOMATIC_CHECKPOINT_PAGES,
  startWindowMs: 2_000,
  // Each whole checkpoint makes the next commit start the log again, which syncs its header
  // inside that commit: fewer, larger checkpoints make fewer slow commits. The log's file stays
  // within `journal_size_limit` between them.
  checkpointPages: 4 * AUTOMATIC_CHECKPOINT_PAGES,
  backstopPages: 16 * AUTOMATIC_CHECKPOINT_PAGES,
  idleMs: 5_000,
};

/**
 * The checkpointer thread: a connection of its own to the file (through the service's driver,
 * better-sqlite3 or `node:sqlite`), one PASSIVE checkpoint per
 * message (it copies what no reader still needs, waits for nobody and never blocks the writer).
 * Its synchronous setting is the writer's: the log is written to disk before the copy, the
 * database after it, both here, off the event loop.
 */
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db;
if (workerData.driver === 'node:sqlite') {
  const { DatabaseSync } = require('node:sqlite');
  const connection = new DatabaseSync(workerData.file);
  db = { pragma: (text) => connection.prepare('pragma ' + text).all(), close: () => connection.close() };
} else {
  const SQLite = require(workerData.driver);
  db = new SQLite(workerData.file, { fileMustExist: true });
}
db.pragma('synchronous = NORMAL');
db.pragma('cache_size = -64');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const row = db.pragma('wal_checkpoint(PASSIVE)')[0];
    parentPort.postMessage({ log: row.log, checkpointed: row.checkpointed });
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});
parentPort.postMessage('ready');`;

/**
 * The thread's JavaScript engine kept small: it runs a few lines (limits, not reservations; a
 * thread out of memory ends, and the writer's own automatic checkpoint takes over).
 */
const THREAD_LIMITS = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 1, codeRangeSizeMb: 1, stackSizeMb: 1 };

/** How long `stop` lets the thread close its connection before ending it. */
const STOP_GRACE_MS = 5_000;

/** Offsets in the WAL-index (the `-shm` file; https://sqlite.org/walformat.html): its version, `mxFrame`, `nBackfill`. */
const WAL_INDEX_VERSION = 3007000;
const HEADER_BYTES = 100;

type Reply = { log: number; checkpointed: number } | { error: string };

export type CheckpointerState = 'off' | 'starting' | 'on' | 'failed' | 'closed';

/**
 * Checkpoints a SQLite file's write-ahead log from a thread of its own, so that the copy and its
 * two fsyncs never hold the event loop (SQLite's automatic checkpoint runs inside a commit).
 *
 * - Started when the commits of this process have added `startPages` pages to the log within
 *   `startWindowMs` (by default 2,000 pages in 2 s: SQLite's own checkpoint would wait in a
 *   commit every second or more often); ended once `idleMs` has passed without a checkpoint,
 *   after copying the log (the writer's automatic checkpoint is back from then on).
 * - While it runs, the writer's automatic checkpoint is raised to `backstopPages` (never off):
 *   the log stays bounded whatever the thread does. If the thread dies, the writer's automatic
 *   checkpoint is set back to 1,000 pages for good (this handle never starts another).
 * - A checkpoint is two PASSIVE passes: the first while writes go on; the second, for what was
 *   committed meanwhile, holding this process's writer lock (writes wait, reads do not): so it
 *   copies the whole log and the writer's next transaction starts the log again from its start,
 *   as after an automatic checkpoint. Other processes on the file are held back by SQLite's own
 *   locks only; a PASSIVE checkpoint never waits for them.
 * - How many pages are not yet copied is read after each commit from the WAL-index (the `-shm`
 *   file SQLite maps): a read of 100 bytes, no lock taken. The file is opened once and closed
 *   only after every SQLite connection of this process to the database has closed (closing any
 *   descriptor of a file drops the POSIX locks the process holds on it, SQLite's included).
 */
export class WalCheckpointer {
  private worker: Worker | null = null;
  private current: CheckpointerState = 'off';
  private inFlight: Promise<void> | null = null;
  private answer: { resolve: (reply: Reply) => void; reject: (err: Error) => void } | null = null;
  private checkpointsSeen = 0;
  /** The log's frames at the last commit, and the pages added since `windowStart`: while no thread runs. */
  private lastFrames = 0;
  private windowStart = 0;
  private addedInWindow = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private shm: number | null = null;
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private readonly littleEndian = endianness() === 'LE';
  /** Checkpoints completed by the thread, and threads started: for tests and benchmarks. */
  readonly counts = { checkpoints: 0, started: 0 };
  private readyListeners: Array<() => void> = [];

  constructor(
    private readonly writer: SqliteConnection,
    private readonly driver: SqliteDriver,
    private readonly file: string,
    private readonly writerLock: { lock(): Promise<void>; unlock(): void },
    private readonly settings: CheckpointerSettings = DEFAULT_CHECKPOINTER,
  ) {}

  get state(): CheckpointerState {
    return this.current;
  }

  /** The thread, while one runs (tests end it to see the fallback). */
  get thread(): Worker | null {
    return this.worker;
  }

  /** Resolves once a thread has started, or failed to (tests and benchmarks). */
  running(): Promise<void> {
    if (this.current !== 'starting' && this.current !== 'off') return Promise.resolve();
    return new Promise((resolve) => this.readyListeners.push(resolve));
  }

  /** Resolves once no checkpoint is in progress (tests and benchmarks). */
  async settled(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** Called after each commit of the writer. */
  committed(): void {
    if (this.current === 'on') {
      if (!this.inFlight && this.pendingPages() >= this.settings.checkpointPages) this.run(() => this.checkpoint());
    } else if (this.current === 'off') {
      const frames = this.readHeader() ? this.u32(16) : 0;
      // The log starts again from its start after a checkpoint: then every frame it holds is new.
      const added = frames >= this.lastFrames ? frames - this.lastFrames : frames;
      this.lastFrames = frames;
      const now = performance.now();
      if (now - this.windowStart > this.settings.startWindowMs) {
        this.windowStart = now;
        this.addedInWindow = 0;
      }
      this.addedInWindow += added;
      if (this.addedInWindow >= this.settings.startPages) this.start();
    }
  }

  /** Ends the thread (its connection closed first) and gives the writer its automatic checkpoint back. */
  async stop(): Promise<void> {
    if (this.current === 'closed') return;
    const wasFailed = this.current === 'failed';
    this.current = 'closed';
    clearInterval(this.idleTimer);
    if (!wasFailed) this.automatic();
    await this.end();
  }

  /** After every SQLite connection of the process to the file has closed: the WAL-index's descriptor. */
  release(): void {
    if (this.shm !== null) closeSync(this.shm);
    this.shm = null;
  }

  /** Reads the WAL-index's header into `header`: whether it could be read (and is the version known). */
  private readHeader(): boolean {
    try {
      this.shm ??= openSync(`${this.file}-shm`, 'r');
      if (readSync(this.shm, this.header, 0, HEADER_BYTES, 0) < HEADER_BYTES) return false;
    } catch {
      return false;
    }
    return this.u32(0) === WAL_INDEX_VERSION;
  }

  private u32(offset: number): number {
    return this.littleEndian ? this.header.readUInt32LE(offset) : this.header.readUInt32BE(offset);
  }

  /** Pages of the log not yet copied into the database (`mxFrame` less `nBackfill`; 0 when that cannot be read). */
  private pendingPages(): number {
    return this.readHeader() ? Math.max(0, this.u32(16) - this.u32(96)) : 0;
  }

  private start(): void {
    this.current = 'starting';
    this.addedInWindow = 0;
    this.counts.started++;
    let worker: Worker;
    try {
      worker = new Worker(CHECKPOINTER_SOURCE, {
        eval: true,
        workerData: { driver: this.driver.threadModule(), file: this.file },
        resourceLimits: THREAD_LIMITS,
        // Plain JavaScript: none of the process's own options (a loader, heap sizes) apply to it.
        execArgv: [],
      });
    } catch {
      // Called after a commit: a thread that cannot start never fails the write, the writer checkpoints for itself.
      this.current = 'failed';
      for (const listener of this.readyListeners.splice(0)) listener();
      return;
    }
    worker.unref();
    this.worker = worker;
    worker.on('message', (message: 'ready' | Reply) => {
      if (message === 'ready') this.ready(worker);
      else this.answered(message);
    });
    worker.on('error', () => this.died(worker));
    worker.on('exit', () => this.died(worker));
  }

  private ready(worker: Worker): void {
    if (this.worker !== worker || this.current !== 'starting' || !this.writer.open) return;
    this.current = 'on';
    this.writer.pragma(`wal_autocheckpoint = ${this.settings.backstopPages}`);
    this.checkpointsSeen = this.counts.checkpoints;
    this.idleTimer = setInterval(() => this.idleCheck(), this.settings.idleMs);
    this.idleTimer.unref();
    for (const listener of this.readyListeners.splice(0)) listener();
  }

  private idleCheck(): void {
    if (this.counts.checkpoints !== this.checkpointsSeen || this.inFlight) {
      this.checkpointsSeen = this.counts.checkpoints;
      return;
    }
    clearInterval(this.idleTimer);
    // What the log holds is copied first.
    this.run(async () => {
      await this.checkpoint();
      if (this.current !== 'on') return;
      this.automatic();
      this.current = 'off';
      await this.end();
    });
  }

  /** One checkpoint (or the end) at a time: commits meanwhile start none. */
  private run(task: () => Promise<void>): void {
    this.inFlight = task().finally(() => {
      this.inFlight = null;
    });
  }

  /** A thread that stops unasked: the writer checkpoints for itself again, for good. */
  private died(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.answer?.reject(new Error('the checkpointer thread stopped'));
    this.answer = null;
    if (this.current === 'closed') return;
    clearInterval(this.idleTimer);
    this.current = 'failed';
    this.automatic();
    for (const listener of this.readyListeners.splice(0)) listener();
  }

  private automatic(): void {
    if (this.writer.open) this.writer.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
  }

  /** Asks the thread to close its connection and waits for it to exit (ended by force after a grace period). */
  private async end(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    this.answer?.reject(new Error('the checkpointer thread was stopped'));
    this.answer = null;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    const force = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
    await exited;
    clearTimeout(force);
  }

  private ask(): Promise<Reply> {
    const worker = this.worker;
    if (!worker) return Promise.reject(new Error('no checkpointer thread'));
    return new Promise<Reply>((resolve, reject) => {
      this.answer = { resolve, reject };
      worker.postMessage('checkpoint');
    });
  }

  private answered(reply: Reply): void {
    const answer = this.answer;
    this.answer = null;
    answer?.resolve(reply);
  }

  private async checkpoint(): Promise<void> {
    try {
      const first = await this.ask();
      // What a checkpoint says it copied is the log as it began; commits made while it ran are
      // read from the WAL-index.
      if ('error' in first || first.checkpointed < first.log || this.pendingPages() > 0) {
        // Committed meanwhile: copied with this process's writes held back, so that the whole log is copied.
        await this.writerLock.lock();
        try {
          if (this.current === 'on') await this.ask();
        } finally {
          this.writerLock.unlock();
        }
      }
      this.counts.checkpoints++;
    } catch {
      // The thread stopped (`died` or `stop` has given the writer its automatic checkpoint back).
    }
  }
}
