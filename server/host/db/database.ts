import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  OperatorNode,
  PrimitiveValueListNode,
  ValueListNode,
  type BinaryOperationNode,
  type DataTypeNode,
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  PostgresDriver,
  PostgresQueryCompiler,
  SqliteDialect,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type QueryCompiler,
  type QueryResult,
  SelectQueryNode,
  createQueryId,
  sql,
  type Transaction,
  type TransactionSettings,
} from 'kysely';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type * as Pg from 'pg';
import { asWritten, beginWriteSql, serviceClient, type ServiceConnection } from './pg-client';
import { pgDriver } from './pg-driver';
import type { HostTables } from './tables';
import {
  askedOncePerEpoch,
  countingWrites,
  isWrite,
  readVersionWith,
  versionsMayHaveMoved,
  versionsOf,
  type DataVersions,
} from './data-version';
import {
  AUTOMATIC_CHECKPOINT_PAGES,
  DEFAULT_CHECKPOINTER,
  WalCheckpointer,
  type CheckpointerSettings,
} from './wal-checkpointer';

export type HostDb = Kysely<HostTables>;
/** A migration step of the host or a plugin. */
export type { Migration };
/** A database handle or a transaction: repository functions take either. */
export type Queryable<T = HostTables> = Kysely<T> | Transaction<T>;

/** The two databases the service runs on: SQLite embedded (the default), PostgreSQL for a team server. */
export type DatabaseKind = 'sqlite' | 'postgres';

export interface OpenDatabase {
  db: HostDb;
  kind: DatabaseKind;
  /** What was opened: the SQLite path, or the PostgreSQL URL. */
  target: string;
  close(): Promise<void>;
}

