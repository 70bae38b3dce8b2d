import { createQueryId, type Compilable } from 'kysely';
import type { CompiledQuery, QueryResult } from 'kysely';
import { databaseKind, type DatabaseKind, type Queryable } from './database';
import { writeCountersOf, writtenTable } from './data-version';
import { writtenPartitions } from './partitions';
import { auditStatement, unaudited } from './read-audit';

/** The values a compiled select is run with: plain values, one parameter each. */
export type SelectValue = string | number | null;

/** Stands, while the select is compiled, for the value at `index` of the values it is run with. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * A select of a fixed shape, built and compiled once per kind of database and then run again
 * with new values: building and compiling a Kysely query allocates more than SQLite running it
 * does, and the hottest reads (a row by its id) run many times per request.
 *
 * `build` is called once, with stand-ins for the values: it must pass each one on as a value of
 * the query (compared, matched) and never look at it to decide the query's shape (no `if` on
 * it, no list of values: a list of another length is another shape). The handle it is given is
 * only for building; each run goes through the handle it is given.
 */
export function compiledSelect<V extends readonly SelectValue[], R>(
  build: (db: Queryable<any>, ...values: V) => Compilable<R>,
): (db: Queryable<any>, ...values: V) => Promise<R[]> {
  const compiled = new Map<DatabaseKind, CompiledQuery<R>>();
  return async (db, ...values) => {
    const kind = databaseKind(db);
    let template = compiled.get(kind);
    if (!template) {
      // Compiled with placeholders, outside the audit (which sees it, with its values, below).
      template = unaudited(() => build(db, ...(values.map((_, i) => new Slot(i)) as unknown as V)).compile());
      if (!template.parameters.some((p) => p instanceof Slot) && values.length > 0)
        throw new Error('compiledSelect: the select does not use its values');
      compiled.set(kind, template);
    }
    // Compiled once, so the tests' audit of the tables a cached answer reads sees it at each run.
    auditStatement(template.query, (p) => (p instanceof Slot ? values[p.index] : p));
    const parameters = template.parameters.map((p) => (p instanceof Slot ? values[p.index] : p));
    return (
      await db.executeQuery<R>({ sql: template.sql, query: template.query, parameters, queryId: createQueryId() })
    ).rows;
  };
}

/** The fields a write sets (or inserts): plain values; an undefined field is left out, as Kysely does. */
export type WriteFields = Readonly<Record<string, SelectValue | boolean | undefined>>;

/** How many shapes (sets of fields) a compiled write keeps per kind of database; beyond them it is compiled at each run. */
const SHAPES_KEPT = 32;

/**
 * A write (an insert of one row, an update) built and compiled once per kind of database and set
 * of fields, then run again with new values: building and compiling an insert or an update
 * allocates more than SQLite running it. `build` gets stand-ins for the fields' values and for
 * `keys` (the values that say which rows: an id, a request), and must use each as a value only,
 * as `compiledSelect` says. The write is counted, its partitions told and the audit told as the
 * statement built afresh would be (`writeCountersOf`); a handle running another plugin, or a
 * field that is not a plain value (an expression), gets the statement built afresh.
 */
export function compiledWrite<K extends readonly SelectValue[], R = unknown>(
  build: (db: Queryable<any>, fields: Record<string, unknown>, ...keys: K) => Compilable<R>,
): (db: Queryable<any>, fields: WriteFields, ...keys: K) => Promise<QueryResult<R>> {
  const compiled = new Map<string, { query: CompiledQuery<R>; table: string | null }>();
  return async (db, fields, ...keys) => {
    const counters = writeCountersOf(db);
    let shape = databaseKind(db) as string;
    const values: unknown[] = [];
    for (const name in fields) {
      const value = fields[name];
      if (value === undefined) continue;
      if (value !== null && typeof value === 'object') return db.executeQuery(build(db, fields, ...keys));
      shape += `|${name}`;
      values.push(value);
    }
    if (counters === null) return db.executeQuery(build(db, fields, ...keys));
    for (const key of keys) values.push(key);
    let template = compiled.get(shape);
    if (!template) {
      const stand: Record<string, unknown> = {};
      let i = 0;
      for (const name in fields) if (fields[name] !== undefined) stand[name] = new Slot(i++);
      const keySlots = keys.map((_, k) => new Slot(i + k)) as unknown as K;
      const query = unaudited(() => build(db, stand, ...keySlots).compile());
      template = { query, table: writtenTable(query.query) };
      if (compiled.size < SHAPES_KEPT) compiled.set(shape, template);
    }
    const resolve = (p: unknown) => (p instanceof Slot ? values[p.index] : p);
    auditStatement(template.query.query, resolve);
    const queryId = createQueryId();
    const partitions = template.table === null ? [] : writtenPartitions(template.query.query, resolve);
    for (const counter of counters) counter.sentCompiled(queryId, template.table, partitions);
    const parameters = template.query.parameters.map(resolve);
    return db.executeQuery<R>({ sql: template.query.sql, query: template.query.query, parameters, queryId });
  };
}
