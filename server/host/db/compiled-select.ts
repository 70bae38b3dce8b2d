import { createQueryId, type Compilable } from 'kysely';
import type { CompiledQuery } from 'kysely';
import { databaseKind, type DatabaseKind, type Queryable } from './database';
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
    auditStatement(template.query);
    const parameters = template.parameters.map((p) => (p instanceof Slot ? values[p.index] : p));
    return (
      await db.executeQuery<R>({ sql: template.sql, query: template.query, parameters, queryId: createQueryId() })
    ).rows;
  };
}
