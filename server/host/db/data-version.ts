import { AliasNode, DeleteQueryNode, InsertQueryNode, sql, TableNode, UpdateQueryNode } from 'kysely';
import type {
  Kysely,
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  Transaction,
  UnknownRow,
} from 'kysely';
import { auditStatement } from './read-audit';

type Queryable<T> = Kysely<T> | Transaction<T>;

/**
 * The data version: one number, in a table (`data_version`), that every committed write
 * transaction moves. `inTransaction` bumps it at the end of every transaction that wrote
 * anything, so no write can forget it, and a write committed by another process (another
 * instance on the same database) moves it as much as one of ours. The read memo compares it
 * before serving anything (`cache/read-memo.ts`). It is plain SQL through Kysely, so it works
 * the same on both databases.
 *
 * Besides, each database handle counts the writes sent through it (a Kysely plugin that looks
 * at every statement): a transaction's count tells what it has written so far (a cache inside
 * the transaction drops what it kept at each write), and the service's own handle's count
 * covers the few writes made outside any transaction (a token's last use, the webhook outbox's
 * delivery state), in this process.
 */
export interface DataVersionTable {
  id: number;
  version: number;
}

/**
 * Beside the one number (row 1), the table versions: a row per table, moved by every committed
 * transaction that wrote that table, and row 2, moved with row 1 by every transaction that says
 * which tables it wrote. A write that cannot say (raw SQL, a writer beside the service moving
 * row 1 alone) moves row 1 without row 2, which moves every table at once. So an answer that
 * names the tables it reads stays good across commits of other tables, on any instance.
 */
export const GLOBAL_ROW = 1;
const ITEMIZED_ROW = 2;

/** The row of a table's version (a hash of its name: two tables sharing a row only move together). */
export function tableVersionRow(table: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < table.length; i++) h = Math.imul(h ^ table.charCodeAt(i), 0x01000193) >>> 0;
  return 16 + (h % 2_000_000_000);
}

/** The data version and the table versions, as one read saw them. */
export interface DataVersions {
  /** Row 1: moved by every committed write. */
  global: number;
  /** What the table versions cannot tell: every table moves when it does. */
  unitemized: number;
  rows: ReadonlyMap<number, number>;
}

/** The versions of `tables` (and of what moves them all), as one string: equal strings, nothing moved. */
export function tablesStamp(versions: DataVersions, tables: readonly string[]): string {
  let stamp = String(versions.unitemized);
  for (const table of tables) stamp += `|${versions.rows.get(tableVersionRow(table)) ?? 0}`;
  return stamp;
}

/** Whether a statement can change data: anything but a select (raw SQL counts unless it is a select). */
export function isWrite(node: RootOperationNode): boolean {
  if (node.kind === 'SelectQueryNode') return false;
  if (node.kind === 'RawNode') return !/^\s*select\b/i.test(node.sqlFragments[0] ?? '');
  return true;
}

/** The table a write statement writes, or null when it cannot be told (raw SQL, schema changes). */
function writtenTable(node: RootOperationNode): string | null {
  const nameOf = (table: OperationNode | undefined): string | null => {
    if (!table) return null;
    if (TableNode.is(table)) return table.table.identifier.name;
    if (AliasNode.is(table)) return nameOf(table.node);
    return null;
  };
  if (InsertQueryNode.is(node)) return nameOf(node.into);
  if (UpdateQueryNode.is(node)) return nameOf(node.table);
  if (DeleteQueryNode.is(node)) return node.from.froms.length === 1 ? nameOf(node.from.froms[0]) : null;
  return null;
}

/**
 * Counts a write once it has run (its answer came back), never before: a read that sees the
 * count includes the write's rows. (Counted when sent, a write still waiting for SQLite's writer
 * could be counted by a read answered meanwhile on the reader, which would then be kept as if
 * it had seen the write.)
 */
