import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import type * as Pg from 'pg';
import { LocalCommitSignal, type CommitSignal } from '../core/commit-signal';
import type { UnawaitedWork } from '../core/unawaited';
import { databaseKind, onClose, postgresUrlOf, type HostDb, type Queryable } from './database';
import { pgDriver } from './pg-driver';

/**
 * The commit signal of a channel for this database (`core/commit-signal.ts`): in memory on
 * SQLite (one process); on PostgreSQL, `NOTIFY <channel>` after the commit, heard by every
 * instance through one `LISTEN` connection per process and channel, so a client of one
 * instance hears of an event written by another at once. An instance listens only while it
 * has listeners (the event stream's: while a stream is open), and keeps its `LISTEN`
 * connection a minute after the last one leaves; without one, PostgreSQL wakes no listener of
 * it at each commit. The writer's own listeners are
 * called at once, by the writer: its notifications name it (the payload), and what comes back
 * of them through its own `LISTEN` is not heard again (a busy writer would otherwise wake its
 * listeners twice per commit).
 *
 * Opening the `LISTEN` connection is work set off without awaiting: it goes through `unawaited`.
 */
export function commitSignal(db: HostDb, channel: string, unawaited: UnawaitedWork): CommitSignal {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  if (databaseKind(db) === 'sqlite') return new LocalCommitSignal();
  const signal = new PostgresCommitSignal(db, postgresUrlOf(db)!, channel, unawaited);
  onClose(db, () => signal.close());
  return signal;
}

/** How long an instance keeps listening after its last listener left (a stream reconnecting meanwhile reuses the connection). */
const LINGER_MS = 60_000;

class PostgresCommitSignal implements CommitSignal {
  private readonly local = new LocalCommitSignal();
  private client: Pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  /** Ends the LISTEN connection once no listener has come back for a while. */
  private linger: NodeJS.Timeout | undefined;
  /** This signal's name in its notifications' payload. */
  private readonly self = randomUUID();

  constructor(
    private readonly db: HostDb,
    private readonly url: string,
    private readonly channel: string,
    private readonly unawaited: UnawaitedWork,
  ) {}

  async notify(): Promise<void> {
    this.local.wakeListeners();
    await sql`select pg_notify(${this.channel}, ${this.self})`.execute(this.db).catch(() => undefined);
  }

  /**
   * `NOTIFY` once the transaction has committed (never if it rolls back), from a connection of
   * the pool: not a round trip while the transaction holds the write lock.
   */
  async notifyOnCommit(_trx: Queryable, afterCommit: (task: () => Promise<void>) => void): Promise<void> {
    afterCommit(() => this.notify());
  }

  subscribe(listener: () => void): () => void {
    clearTimeout(this.linger);
    const unsubscribe = this.local.subscribe(listener);
    this.listen();
    return () => {
      unsubscribe();
      if (this.local.size > 0 || this.closed) return;
      clearTimeout(this.linger);
      this.linger = setTimeout(() => {
        if (this.local.size === 0) void this.unlisten();
      }, LINGER_MS);
      this.linger.unref();
    };
  }

  /**
   * Opens the LISTEN connection once; a lost one is opened again. Listeners are called once it
   * listens: they re-read (they may have missed a signal before it did).
   */
  private listen(): void {
    if (this.client || this.closed) return;
    const client = new (pgDriver().Client)({ connectionString: this.url });
    this.client = client;
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = null;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.retry = setTimeout(() => {
        if (this.local.size > 0) this.listen();
      }, 1000);
      this.retry.unref();
    };
    client.on('notification', (message: Pg.Notification) => {
      if (message.payload !== this.self) this.local.wakeListeners();
    });
    client.on('error', lost);
    client.on('end', lost);
    void this.unawaited.run(
      client
        .connect()
        .then(() => client.query(`listen ${this.channel}`))
        .then(() => {
          if (this.client === client) this.local.wakeListeners();
        })
        .catch(lost),
    );
  }

  /** Ends the LISTEN connection (no listener is left). */
  private async unlisten(): Promise<void> {
    clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearTimeout(this.linger);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
