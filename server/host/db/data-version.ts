import { AliasNode, DeleteQueryNode, InsertQueryNode, sql, TableNode, UpdateQueryNode } from 'kysely';
import {
  partitionColumnOf,
  partitionedTableOf,
  toldPartitions,
  unknownPartition,
  writtenPartitions,
} from './partitions';
import { auditStatement } from './read-audit';
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

type Queryable<T> = Kysely<T> | Transaction<T>;

/**
 * The data version: one number, in a one-row table (`data_version`), that every committed write
 * transaction moves. `inTransaction` bumps it at the end of every transaction that wrote
 * anything, so no write can forget it, and a write committed by another process (another
 * instance on the same database) moves it as much as one of ours. Caches compare it before
 * serving anything (`core/read-memo.ts`). It is plain SQL through Kysely (an update of one row,
 * a select of one row), so it works the same on any database Kysely speaks to.
 *
 * Besides, each database handle counts the writes sent through it (a Kysely plugin that looks
 * at every statement): a transaction's count tells what it has written so far (a cache inside
 * the transaction drops what it kept at each write), and the service's own handle's count
 * covers the few writes made outside any transaction (a token's last use, the webhook outbox's
 * delivery state, which no cached read depends on), in this process.
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

/**
 * The versions of `tables` (and of what moves them all), as one string: equal strings, nothing
 * moved. A partition's name (`db/partitions.ts`) reads the writes of its table that did not say
 * their rows too.
 */
export function tablesStamp(versions: DataVersions, tables: readonly string[]): string {
  let stamp = String(versions.unitemized);
  for (const table of tables) {
    const named = namedTable(table);
    stamp += `|${versions.rows.get(named.row) ?? 0}`;
    if (named.partitioned !== undefined) {
      // The writes of the table that did not say their rows: all of them less those that did.
      const untold =
        (versions.rows.get(named.partitioned.row) ?? 0) - (versions.rows.get(named.partitioned.toldRow) ?? 0);
      stamp += `/${untold}`;
    }
  }
  return stamp;
}

/** What a table's name (or a partition's) stands for in the versions and the write counts. */
interface NamedTable {
  /** Its version's row. */
  row: number;
  /** For a partition: its table's version row, the row of the table's writes that said their rows, and the name counting those that did not. */
  partitioned?: { row: number; toldRow: number; unknown: string };
}

/** The names seen so far (tables and partitions named in code: a bounded set), worked out once each. */
const namedTables = new Map<string, NamedTable>();
const NAMED_TABLES_KEPT = 10_000;

function namedTable(name: string): NamedTable {
  let named = namedTables.get(name);
  if (named === undefined) {
    const table = partitionedTableOf(name);
    named = { row: tableVersionRow(name) };
    if (table !== undefined)
      named.partitioned = {
        row: tableVersionRow(table),
        toldRow: tableVersionRow(toldPartitions(table)),
        unknown: unknownPartition(table),
      };
    if (namedTables.size < NAMED_TABLES_KEPT) namedTables.set(name, named);
  }
  return named;
}

/** Whether a statement can change data: anything but a select (raw SQL counts unless it is a select). */
export function isWrite(node: RootOperationNode): boolean {
  if (node.kind === 'SelectQueryNode') return false;
  if (node.kind === 'RawNode') return !/^\s*select\b/i.test(node.sqlFragments[0] ?? '');
  return true;
}

/** The table a write statement writes, or null when it cannot be told (raw SQL, schema changes). */
export function writtenTable(node: RootOperationNode): string | null {
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
  /** Writes sent, not yet answered: the table each writes (null: it cannot be told) and its partitions. */
  private readonly sent = new WeakMap<object, { table: string | null; partitions: readonly string[] }>();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    auditStatement(args.node);
    if (isWrite(args.node)) {
      const table = writtenTable(args.node);
      this.sent.set(args.queryId, { table, partitions: table === null ? [] : writtenPartitions(args.node) });
    }
    return args.node;
  }
  /** A write compiled once (`compiledWrite`) is about to run: counted as `transformQuery` would have. */
  sentCompiled(queryId: object, table: string | null, partitions: readonly string[]): void {
    this.sent.set(queryId, { table, partitions });
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const write = this.sent.get(args.queryId);
    if (write !== undefined) {
      this.sent.delete(args.queryId);
      this.writes++;
      if (write.table === null) this.unknown++;
      else {
        this.byTable.set(write.table, (this.byTable.get(write.table) ?? 0) + 1);
        for (const partition of write.partitions) this.byTable.set(partition, (this.byTable.get(partition) ?? 0) + 1);
      }
    }
    return Promise.resolve(args.result);
  }
}

const counters = new WeakMap<object, WriteCounter>();

/**
 * The write counters a statement sent through this handle passes (a transaction's, and its
 * database's), or null when the handle runs another plugin too (a statement compiled once would
 * skip it: it must be built afresh).
 */