class WriteCounter implements KyselyPlugin {
  writes = 0;
  /** Writes whose table could not be told: they count as a write of every table. */
  unknown = 0;
  readonly byTable = new Map<string, number>();
  /** Writes sent, not yet answered, and the table each writes (null: it cannot be told). */
  private readonly sent = new WeakMap<object, string | null>();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    auditStatement(args.node);
    if (isWrite(args.node)) this.sent.set(args.queryId, writtenTable(args.node));
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const table = this.sent.get(args.queryId);
    if (table !== undefined) {
      this.sent.delete(args.queryId);
      this.writes++;
      if (table === null) this.unknown++;
      else this.byTable.set(table, (this.byTable.get(table) ?? 0) + 1);
    }
    return Promise.resolve(args.result);
  }
}

const counters = new WeakMap<object, WriteCounter>();

/** The same handle (a database or a transaction), counting the writes sent through it. */
export function countingWrites<T extends Kysely<any>>(db: T): T {
  const counter = new WriteCounter();
  const counted = db.withPlugin(counter) as T;
  counters.set(counted, counter);
  return counted;
}

/** The tables written through this handle so far, or null when a write could not say which (raw SQL). */
export function writtenTables(db: Queryable<any>): string[] | null {
  const counter = counters.get(db);
  if (!counter || counter.unknown > 0) return null;
  return [...counter.byTable.keys()];
}

/**
 * How many writes went through this handle so far (0 for a handle that does not count); with
 * `tables`, only the writes that may have changed one of them.
 */
export function writesThrough(db: Queryable<any>, tables?: readonly string[]): number {
  const counter = counters.get(db);
  if (!counter) return 0;
  if (!tables) return counter.writes;
  let n = counter.unknown;
  if (counter.byTable.size === 0) return n;
  for (const table of tables) n += counter.byTable.get(table) ?? 0;
  return n;
}

/** Where each handle's committed versions are read (`readVersionWith`). */
const readers = new WeakMap<object, () => Promise<DataVersions>>();
/** Handles whose versions are read in this process, without waiting (SQLite). */
const inProcess = new WeakMap<object, () => DataVersions>();

/** What a database no other process can open answers: its handle's write counts say everything. */
const NOTHING_READ: DataVersions = { global: 0, unitemized: 0, rows: new Map() };

/**
 * How the committed versions of `db` are read outside transactions, set by the database's own
 * module (`sqlite.ts`: on the reader connection; `postgres.ts`: through the pool).
 */
export function readVersionWith(db: Kysely<any>, read: () => Promise<DataVersions>): void {
  readers.set(db, read);
}

/** Handles of databases no other process can open (in memory): their versions never move. */
const unmoving = new WeakSet<object>();

/** A database no other process can open: its handle's write counts say everything, and its versions never move. */
export function versionsNeverMove(db: Kysely<any>): void {
  unmoving.add(db);
  readVersionsInProcess(db, () => NOTHING_READ);
}

/** The versions of `db` are read in this process, at once (SQLite's reader connection). */
export function readVersionsInProcess(db: Kysely<any>, read: () => DataVersions): void {
  inProcess.set(db, read);
  readVersionWith(db, () => Promise.resolve(read()));
}

/** The committed versions, when this handle reads them in this process at once (SQLite); else undefined (ask `readDataVersions`). */
export function versionsNow(db: Queryable<any>): DataVersions | undefined {
  return inProcess.get(db)?.();
}

/** The versions `db` will read once a transaction that read `start` under the write lock and wrote `tables` has committed. */
export function versionsAfterCommit(
  db: Queryable<any>,
  start: DataVersions,
  tables: readonly string[] | null,
): DataVersions {
  return unmoving.has(db) ? start : bumped(start, tables);
}

/** The committed data version and table versions, as this handle sees them. */
export async function readDataVersions(db: Queryable<any>): Promise<DataVersions> {
  const reader = readers.get(db);
  return reader ? reader() : selectVersions(db);
}

/**
 * The same, read inside a write transaction (`trx`) of the handle `db`: where the handle reads
 * them without a transaction's connection (SQLite's reader), there; else through the
 * transaction itself, never through another connection of a pool (every connection may be held
 * by a transaction waiting for the write lock this one holds).
 */
