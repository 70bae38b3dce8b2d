import { sql, type Expression } from 'kysely';
import type * as Pg from 'pg';
import { VERSIONS_READ_SQL } from './data-version';
import { pgDriver } from './pg-driver';

/**
 * A connection of the PostgreSQL pool: the driver's client, with what saves round trips to the
 * database in a write transaction and what keeps named statements working while another
 * instance changes the schema.
 *
 * Every write transaction holds the write lock from its first round trip to its last (see
 * `database.ts`), so each round trip it saves is time every other writer of every instance no
 * longer waits:
 * - the round trip that begins it (BEGIN and the lock) also reads the data version and the table
 *   versions (`VERSIONS_READ_SQL`); the transaction's read of them is answered from it, once.
 *   Nothing moves them while the lock is held but the transaction itself, and a write of
 *   `data_version` drops what was read;
 * - the bump of the data version (`bumpDataVersion`, the last write of every transaction that
 *   wrote) is held back and sent with COMMIT, as one simple query (its values are integers,
 *   written into the text). Anything else sent after it sends it first, as it is; ROLLBACK drops it.
 *
 * Statements with parameters are sent as named (prepared) statements: PostgreSQL parses and
 * plans each text once per connection. When another instance changes a table (a rolling
 * upgrade's migration), a prepared `select *` of it fails with "cached plan must not change
 * result type" (0A000). Then every connection of the process forgets what it prepared (the
 * names move to a new generation, and each connection deallocates its statements before its
 * next one), and the statement is sent again, once, when it ran outside a transaction; inside
 * one, the error ends the transaction and `inTransaction` runs it again, once
 * (`isStalePlanError`).
 */

/** BEGIN, the write lock, and the versions: the first round trip of a write transaction. */
export function beginWriteSql(lock: readonly [number, number]): string {
  return `begin; select pg_advisory_xact_lock(${lock[0]}, ${lock[1]}); ${VERSIONS_READ_SQL}`;
}

/** The same without the versions (a database whose migrations have not created them yet). */
function beginLockedSql(sql: string): string {
  return sql.slice(0, sql.length - VERSIONS_READ_SQL.length - 2);
}

/** The bump of the data version `bumpDataVersion` sends (an upsert, or the update of row 1). */
const VERSION_BUMP = /^(insert into "data_version" |update "data_version" )/;

/** Whether an error is PostgreSQL's refusal of a prepared statement whose table changed shape. */
export function isStalePlanError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === '0A000' && typeof e.message === 'string' && /cached plan must not change result type/.test(e.message);
}

/** Statement names: the same for every connection of the process (a text keeps its index). */
const NAMED_STATEMENTS = 2000;
const statementIndex = new Map<string, number>();
/** Moved when a prepared statement turned out stale: names of the new generation are parsed afresh. */
let generation = 0;

function statementName(text: string): string | undefined {
  let index = statementIndex.get(text);
  if (index === undefined && statementIndex.size < NAMED_STATEMENTS) {
    index = statementIndex.size + 1;
    statementIndex.set(text, index);
  }
  return index === undefined ? undefined : `cc_${generation}_${index}`;
}

interface Result {
  command: string;
  rowCount: number | null;
  rows: unknown[];
}

/** Called with the text of each round trip and how long it took. */
export type RoundTripListener = (sql: string, milliseconds: number) => void;

/**
 * Ends the text of a write whose caller reads no answer from it (no rows, no count) and catches
 * no error of its own (`sentWithNext`).
 */
export const SENT_WITH_NEXT = '/* sent with the next statement */';

/**
 * Marks a write (an insert, update or delete without `returning`) whose caller reads no answer
 * from it and catches no error of its own: on PostgreSQL, inside a transaction, it goes to the
 * database with the transaction's next statement (one round trip for both; an error it raises
 * is raised there and ends the transaction all the same). Elsewhere it runs as it is.
 */
export function sentWithNext<Q extends { modifyEnd(modifier: Expression<any>): Q }>(query: Q): Q {
  return query.modifyEnd(sql.raw(SENT_WITH_NEXT));
}

/**
 * A statement's text with its values written in as literals (quoted, as the driver sends them
 * as untyped text parameters), or null when that is not safe to do: a text with a quote of its
 * own (a `$1` in it could be a literal's) or a value that is not text (bytes).
 */
function withValues(text: string, values: readonly unknown[]): string | null {
  if (text.includes("'") || text.includes('$$')) return null;
  const pg = pgDriver() as unknown as { utils: { prepareValue(value: unknown): unknown }; escapeLiteral(text: string): string };
  let safe = true;
  const written = text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    const value = index < values.length ? pg.utils.prepareValue(values[index]) : undefined;
    if (value === null) return 'null';
    if (typeof value === 'string') return pg.escapeLiteral(value);
    safe = false;
    return '';
  });
  return safe ? written : null;
}