export function writeCountersOf(db: Queryable<any>): readonly WriteCounter[] | null {
  const plugins = (db as Kysely<any>).getExecutor().plugins;
  for (const plugin of plugins) if (!(plugin instanceof WriteCounter)) return null;
  return plugins as readonly WriteCounter[];
}

/** The same handle (a database or a transaction), counting the writes sent through it. */
export function countingWrites<T extends Kysely<any>>(db: T): T {
  const counter = new WriteCounter();
  const counted = db.withPlugin(counter) as T;
  counters.set(counted, counter);
  return counted;
}

/**
 * The tables written through this handle so far, or null when a write could not say which (raw
 * SQL): with the partitions written (`db/partitions.ts`), and for a partitioned table whose
 * every write said its rows, `table#told`.
 */
export function writtenTables(db: Queryable<any>): string[] | null {
  const counter = counters.get(db);
  if (!counter || counter.unknown > 0) return null;
  const out: string[] = [];
  for (const name of counter.byTable.keys()) {
    if (partitionedTableOf(name) !== undefined) {
      if (!name.endsWith('#*')) out.push(name);
    } else {
      out.push(name);
      if (partitionColumnOf(name) !== undefined && !counter.byTable.has(unknownPartition(name)))
        out.push(toldPartitions(name));
    }
  }
  return out;
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
  for (const table of tables) {
    n += counter.byTable.get(table) ?? 0;
    const partitioned = namedTable(table).partitioned;
    if (partitioned !== undefined) n += counter.byTable.get(partitioned.unknown) ?? 0;
  }
  return n;
}

/**
 * Reads of the committed versions (on SQLite, the reader connection's count of commits first)
 * are answered again without asking the database while this number stands. It moves when
 * something may have been committed that a read must see: when this process runs a statement
 * that writes (a commit, a write outside a transaction), when a request arrives (its sender may
 * have seen a commit of another process complete before sending it), and when the event loop
 * turns (a timer, a stream or a background task starts from a new count). Within one turn and
 * one request nothing else can tell this process of another process's commit, so every read of
 * the turn may see the versions as the first one read them: a request's several cached reads
 * (the caller's identity, the permission rows, a row, its queue position) ask once.
 */
let versionsEpoch = 0;
let turnEnds = false;

function endTurn(): void {
  turnEnds = false;
  versionsEpoch++;
}

/** Something may have been committed since the versions were last read: the next read asks the database. */
export function versionsMayHaveMoved(): void {
  versionsEpoch++;
}

/** The current number (see `versionsMayHaveMoved`); it moves at the end of this turn of the event loop. */
export function versionsEpochNow(): number {
  if (!turnEnds) {
    turnEnds = true;
    setImmediate(endTurn).unref();
  }
  return versionsEpoch;
}

const readers = new WeakMap<object, () => Promise<DataVersions>>();

const NOTHING_READ: DataVersions = { global: 0, unitemized: 0, rows: new Map() };

/**
 * Where the data version of this handle is read when not through the handle itself: a handle
 * of its own on SQLite's reader connection, so that a read of the version never waits for a
 * transaction holding the writer (inside one too), or nothing at all for a database no other
 * process can open (in memory: the handle's own write count says everything).
 */
export function readVersionWith(db: Kysely<any>, read: (() => Promise<DataVersions>) | null): void {
  readers.set(db, read ?? (() => Promise.resolve(NOTHING_READ)));
  if (!read) inMemory.add(db);
}

/** How many times the versions of each handle with a reader of its own were asked of the database. */
const asks = new WeakMap<object, number>();

/** How many times the versions of `db` were asked of the database (0 for a handle without a reader of its own). */
export function versionsAsked(db: Queryable<any>): number {
  return asks.get(db) ?? 0;
}

/**
 * `read` (the versions of `db`, read in this process without a round trip), asked again only when
 * the number of `versionsEpochNow` has moved since it last was.
 */
export function askedOncePerEpoch(db: object, read: () => Promise<DataVersions>): () => Promise<DataVersions> {
  let answer: Promise<DataVersions> | undefined;
  let askedIn = -1;
  // The answer of this epoch once it has come (the read answers from a promise kept while nothing
  // was committed: it has mostly come before the next cached read asks).
  let known: DataVersions | undefined;
  let knownIn = -1;
  knownVersions.set(db, () => (knownIn === askedIn && knownIn === versionsEpochNow() ? known : undefined));
  return () => {
    const epoch = versionsEpochNow();
    if (answer !== undefined && askedIn === epoch) return answer;
    askedIn = epoch;
    asks.set(db, (asks.get(db) ?? 0) + 1);
    const asked = read();
    answer = asked;
    asked.then(
      (versions) => {
        if (answer !== asked || askedIn !== epoch) return;
        known = versions;
        knownIn = epoch;
      },
      () => undefined,
    );
    return asked;
  };
}