/** Whether a `--db` / `DATABASE_URL` value names a PostgreSQL database (`postgres://…` or `postgresql://…`). */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** Which database a handle (or a transaction, or a migration's handle) runs on. */
export function databaseKind(db: Kysely<any>): DatabaseKind {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

export interface OpenOptions {
  /** PostgreSQL: connections in the pool. */
  poolSize?: number;
  /** A SQLite file: the checkpointer thread's settings (`wal-checkpointer.ts`), or `false` for SQLite's automatic checkpoint only. */
  checkpointer?: Partial<CheckpointerSettings> | false;
}

/** Opens the database `target` names: a PostgreSQL URL, or a SQLite file (or `:memory:`). */
export function openDatabase(target: string, options: OpenOptions = {}): OpenDatabase {
  return isPostgresUrl(target)
    ? openPostgres(target, options.poolSize ?? 20)
    : openSqlite(target, options.checkpointer);
}

const checkpointers = new WeakMap<object, WalCheckpointer>();

/** The checkpointer of a SQLite file's handle (none for `:memory:`, PostgreSQL, or when turned off). */
export function walCheckpointerOf(db: HostDb): WalCheckpointer | undefined {
  return checkpointers.get(db);
}

/**
 * Called with the SQL text of each statement a database runs (BEGIN, COMMIT and locks included) and how long it took.
 * `sql`: the statements a round trip ran, as written (on PostgreSQL a prepared statement's
 * `execute` is shown as its statement with its values: `asWritten`); `sent`: the text as sent.
 */
export type StatementListener = (sql: string, milliseconds: number, sent: string) => void;

const statementListeners = new WeakMap<object, Set<StatementListener>>();

/** Tells `listener` every statement `db` runs from now on, on any connection of its own; returns the call that stops. */
export function observeStatements(db: HostDb, listener: StatementListener): () => void {
  const listeners = statementListeners.get(db);
  if (!listeners) throw new Error('observeStatements: not a database opened by openDatabase');
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Prepared statements kept per SQL text (a query compiled again reuses its statement). Each
 * holds SQLite's compiled program (about 5 to 30 kB outside the JavaScript heap), so the cache
 * is bounded by count, least recently used first: the service's hot queries are a few dozen,
 * while lists of ids (`in (?, ?, …)`) make one text per length.
 */
const STATEMENT_CACHE_SIZE = 256;

/**
 * The connection with its prepared statements kept (above). While someone observes the
 * handle's statements (tests and benchmarks count a request's statements: each is a round trip
 * on PostgreSQL), each statement handed out tells them its SQL text and time once it has run;
 * otherwise it is handed out bare, so a statement costs nothing for being observable.
 */
function withStatementCache(sqlite: SQLite.Database, listeners: ReadonlySet<StatementListener>): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (source: string): SQLite.Statement => {
    let statement = cache.get(source);
    if (statement) {
      cache.delete(source);
    } else {
      statement = sqlite.prepare(source);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, statement);
    return listeners.size === 0 ? statement : observed(statement, source, listeners);
  };
  return new Proxy(sqlite, {
    get(target, property, receiver) {
      if (property === 'prepare') return prepare;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Every version row as one text, `id:version` separated by commas (SQLite). */
const VERSIONS_TEXT_SQL = `select group_concat("id" || ':' || "version") from "data_version"`;

/** The rows `VERSIONS_TEXT_SQL` read. */
function versionRowsOf(text: string): Array<{ id: string; version: string }> {
  if (text === '') return [];
  return text.split(',').map((row) => {
    const [id = '', version = ''] = row.split(':');
    return { id, version };
  });
}

/** The methods of a statement that run it. */
const RUNS: ReadonlySet<PropertyKey> = new Set(['all', 'get', 'run', 'iterate']);

/** `statement`, telling `listeners` its text and time each time it has run (not when it fails, as Kysely's log did not). */
function observed(
  statement: SQLite.Statement,
  source: string,
  listeners: ReadonlySet<StatementListener>,
): SQLite.Statement {
  return new Proxy(statement, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!RUNS.has(property)) return method.bind(target);
      return (...args: unknown[]) => {
        const start = performance.now();
        const result = method.apply(target, args);
        const ms = performance.now() - start;
        for (const listener of listeners) listener(source, ms, source);
        return result;
      };
    },
  });
}

/** What every connection to a SQLite database of the service sets up: its functions and patience. */
function configureSqlite(sqlite: SQLite.Database): void {
  // Another connection (or another process's checkpoint) may hold the database or the WAL briefly.
  sqlite.pragma('busy_timeout = 5000');
  // SQLite's lower() folds ASCII only; case-insensitive search needs every script folded.
  sqlite.function(
    'unicode_lower',
    { deterministic: true },
    (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value) as string | null,
  );
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
  /** Whether nobody holds it (nor waits for it). */
  get free(): boolean {
    return !this.held;
  }
  unlock(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

function runStatement(
  sqlite: SQLite.Database,
  compiled: CompiledQuery,
  statement = sqlite.prepare(compiled.sql),
): QueryResult<any> {
  const parameters = compiled.parameters as unknown[];
  if (statement.reader) return { rows: statement.all(parameters) };
  try {
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  } finally {
    // A commit, or a write outside a transaction: the versions are read again (`versionsEpochNow`).
    versionsMayHaveMoved();
  }
}

/**
 * SQLite with a writer and a reader. A SQLite connection runs one transaction at a time, and
 * Kysely's own driver hands its one connection to one user at a time, so a read outside any
 * transaction used to wait for every write transaction in progress (held across its awaits).
 * Here a transaction, and a statement outside transactions that writes, take the writer (one at
 * a time, in order); a statement outside transactions that only reads runs at once: on the
 * writer when nobody holds it, else on a read-only connection of its own. In WAL mode that connection sees every transaction committed
 * when the statement starts and never sees one in progress: a request reads what it wrote
 * once its transaction has committed, and reads inside a transaction stay on the transaction's
 * connection. Statements run synchronously (better-sqlite3), so each read is one snapshot.
 */
class SqliteReadWriteDriver implements Driver {
  /** Connections released, handed out again: Kysely asks for one per statement outside transactions. */
  private readonly idle: RoutedConnection[] = [];
  constructor(
    private readonly writer: SQLite.Database,
    private readonly reader: SQLite.Database,
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
  async savepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await connection.executeQuery(compileQuery(sql`savepoint ${sql.id(name)}`.toOperationNode(), createQueryId()));
  }
  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await connection.executeQuery(compileQuery(sql`rollback to ${sql.id(name)}`.toOperationNode(), createQueryId()));
  }
  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await connection.executeQuery(compileQuery(sql`release ${sql.id(name)}`.toOperationNode(), createQueryId()));
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
    this.reader.close();
    this.writer.close();
    this.checkpointer?.release();
  }
}

/** At most this many released connections are kept for reuse (more are in use at once only under many concurrent reads). */
const IDLE_CONNECTIONS = 32;

/** A connection as Kysely sees it: the writer while it holds a transaction, else each statement where it belongs. */
class RoutedConnection implements DatabaseConnection {
  private holding = false;
  constructor(
    private readonly writer: SQLite.Database,
    private readonly reader: SQLite.Database,
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
    if (this.holding) return runStatement(this.writer, compiled);
    if (!isWrite(compiled.query)) {
      // A free writer answers at once too (the statement runs synchronously: nothing can take
      // it meanwhile), from pages it keeps across its own commits; the reader drops its pages
      // whenever the writer has committed since its last read.
      if (this.writerLock.free) return runStatement(this.writer, compiled);
      const statement = this.reader.prepare(compiled.sql);
      // What SQLite itself says of the statement decides: anything that may write goes to the writer.
      if (statement.readonly) return runStatement(this.reader, compiled, statement);
    }
    await this.writerLock.lock();
    try {
      return runStatement(this.writer, compiled);
    } finally {
      this.writerLock.unlock();
      this.checkpointer?.committed();
    }
  }
  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Rows are read from the writer, as Kysely's own driver does: an iteration left open on the
    // reader would hold its snapshot, and every other read of it would see that old state.
    if (!SelectQueryNode.is(compiled.query)) throw new Error('SQLite streams select queries only');
    const mine = !this.holding;
    if (mine) await this.writerLock.lock();
    try {
      for (const row of this.writer.prepare(compiled.sql).iterate(compiled.parameters as unknown[]))
        yield { rows: [row as R] };
    } finally {
      if (mine) this.writerLock.unlock();
    }
  }
}

class SqliteReadWriteDialect extends SqliteDialect {
  constructor(
    private readonly writer: SQLite.Database,
    private readonly reader: SQLite.Database,
    private readonly writerLock: FifoLock,
    private readonly checkpointer: WalCheckpointer | null,
  ) {
    super({ database: writer });
  }
  override createDriver(): Driver {
    return new SqliteReadWriteDriver(this.writer, this.reader, this.writerLock, this.checkpointer);
  }
}

/**
 * Opens (creating the folder when needed) a SQLite database with WAL and foreign keys: a file
 * on a writer and a reader (`SqliteReadWriteDriver`), `:memory:` on its one connection (nothing
 * else can open it).
 */
function openSqlite(path: string, checkpointerSettings: Partial<CheckpointerSettings> | false = {}): OpenDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  if (path !== ':memory:') sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  if (path !== ':memory:') {
    // The writer copies the write-ahead log into the database once the log passes 1,000 pages
    // (4 MB), inside the commit that passes it, while the event loop waits. Measured
    // (`bench/checkpoint.ts`, docs/performance.md): the wait is mostly the two fsyncs of each
    // copy, so smaller copies only wait more often (200 pages: three times the commits over 2 ms,
    // twice the total) and larger ones wait less often but longer; 1,000 stays. While the
    // service writes, a thread of its own checkpoints instead (`wal-checkpointer.ts`).
    sqlite.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
    // After a transaction larger than that (a bulk import), the log's file is cut back to 16 MB
    // when the next write starts the log again, rather than keeping its largest size.
    sqlite.pragma('journal_size_limit = 16777216');
  }
  // Pages kept in the process (the build's default is 16 MB); the operating system caches the file too.
  sqlite.pragma('cache_size = -8000');
  configureSqlite(sqlite);
  const listeners = new Set<StatementListener>();
  const writer = withStatementCache(sqlite, listeners);
  let reader: SQLite.Database | null = null;
  let readVersions: (() => Promise<DataVersions>) | null = null;
  if (path !== ':memory:') {
    const readOnly = new SQLite(path, { readonly: true });
    configureSqlite(readOnly);
    // As large as the writer's: between commits it serves the scans (a list stepping over
    // 20,000 requests) the writer served before. WAL makes it drop its pages whenever the writer
    // has committed since its last read, so under writes it holds few of them.
    readOnly.pragma('cache_size = -8000');
    reader = withStatementCache(readOnly, listeners);
    // The data version is read on the reader too, never behind a transaction, by statements
    // of their own (not among those observed, which are a request's), prepared at their first
    // use, once the migrations have made the table. A read of the versions precedes every cached
    // read, so it is made cheap: SQLite's own counter of commits by other connections (this
    // process's writer or another process; `PRAGMA data_version`, one step reading no table)
    // tells whether anything was committed since the last read, and only then are the versions
    // read again, as one text, parsed again only when they moved. The counter is read before the
    // text, so a commit between the two is seen by the next read.
    let versions: SQLite.Statement | undefined;
    let committed: SQLite.Statement | undefined;
    let last: { commits: number; text: string; answer: Promise<DataVersions> } | undefined;
    readVersions = () => {
      committed ??= readOnly.prepare('pragma data_version').pluck();
      const commits = committed.get() as number;
      if (last !== undefined && last.commits === commits) return last.answer;
      versions ??= readOnly.prepare(VERSIONS_TEXT_SQL).pluck();
      const text = (versions.get() as string | null) ?? '';
      if (last !== undefined && last.text === text) last.commits = commits;
      else {
        last = { commits, text, answer: Promise.resolve(versionsOf(versionRowsOf(text))) };
      }
      return last.answer;
    };
  }
  const writerLock = new FifoLock();
  const checkpointer =
    reader && checkpointerSettings !== false
      ? new WalCheckpointer(sqlite, path, writerLock, { ...DEFAULT_CHECKPOINTER, ...checkpointerSettings })
      : null;
  const dialect = reader
    ? new SqliteReadWriteDialect(writer, reader, writerLock, checkpointer)
    : new SqliteDialect({ database: writer });
  const db = countingWrites(new Kysely<HostTables>({ dialect }));
  statementListeners.set(db, listeners);
  if (checkpointer) checkpointers.set(db, checkpointer);
  // Asked once per request and turn of the event loop, not once per cached read (`versionsEpochNow`).
  readVersionWith(db, readVersions && askedOncePerEpoch(db, readVersions));
  return {
    db,
    kind: 'sqlite',
    target: path,
    close: async () => {
      await db.destroy();
    },
  };
}

/**
 * Writes are one at a time, as on SQLite: every transaction on PostgreSQL first takes this
 * transaction-scoped advisory lock, so write transactions of every instance sharing the
 * database run one after the other and each sees everything committed before it (reads outside
 * transactions run concurrently). The service's rules (one review per reviewer, a merge done
 * once, a sequence handed out once) were written for one writer; they hold as they are.
 */
const WRITE_LOCK = [0x4343, 1] as const;
/** Held (per session) while an instance runs the migrations. */
const MIGRATION_LOCK = [0x4343, 2] as const;

/**
 * PostgreSQL's query compiler speaking SQLite's dialect where the service relies on it, so one
 * set of migrations and one set of queries serve both:
 * - `integer` columns are 64-bit (`bigint`), as SQLite's integers are: an id of 2^40 in a
 *   filter is a row that does not exist, not an error;
 * - `autoIncrement()` is an identity column;
 * - `x in ()` (an empty list) is false and `x not in ()` true, where PostgreSQL would refuse
 *   the syntax.
 */
class PortablePostgresQueryCompiler extends PostgresQueryCompiler {
  protected override getAutoIncrement(): string {
    return 'generated by default as identity';
  }
  protected override visitDataType(node: DataTypeNode): void {
    this.append(node.dataType === 'integer' ? 'bigint' : node.dataType);
  }
  protected override visitBinaryOperation(node: BinaryOperationNode): void {
    const right = node.rightOperand;
    const operator = OperatorNode.is(node.operator) ? node.operator.operator : null;
    const empty = (PrimitiveValueListNode.is(right) || ValueListNode.is(right)) && right.values.length === 0;
    if (empty && (operator === 'in' || operator === 'not in')) {
      this.append(operator === 'in' ? 'false' : 'true');
      return;
    }
    super.visitBinaryOperation(node);
  }
}

class SerializedWritesDriver extends PostgresDriver {
  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.isolationLevel || settings.accessMode) {
      await super.beginTransaction(connection, settings);
      await connection.executeQuery(
        CompiledQuery.raw(`select pg_advisory_xact_lock(${WRITE_LOCK[0]}, ${WRITE_LOCK[1]})`),
      );
      return;
    }
    // One round trip: statements without parameters go as one simple query (`pg-client.ts`
    // keeps the versions it reads for the transaction).
    await connection.executeQuery(CompiledQuery.raw(beginWriteSql(WRITE_LOCK)));
  }
}