/** The client class of a pool whose round trips `listener` hears. */
export function serviceClient(listener: RoundTripListener): typeof Pg.Client {
  return class ServiceClient extends pgDriver().Client {
    /** Where the connection is: outside a transaction, in one, or in one an error ended. */
    #transaction: 'none' | 'open' | 'failed' = 'none';
    #versionsAtBegin: Result | null = null;
    /** Writes of the transaction held back (values written in), in order. */
    #held: string[] = [];
    #generation = generation;

    // The driver (Kysely) calls query(text, values); every other form is passed on as it is.
    override query(...args: unknown[]): any {
      const [text, values] = args;
      if (args.length === 2 && typeof text === 'string' && Array.isArray(values)) return this.#statement(text, values);
      // (Cursors: the held writes go first; the client sends its queries in order.)
      if (this.#held.length > 0) void (super.query(this.#takeHeld()) as Promise<unknown>).catch(() => undefined);
      return (super.query as (...a: unknown[]) => unknown).apply(this, args);
    }

    #takeHeld(): string {
      const held = this.#held.join('; ');
      this.#held = [];
      return held;
    }

    async #statement(text: string, values: unknown[]): Promise<Result> {
      if (text === VERSIONS_READ_SQL && values.length === 0 && this.#versionsAtBegin) {
        const read = this.#versionsAtBegin;
        this.#versionsAtBegin = null;
        return read;
      }
      if (/^(commit|rollback)$/i.test(text)) return this.#end(text);
      if (text.includes('"data_version"')) this.#versionsAtBegin = null;
      if (this.#transaction === 'open' && (VERSION_BUMP.test(text) || text.endsWith(SENT_WITH_NEXT))) {
        const written = withValues(text, values);
        if (written !== null) {
          this.#held.push(written);
          return { command: /^\w+/.exec(text)![0]!.toUpperCase(), rowCount: 0, rows: [] };
        }
      }
      if (this.#held.length > 0) {
        // The held writes and this statement, in one round trip; its answer is the last.
        const written = withValues(text, values);
        if (written !== null) {
          const results = (await this.#send(`${this.#takeHeld()}; ${written}`, [])) as unknown as Result[];
          return results[results.length - 1]!;
        }
        await this.#send(this.#takeHeld(), []);
      }
      if (text.startsWith('begin; select pg_advisory_xact_lock(') && text.endsWith(VERSIONS_READ_SQL)) return this.#begin(text);
      return this.#send(text, values);
    }

    async #begin(text: string): Promise<Result> {
      let results: Result[];
      try {
        results = (await this.#send(text, [])) as unknown as Result[];
      } catch (err) {
        await this.#send('rollback', []).catch(() => undefined);
        this.#transaction = 'none';
        // Before the migration that creates the versions, the transaction begins without them.
        if ((err as { code?: string }).code !== '42P01') throw err;
        await this.#send(beginLockedSql(text), []);
        this.#transaction = 'open';
        return { command: 'BEGIN', rowCount: null, rows: [] };
      }
      this.#transaction = 'open';
      this.#versionsAtBegin = results[2]!;
      return results[0]!;
    }

    async #end(text: string): Promise<Result> {
      const held = this.#takeHeld();
      this.#versionsAtBegin = null;
      try {
        if (held !== '' && text.toLowerCase() === 'commit') {
          const results = (await this.#send(`${held}; commit`, [])) as unknown as Result[];
          return results[results.length - 1]!;
        }
        return await this.#send(text, []);
      } finally {
        this.#transaction = 'none';
      }
    }

    async #send(text: string, values: unknown[], retried = false): Promise<Result> {
      if (this.#generation !== generation && this.#transaction !== 'failed') {
        await this.#timed('deallocate all', () => super.query('deallocate all'));
        this.#generation = generation;
      }
      const name = values.length > 0 ? statementName(text) : undefined;
      try {
        return await this.#timed(text, () => (name ? super.query({ name, text, values }) : super.query(text, values)));
      } catch (err) {
        if (isStalePlanError(err)) {
          if (this.#generation === generation) generation++;
          if (this.#transaction === 'none' && !retried) return this.#send(text, values, true);
        }
        if (this.#transaction === 'open') this.#transaction = 'failed';
        throw err;
      }
    }

    async #timed(text: string, run: () => Promise<unknown>): Promise<Result> {
      const started = performance.now();
      const result = (await run()) as Result;
      listener(text, performance.now() - started);
      return result;
    }
  };
}