/** Per handle asked once per epoch: the versions its read of this epoch answered, once it has. */
const knownVersions = new WeakMap<object, () => DataVersions | undefined>();

/**
 * The versions `readDataVersions(db)` would answer now, when they are known without waiting: read
 * in this epoch (this request and turn of the event loop, since this process's last write) and
 * come; otherwise undefined (ask with `readDataVersions`). A database no other process can open
 * answers its one unmoving versions.
 */
export function versionsKnownNow(db: Queryable<any>): DataVersions | undefined {
  if (inMemory.has(db)) return NOTHING_READ;
  return knownVersions.get(db)?.();
}

/** Handles of databases no other process can open: their versions never move. */
const inMemory = new WeakSet<object>();

/**
 * The versions a write transaction (`trx`) of the handle `db` commits, read through it after its
 * last write (`bumpDataVersion`): on SQLite one statement on the writer's connection, which holds
 * the write lock, so they are exactly what its commit makes the committed versions. Undefined on
 * PostgreSQL, where the read would be a round trip of its own while the write lock is held (the
 * bump is held back to go with COMMIT): there nothing is read.
 */
export async function versionsBeingCommitted(
  db: Queryable<any>,
  trx: Queryable<any>,
): Promise<DataVersions | undefined> {
  if (!readers.has(db)) return undefined;
  return inMemory.has(db) ? NOTHING_READ : selectVersions(trx);
}

/** The committed data version, as this handle sees it. */
export async function readDataVersion(db: Queryable<any>): Promise<number> {
  return (await readDataVersions(db)).global;
}

/** The committed data version and table versions, as this handle sees them (one statement). */
export async function readDataVersions(db: Queryable<any>): Promise<DataVersions> {
  const reader = readers.get(db);
  return reader ? reader() : sharedRead(db);
}

/** Per handle: how many reads of the versions are on their way, and the one to be sent next, with the callers that share it. */
interface VersionReads {
  inFlight: number;
  next: { read: Promise<DataVersions>; send: () => void } | null;
}
const versionReads = new WeakMap<object, VersionReads>();

/**
 * How many reads of the versions of one handle may be on their way at once: with two, the next
 * one is sent while the last comes back, so requests seldom wait for a read sent before they
 * arrived to come back before theirs goes (with one, the detail read served 5,900 requests a
 * second on PostgreSQL, the service waiting a third of its time; with two, 8,800; three, 8,700).
 */
export const VERSION_READS_IN_FLIGHT = 2;

/**
 * A read of the versions sent after the caller asked, shared with every other caller that asked
 * before it was sent (that one sees every commit that completed before the caller asked, which
 * is all a caller may rely on). On a handle whose reads are round trips (PostgreSQL's pool): a
 * caller with no read on its way sends one at once; callers asking while reads are on their way
 * share the next one, sent at the end of the event loop's turn (every caller of the turn shares
 * it), or, when `VERSION_READS_IN_FLIGHT` are on their way already, at the end of the turn in
 * which one of them answers. So requests arriving together read the versions once, and a request
 * seldom waits for a read sent before it arrived to come back before its own is sent.
 */
function sharedRead(db: Queryable<any>): Promise<DataVersions> {
  let state = versionReads.get(db);
  if (!state) {
    state = { inFlight: 0, next: null };
    versionReads.set(db, state);
  }
  const reads = state;
  const send = (): Promise<DataVersions> => {
    reads.inFlight++;
    const read = selectVersions(db);
    const done = () => {
      reads.inFlight--;
      // A read waiting for one of these to answer goes at the end of this turn.
      if (reads.next !== null) setImmediate(() => reads.next?.send());
    };
    read.then(done, done);
    return read;
  };
  if (reads.inFlight === 0 && reads.next === null) return send();
  if (reads.next === null) {
    let sendNext!: () => void;
    const read = new Promise<DataVersions>((resolve, reject) => {
      sendNext = () => {
        if (reads.next?.read !== read || reads.inFlight >= VERSION_READS_IN_FLIGHT) return;
        reads.next = null;
        send().then(resolve, reject);
      };
    });
    reads.next = { read, send: sendNext };
    setImmediate(sendNext);
  }
  return reads.next.read;
}

/**
 * The same, read inside a write transaction (`trx`) of the handle `db`: on a reader of its own
 * when the handle has one, else through the transaction itself, never through another
 * connection of a pool (every connection may be held by a transaction waiting for the write
 * lock this one holds).
 */
export async function readDataVersionsIn(db: Queryable<any>, trx: Queryable<any>): Promise<DataVersions> {
  const reader = readers.get(db);
  return reader ? reader() : selectVersions(trx);
}

/**
 * The read of every version, as one text: on PostgreSQL the round trip that begins a write
 * transaction reads it too, and the transaction's own read is answered from it (`pg-client.ts`).
 */
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

/** The migration that creates the row. */
export async function createDataVersion(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('data_version')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('data_version').values({ id: 1, version: 0 }).execute();
}