class PortablePostgresDialect extends PostgresDialect {
  constructor(private readonly settings: { pool: Pg.Pool }) {
    super(settings);
  }
  override createDriver(): Driver {
    return new SerializedWritesDriver(this.settings);
  }
  override createQueryCompiler(): QueryCompiler {
    return new PortablePostgresQueryCompiler();
  }
}

/** Counts and sums (bigint) as numbers, as SQLite gives them. */
function pgTypes(pg: typeof Pg) {
  return {
    getTypeParser: ((oid: number, format?: string) =>
      oid === pg.types.builtins.INT8
        ? (value: string) => Number(value)
        : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
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

function openPostgres(url: string, poolSize: number): OpenDatabase {
  const pg = pgDriver();
  // Statements are logged as the connections send them: each is one round trip.
  const listeners = new Set<StatementListener>();
  const onRoundTrip = (sql: string, ms: number) => {
    if (listeners.size === 0) return;
    const written = asWritten(sql);
    for (const listener of listeners) listener(written, ms, sql);
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: pgTypes(pg),
    Client: serviceClient(onRoundTrip),
  });
  // An idle connection the server drops (restart, failover) is replaced, not fatal.
  pool.on('error', () => undefined);
  // Each new connection asks whether its write transactions can end with the flush barrier.
  pool.on('connect', (client) => (client as unknown as ServiceConnection).learnFlushBarrier());
  // The data version is read through the pool: a connection of its own, which sees the last
  // commit of any instance and never waits for a transaction.
  const db = countingWrites(new Kysely<HostTables>({ dialect: new PortablePostgresDialect({ pool }) }));
  statementListeners.set(db, listeners);
  urls.set(db, url);
  return {
    db,
    kind: 'postgres',
    target: url,
    close: async () => {
      for (const task of closers.get(db) ?? []) await task();
      await db.destroy();
    },
  };
}

/** Views a database handle with a plugin's tables added to the host's. */
export function withTables<T>(db: Queryable): Queryable<HostTables & T> {
  return db as unknown as Queryable<HostTables & T>;
}

/**
 * Runs every migration (host first, then each plugin's, in the order given), each once: on
 * PostgreSQL, instances starting at the same moment wait for each other on a session advisory
 * lock, and the later ones find the migrations applied.
 */
export async function migrate(db: HostDb, migrations: Record<string, Migration>): Promise<void> {
  if (databaseKind(db) === 'postgres') {
    await db.connection().execute(async (conn) => {
      await conn.executeQuery(CompiledQuery.raw(`select pg_advisory_lock(${MIGRATION_LOCK[0]}, ${MIGRATION_LOCK[1]})`));
      try {
        // The migration tables live in the schema the connection works in (the search path's first).
        const { rows } = await conn.executeQuery<{ schema: string; known: boolean }>(
          CompiledQuery.raw(`select current_schema() as schema, to_regclass('kysely_migration') is not null as known`),
        );
        if (rows[0]!.known) {
          // Already up to date (every start after the first): the migrator's catalogue reads are skipped.
          const applied = new Set(
            (
              await conn.executeQuery<{ name: string }>(CompiledQuery.raw('select name from kysely_migration'))
            ).rows.map((r) => r.name),
          );
          if (Object.keys(migrations).every((name) => applied.has(name))) return;
        }
        await runMigrations(conn, migrations, rows[0]!.schema);
      } finally {
        await conn.executeQuery(
          CompiledQuery.raw(`select pg_advisory_unlock(${MIGRATION_LOCK[0]}, ${MIGRATION_LOCK[1]})`),
        );
      }
    });
    return;
  }
  await runMigrations(db, migrations);
}

async function runMigrations(db: HostDb, migrations: Record<string, Migration>, schema?: string): Promise<void> {
  const migrator = new Migrator({
    db,
    ...(schema ? { migrationTableSchema: schema } : {}),
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName);
    throw new Error(`database migration failed: ${reason}`);
  }
}

/** Fails (with the driver's reason) when the database cannot be reached. */
export async function checkReachable(database: OpenDatabase): Promise<void> {
  if (database.kind === 'postgres') await database.db.executeQuery(CompiledQuery.raw('select 1'));
}
