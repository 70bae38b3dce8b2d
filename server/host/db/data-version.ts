import { AliasNode, DeleteQueryNode, InsertQueryNode, TableNode, UpdateQueryNode } from 'kysely';
import type { Kysely, KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, Transaction, UnknownRow } from 'kysely';

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

class WriteCounter implements KyselyPlugin {
  writes = 0;
  /** Writes whose table could not be told: they count as a write of every table. */
  unknown = 0;
  readonly byTable = new Map<string, number>();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (isWrite(args.node)) {
      this.writes++;
      const table = writtenTable(args.node);
      if (table === null) this.unknown++;
      else this.byTable.set(table, (this.byTable.get(table) ?? 0) + 1);
    }
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
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

/**
 * How many writes went through this handle so far (0 for a handle that does not count); with
 * `tables`, only the writes that may have changed one of them.
 */
export function writesThrough(db: Queryable<any>, tables?: readonly string[]): number {
  const counter = counters.get(db);
  if (!counter) return 0;
  if (!tables) return counter.writes;
  let n = counter.unknown;
  for (const table of tables) n += counter.byTable.get(table) ?? 0;
  return n;
}

const readers = new WeakMap<object, () => Promise<number>>();

/**
 * Where the data version of this handle is read when not through the handle itself: a
 * connection of its own, so that a read of the version never waits for a transaction holding
 * the handle's connection (SQLite has one), or nothing at all for a database no other process
 * can open (in memory: the handle's own write count says everything).
 */
export function readVersionWith(db: Kysely<any>, reader: Kysely<any> | null): void {
  readers.set(db, reader ? () => selectVersion(reader) : () => Promise.resolve(0));
}

/** The committed data version, as this handle sees it. */
export async function readDataVersion(db: Queryable<any>): Promise<number> {
  const reader = readers.get(db);
  return reader ? reader() : selectVersion(db);
}

async function selectVersion(db: Queryable<any>): Promise<number> {
  const row = await (db as Queryable<{ data_version: DataVersionTable }>)
    .selectFrom('data_version')
    .select('version')
    .where('id', '=', 1)
    .executeTakeFirst();
  // A bigint: PostgreSQL's driver gives it as a string.
  return Number(row?.version ?? 0);
}

/** Moves the data version (inside the write transaction, last, so the row is held briefly). */
export async function bumpDataVersion(trx: Queryable<any>): Promise<void> {
  await (trx as Queryable<{ data_version: DataVersionTable }>)
    .updateTable('data_version')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('id', '=', 1)
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
