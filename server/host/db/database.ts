import { CompiledQuery, type Kysely, type LogEvent, type Migration, type Transaction } from 'kysely';
import { isPostgresUrl } from './kind';
import { openPostgres } from './postgres';
import { openSqlite } from './sqlite';
import type { SqliteDriver } from './sqlite-driver';
import { processSqliteDriver } from './sqlite-driver-choice';
import type { HostTables } from './tables';
import type { CheckpointerSettings, WalCheckpointer } from './wal-checkpointer';

export type HostDb = Kysely<HostTables>;
/** A migration step of the host or a plugin. */
export type { Migration };
/** A database handle or a transaction: repository functions take either. */
export type Queryable<T = HostTables> = Kysely<T> | Transaction<T>;

export { databaseKind, isPostgresUrl, type DatabaseKind } from './kind';

export interface OpenDatabase {
  db: HostDb;
  kind: 'sqlite' | 'postgres';
  /** What was opened: the SQLite path, or the PostgreSQL URL. */
  target: string;
  close(): Promise<void>;
}

export interface OpenOptions {
  /**
   * PostgreSQL: connections in the pool (default 20). Not fewer: a claim (`withClaim`) holds a
   * connection while its work runs transactions on others.
   */
  poolSize?: number;
  /** A SQLite file: the checkpointer thread's settings (`wal-checkpointer.ts`), or `false` for SQLite's automatic checkpoint only. */
  checkpointer?: Partial<CheckpointerSettings> | false;
  /** SQLite: the driver (default: this process's, `processSqliteDriver`). */
  sqliteDriver?: SqliteDriver;
}

/** Opens the database `target` names: a PostgreSQL URL, or a SQLite file (or `:memory:`). */
export function openDatabase(target: string, options: OpenOptions = {}): OpenDatabase {
  const listeners = new Set<StatementListener>();
  // Kysely tells each statement it runs (BEGIN and COMMIT too) to the handle's listeners.
  const log = (event: LogEvent): void => {
    if (event.level !== 'query') return;
    for (const listener of listeners) listener(event.query.sql, event.queryDurationMillis);
  };
  const postgres = isPostgresUrl(target);
  let db: HostDb;
  if (postgres) {
    db = openPostgres(target, options.poolSize ?? 20, log);
    urls.set(db, target);
  } else {
    const opened = openSqlite(target, options.checkpointer, log, options.sqliteDriver ?? processSqliteDriver().driver);
    db = opened.db;
    if (opened.checkpointer) checkpointers.set(db, opened.checkpointer);
  }
  statementListeners.set(db, listeners);
  return {
    db,
    kind: postgres ? 'postgres' : 'sqlite',
    target,
    close: async () => {
      for (const task of closers.get(db) ?? []) await task();
      await db.destroy();
    },
  };
}

const checkpointers = new WeakMap<object, WalCheckpointer>();

/** The checkpointer of a SQLite file's handle (none for `:memory:`, PostgreSQL, or when turned off). */
export function walCheckpointerOf(db: HostDb): WalCheckpointer | undefined {
  return checkpointers.get(db);
}

/** Called with the SQL text of each statement a database runs (BEGIN, COMMIT and locks included) and how long it took. */
export type StatementListener = (sql: string, milliseconds: number) => void;

const statementListeners = new WeakMap<object, Set<StatementListener>>();

/** Tells `listener` every statement `db` runs from now on, on any connection of its own; returns the call that stops. */
export function observeStatements(db: HostDb, listener: StatementListener): () => void {
  const listeners = statementListeners.get(db);
  if (!listeners) throw new Error('observeStatements: not a database opened by openDatabase');
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const urls = new WeakMap<object, string>();
const closers = new WeakMap<object, Array<() => Promise<void>>>();

/** The URL a PostgreSQL handle was opened with (undefined for SQLite). */
export function postgresUrlOf(db: HostDb): string | undefined {
  return urls.get(db);
}

/** Work to do when the database is closed (connections of its own a helper opened). */
export function onClose(db: HostDb, task: () => Promise<void>): void {
  const list = closers.get(db) ?? [];
  list.push(task);
  closers.set(db, list);
}

/** Views a database handle with a plugin's tables added to the host's. */
export function withTables<T>(db: Queryable): Queryable<HostTables & T> {
  return db as unknown as Queryable<HostTables & T>;
}

/** Fails (with the driver's reason) when the database cannot be reached. */
export async function checkReachable(database: OpenDatabase): Promise<void> {
  if (database.kind === 'postgres') await database.db.executeQuery(CompiledQuery.raw('select 1'));
}

export { migrate } from './migrations/run';
