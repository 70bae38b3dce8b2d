import {
  CompiledQuery,
  createQueryId,
  Kysely,
  SelectQueryNode,
  sql,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type KyselyConfig,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  countingWrites,
  isWrite,
  readVersionsInProcess,
  versionsNeverMove,
  versionsOf,
  type DataVersions,
} from './data-version';
import type { SqliteConnection, SqliteDriver, SqliteStatement } from './sqlite-driver';
import type { HostTables } from './tables';
import {
  AUTOMATIC_CHECKPOINT_PAGES,
  DEFAULT_CHECKPOINTER,
  WalCheckpointer,
  type CheckpointerSettings,
} from './wal-checkpointer';

/**
 * Prepared statements kept per SQL text (a query compiled again reuses its statement). Each
 * holds SQLite's compiled program outside the JavaScript heap, so the cache is bounded by
 * count, least recently used first: the service's hot queries are a few dozen, while lists of
 * ids (`in (?, ?, …)`) make one text per length.
 */
const STATEMENT_CACHE_SIZE = 256;

/** A connection with its prepared statements kept (above). */
class CachedConnection {
  private readonly cache = new Map<string, SqliteStatement>();
  constructor(readonly connection: SqliteConnection) {}

  prepare(source: string): SqliteStatement {
    let statement = this.cache.get(source);
    if (statement) this.cache.delete(source);
    else {
      statement = this.connection.prepare(source);
      if (this.cache.size >= STATEMENT_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(source, statement);
    return statement;
  }

  run(compiled: CompiledQuery, statement = this.prepare(compiled.sql)): QueryResult<any> {
    const parameters = compiled.parameters;
    if (statement.reader) return { rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }
}

/** What every connection to a SQLite database of the service sets up: its functions and patience. */
function configure(connection: SqliteConnection): void {
  // Another connection (or another process's checkpoint) may hold the database or the WAL briefly.
  connection.pragma('busy_timeout = 5000');
  // SQLite's lower() folds ASCII only; case-insensitive search needs every script folded.
  connection.function('unicode_lower', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  );
  // Pages kept in the process; the operating system caches the file too.
  connection.pragma('cache_size = -8000');
}

/** One at a time, in the order asked. */
class FifoLock {
  private held = false;
  private readonly waiting: Array<() => void> = [];
  async lock(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  /** Whether nobody holds it. */
  get free(): boolean {
    return !this.held;
  }
  unlock(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

/**
 * SQLite with a writer and a reader. A transaction, and a statement outside transactions that
 * writes, take the writer (one at a time, in order); a statement outside transactions that only
 * reads runs at once: on the writer when nobody holds it, else on a read-only connection of its
 * own. In WAL mode that connection sees every transaction committed when the statement starts
 * and never one in progress. Statements run synchronously, so each read is one snapshot. A
 * database in memory has no reader (nothing else can open it): its reads wait for the writer.
 */
class SqliteDriverOfService implements Driver {
  /** Connections released, handed out again: Kysely asks for one per statement outside transactions. */
  private readonly idle: RoutedConnection[] = [];
  constructor(
    private readonly writer: CachedConnection,
    private readonly reader: CachedConnection | null,
    private readonly writerLock: FifoLock,
    private readonly checkpointer: WalCheckpointer | null,
  ) {}
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.idle.pop() ?? new RoutedConnection(this.writer, this.reader, this.writerLock, this.checkpointer);
  }
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    await routed.holdWriter();
    await routed.executeQuery(CompiledQuery.raw('begin'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
    this.checkpointer?.committed();
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    await connection.executeQuery(compile(sql`savepoint ${sql.id(name)}`.toOperationNode(), createQueryId()));
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    await connection.executeQuery(compile(sql`rollback to ${sql.id(name)}`.toOperationNode(), createQueryId()));
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    await connection.executeQuery(compile(sql`release ${sql.id(name)}`.toOperationNode(), createQueryId()));
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    routed.releaseWriter();
    if (this.idle.length < IDLE_CONNECTIONS) this.idle.push(routed);
  }
  async destroy(): Promise<void> {
    // The writer closes last: the last connection to close copies what is left of the log into
    // the database and removes the log (a read-only one cannot).
    await this.checkpointer?.stop();
    this.reader?.connection.close();
    this.writer.connection.close();
    this.checkpointer?.release();
  }
}

/** At most this many released connections are kept for reuse (more are in use at once only under many concurrent reads). */
const IDLE_CONNECTIONS = 32;

/** A connection as Kysely sees it: the writer while it holds a transaction, else each statement where it belongs. */
class RoutedConnection implements DatabaseConnection {
  private holding = false;
  constructor(
    private readonly writer: CachedConnection,
    private readonly reader: CachedConnection | null,
    private readonly writerLock: FifoLock,
    private readonly checkpointer: WalCheckpointer | null,
  ) {}
  async holdWriter(): Promise<void> {
    if (this.holding) return;
    await this.writerLock.lock();
    this.holding = true;
  }
  releaseWriter(): void {
    if (!this.holding) return;
    this.holding = false;
    this.writerLock.unlock();
  }
  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (this.holding) return this.writer.run(compiled);
    if (!isWrite(compiled.query)) {
      // A free writer answers at once (the statement runs synchronously: nothing can take it meanwhile).
      if (this.writerLock.free) return this.writer.run(compiled);
      if (this.reader) {
        const statement = this.reader.prepare(compiled.sql);
        // What SQLite itself says of the statement decides: anything that may write goes to the writer.
        if (statement.readonly) return this.reader.run(compiled, statement);
      }
    }
    await this.writerLock.lock();
    try {
      return this.writer.run(compiled);
    } finally {
      this.writerLock.unlock();
      this.checkpointer?.committed();
    }
  }
  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Rows are read from the writer: an iteration left open on the reader would hold its
    // snapshot, and every other read of it would see that old state.
    if (!SelectQueryNode.is(compiled.query)) throw new Error('SQLite streams select queries only');
    const mine = !this.holding;
    if (mine) await this.writerLock.lock();
    try {
      for (const row of this.writer.prepare(compiled.sql).iterate(compiled.parameters)) yield { rows: [row as R] };
    } finally {
      if (mine) this.writerLock.unlock();
    }
  }
}

/** Kysely's SQLite dialect on the driver above. */
class ServiceSqliteDialect implements Dialect {
  constructor(private readonly driver: Driver) {}
  createDriver = (): Driver => this.driver;
  createQueryCompiler = (): QueryCompiler => new SqliteQueryCompiler();
  createAdapter = () => new SqliteAdapter();
  createIntrospector = (db: Kysely<any>) => new SqliteIntrospector(db);
}

/**
 * The committed versions, read on the reader connection without waiting for the writer: first
 * SQLite's own count of commits by other connections (`PRAGMA data_version`, this process's
 * writer or another process; one step reading no table), and the versions table only when it
 * moved, as one text, parsed again only when the text changed.
 */
function versionsReader(reader: SqliteConnection): () => DataVersions {
  let last: { commits: number; text: string; versions: DataVersions } | undefined;
  // Prepared at the first read (the migrations have made the table by then).
  let counter: SqliteStatement | undefined;
  let table: SqliteStatement | undefined;
  return () => {
    counter ??= reader.prepare('pragma data_version');
    const commits = (counter.get([]) as { data_version: number }).data_version;
    if (last !== undefined && last.commits === commits) return last.versions;
    table ??= reader.prepare(VERSIONS_TEXT_SQL);
    const text = (table.get([]) as { text: string | null }).text ?? '';
    if (last !== undefined && last.text === text) last.commits = commits;
    else last = { commits, text, versions: versionsOf(versionRowsOf(text)) };
    return last.versions;
  };
}

/** Every version row as one text, `id:version` separated by commas. */
const VERSIONS_TEXT_SQL = `select group_concat("id" || ':' || "version") as "text" from "data_version"`;

function versionRowsOf(text: string): Array<{ id: string; version: string }> {
  if (text === '') return [];
  return text.split(',').map((row) => {
    const [id = '', version = ''] = row.split(':');
    return { id, version };
  });
}

/**
 * Opens (creating the folder when needed) a SQLite database with WAL and foreign keys, through
 * `driver` (better-sqlite3 or `node:sqlite`): a file on a writer and a reader, `:memory:` on its
 * one connection.
 */
export function openSqlite(
  path: string,
  checkpointerSettings: Partial<CheckpointerSettings> | false = {},
  log: KyselyConfig['log'],
  driver: SqliteDriver,
): { db: Kysely<HostTables>; checkpointer?: WalCheckpointer } {
  const file = path !== ':memory:';
  if (file) mkdirSync(dirname(path), { recursive: true });
  const connection = driver.open(path, { readonly: false });
  if (file) connection.pragma('journal_mode = WAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('synchronous = NORMAL');
  if (file) {
    // The writer copies the write-ahead log into the database once the log passes this many
    // pages, inside the commit that passes it; while the service writes fast, a thread of its
    // own checkpoints instead (`wal-checkpointer.ts`).
    connection.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
    // After a transaction larger than that (a bulk import), the log's file is cut back to 16 MB
    // when the next write starts the log again, rather than keeping its largest size.
    connection.pragma('journal_size_limit = 16777216');
  }
  configure(connection);
  const writerLock = new FifoLock();
  let readOnly: SqliteConnection | null = null;
  if (file) {
    readOnly = driver.open(path, { readonly: true });
    configure(readOnly);
  }
  const checkpointer =
    file && checkpointerSettings !== false
      ? new WalCheckpointer(connection, driver, path, writerLock, {
          ...DEFAULT_CHECKPOINTER,
          ...checkpointerSettings,
        })
      : null;
  const writer = new CachedConnection(connection);
  const reader = readOnly ? new CachedConnection(readOnly) : null;
  const dialect = new ServiceSqliteDialect(new SqliteDriverOfService(writer, reader, writerLock, checkpointer));
  const db = countingWrites(new Kysely<HostTables>({ dialect, log }));
  if (readOnly) readVersionsInProcess(db, versionsReader(readOnly));
  else versionsNeverMove(db);
  return checkpointer ? { db, checkpointer } : { db };
}