export async function readDataVersionsIn(db: Queryable<any>, trx: Queryable<any>): Promise<DataVersions> {
  const reader = readers.get(db);
  return reader && !readsThroughPool.has(db) ? reader() : selectVersions(trx);
}

/** Handles whose versions are read through a pool of connections (PostgreSQL). */
const readsThroughPool = new WeakSet<object>();

/**
 * Reads through a pool (PostgreSQL, where each read is a round trip): callers asking while a
 * read is on its way share the next one, sent as soon as that one answers (a caller must see
 * every commit completed before it asked, so it cannot share a read already sent).
 */
export function sharedReads(db: Kysely<any>): () => Promise<DataVersions> {
  readsThroughPool.add(db);
  let sent: Promise<DataVersions> | null = null;
  let next: Promise<DataVersions> | null = null;
  const send = (): Promise<DataVersions> => {
    const read = selectVersions(db);
    sent = read;
    const done = () => {
      if (sent === read) sent = null;
    };
    read.then(done, done);
    return read;
  };
  return () => {
    if (sent === null) return send();
    next ??= sent
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        next = null;
        return send();
      });
    return next;
  };
}

/** The read of every version. */
export const VERSIONS_READ_SQL = 'select "id", "version" from "data_version"';

async function selectVersions(db: Queryable<any>): Promise<DataVersions> {
  return versionsOf((await sql.raw<DataVersionTable>(VERSIONS_READ_SQL).execute(db)).rows);
}

/** The versions as `VERSIONS_READ_SQL` reads them. */
export function versionsOf(rows: Iterable<{ id: unknown; version: unknown }>): DataVersions {
  const byRow = new Map<number, number>();
  // Bigints: PostgreSQL's driver may give them as strings.
  for (const r of rows) byRow.set(Number(r.id), Number(r.version));
  const global = byRow.get(GLOBAL_ROW) ?? 0;
  return { global, unitemized: global - (byRow.get(ITEMIZED_ROW) ?? 0), rows: byRow };
}

/**
 * Moves the data version (inside the write transaction, last, so the rows are held briefly),
 * with the versions of the `tables` written (one statement). Without `tables`, every table moves.
 */
export async function bumpDataVersion(trx: Queryable<any>, tables?: readonly string[] | null): Promise<void> {
  const db = trx as Queryable<{ data_version: DataVersionTable }>;
  if (!tables) {
    await db
      .updateTable('data_version')
      .set((eb) => ({ version: eb('version', '+', 1) }))
      .where('id', '=', GLOBAL_ROW)
      .execute();
    return;
  }
  const ids = [
    ...new Set([GLOBAL_ROW, ITEMIZED_ROW, ...tables.filter((t) => t !== 'data_version').map(tableVersionRow)]),
  ];
  await db
    .insertInto('data_version')
    .values(ids.map((id) => ({ id, version: 1 })))
    .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ version: eb('data_version.version', '+', 1) })))
    .execute();
}

/**
 * The versions a write transaction commits, from those it read under the write lock: what
 * `bumpDataVersion(trx, tables)` makes of them (nothing else commits while the lock is held).
 */
function bumped(versions: DataVersions, tables: readonly string[] | null): DataVersions {
  const rows = new Map(versions.rows);
  const bump = (row: number) => rows.set(row, (rows.get(row) ?? 0) + 1);
  bump(GLOBAL_ROW);
  if (tables) {
    bump(ITEMIZED_ROW);
    for (const row of new Set(tables.filter((t) => t !== 'data_version').map(tableVersionRow))) bump(row);
  }
  const global = rows.get(GLOBAL_ROW)!;
  return { global, unitemized: global - (rows.get(ITEMIZED_ROW) ?? 0), rows };
}

/** The migration that creates the row. */
export async function createDataVersion(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('data_version')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('data_version').values({ id: 1, version: 0 }).execute();
}
