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
 *   wrote) is held back and sent with COMMIT, as one simple query. Anything else sent after it
 *   sends it first; ROLLBACK drops it;
 * - a transaction that wrote commits without waiting for the log's flush, and the same round
 *   trip then waits for it outside the lock (`durableCommitSql`).
 *
 * Statements with parameters are sent as named (prepared) statements: PostgreSQL parses and
 * plans each text once per connection. In a simple query of several statements (BEGIN with the
 * first statement, held writes with the next) they run as `execute <name>(<values as literals>)`,
 * prepared in the same text (`prepare <name> as ...`) the first time a connection sends them:
 * inside the locked time PostgreSQL then neither parses nor plans them again. When another instance changes a table (a rolling
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
  return (
    e?.code === '0A000' && typeof e.message === 'string' && /cached plan must not change result type/.test(e.message)
  );
}

/**
 * Runs `attempt` (a whole transaction) once more when a prepared statement that another
 * instance's schema change made stale ended it (PostgreSQL; the transaction wrote nothing): the
 * second attempt runs on statements prepared afresh. Every transaction the service opens goes
 * through it: `inTransaction`, the administrator's bootstrap at start, backup and restore.
 */
export async function retryingStalePlan<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (!isStalePlanError(err)) throw err;
    return attempt();
  }
}

/** Statement names: the same for every connection of the process (a text keeps its index). */
const NAMED_STATEMENTS = 2000;
const statementIndex = new Map<string, number>();
/** The texts by index (`statementIndex` the other way). */
const statementTexts: string[] = [];
/** Moved when a prepared statement turned out stale: names of the new generation are parsed afresh. */
let generation = 0;

function statementName(text: string): string | undefined {
  let index = statementIndex.get(text);
  if (index === undefined && statementIndex.size < NAMED_STATEMENTS) {
    index = statementIndex.size + 1;
    statementIndex.set(text, index);
    statementTexts[index] = text;
  }
  return index === undefined ? undefined : `cc_${generation}_${index}`;
}

/** One literal of `execute`'s arguments: quoted text (doubled quotes inside), or null. */
const LITERAL = /^\s*(?:null|(E?)'((?:[^']|'')*)')\s*(?:,|$)/;

/**
 * A round trip's text as the statements it runs, for reading (tests, logs): each
 * `execute <name>(<literals>)` as its statement with the literals written in, and the
 * `prepare`s left out. A name this process did not give is left as it is.
 */
export function asWritten(text: string): string {
  return text
    .replace(/prepare (cc_\d+_\d+) as .*?; (?=execute \1\()/g, '')
    .replace(/execute cc_\d+_(\d+)\(((?:[^')]|'(?:[^']|'')*')*)\)/g, (whole, index: string, list: string) => {
      const statement = statementTexts[Number(index)];
      if (statement === undefined) return whole;
      const literals: string[] = [];
      let rest = list;
      while (rest.trim() !== '') {
        const m = LITERAL.exec(rest);
        if (!m) return whole;
        literals.push(m[0].replace(/\s*,?\s*$/, '').trim());
        rest = rest.slice(m[0].length);
      }
      return statement.replace(/\$(\d+)/g, (p, n: string) => literals[Number(n) - 1] ?? p);
    });
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

/** A value as a literal of a simple query (quoted, as the driver sends it as an untyped text parameter), or null when it cannot be one. */
function literalOf(value: unknown): string | null {
  const pg = pgDriver() as unknown as { utils: { prepareValue(value: unknown): unknown } };
  const prepared = pg.utils.prepareValue(value);
  if (prepared === null) return 'null';
  // Text with a NUL character would end a simple query's text; as a parameter PostgreSQL refuses
  // it, and the caller is told so. Bytes are sent as parameters too.
  if (typeof prepared === 'string' && !prepared.includes('\0')) return quoted(prepared);
  return null;
}

/**
 * Text as a quoted literal, exactly as the driver's `escapeLiteral` writes it (quotes and
 * backslashes doubled, ` E'...'` when there was a backslash), without building it one character
 * at a time: a report's changelog snapshots (hundreds of characters each) are written while the
 * write lock is held, and the driver's way leaves a string piece per character for the collector.
 */
export function quoted(text: string): string {
  const quote = text.includes("'");
  const backslash = text.includes('\\');
  if (!quote && !backslash) return `'${text}'`;
  const doubled = quote ? text.replace(/'/g, "''") : text;
  return backslash ? ` E'${doubled.replace(/\\/g, '\\\\')}'` : `'${doubled}'`;
}

/**
 * A statement's text with its values written in as literals, or null when that is not safe to
 * do: a text with a quote of its own (a `$1` in it could be a literal's), or a value that cannot
 * be a literal (`literalOf`).
 */
function withValues(text: string, values: readonly unknown[]): string | null {
  if (text.includes("'") || text.includes('$$')) return null;
  let safe = true;
  const written = text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    const literal = index < values.length ? literalOf(values[index]) : null;
    if (literal === null) safe = false;
    return literal ?? '';
  });
  return safe ? written : null;
}

/**
 * A statement of a simple query: its prepared statement run with its values as literals
 * (`execute cc_1_7('42', null)`), or its text with the values written in (`withValues`) when it
 * has no name (more texts than `NAMED_STATEMENTS`). PostgreSQL then neither parses nor plans the
 * statement again inside the transaction's locked time, only the arguments.
 */
interface Inline {
  text: string;
  /** The statement's name, when it runs as `execute`. */
  name?: string;
  /** `execute`'s arguments, or the whole statement (no name). */
  sql: string;
}

function inline(text: string, values: readonly unknown[]): Inline | null {
  const name = values.length > 0 ? statementName(text) : undefined;
  if (name === undefined) {
    const written = withValues(text, values);
    return written === null ? null : { text, sql: written };
  }
  const args: string[] = [];
  for (const value of values) {
    const literal = literalOf(value);
    if (literal === null) return null;
    args.push(literal);
  }
  return { text, name, sql: `execute ${name}(${args.join(', ')})` };
}

/** The result of a round trip's last statement (a round trip of several answers with a list). */
function lastOf(answer: Result | Result[]): Result {
  return Array.isArray(answer) ? answer[answer.length - 1]! : answer;
}

/**
 * Sent after the COMMIT of a transaction that wrote, in the same text (`durableCommitSql`): a
 * transactional message to the log, of no content, in a transaction of its own that commits with
 * the session's `synchronous_commit`, so that its answer waits for the log to be flushed past it,
 * and so past the COMMIT before it. PostgreSQL lets every role run it; logical decoding, where a
 * database uses it, sees a message with this prefix and nothing in it.
 */
export const FLUSH_BARRIER_SQL = "select pg_logical_emit_message(true, 'change-control', '')";

/**
 * Whether a connection can use the flush barrier and needs it: it may run the function, and its
 * session commits synchronously (a session that commits without waiting for the flush anyway,
 * `synchronous_commit = off`, has nothing to wait for). Asked once per connection, as it opens.
 */
export const FLUSH_BARRIER_USABLE_SQL =
  "select has_function_privilege('pg_catalog.pg_logical_emit_message(boolean, text, text)', 'execute') and current_setting('synchronous_commit') <> 'off' as usable";

/**
 * The end of a write transaction, the write lock released before the log's flush: COMMIT without
 * waiting for the flush (`synchronous_commit` off for this transaction only), so that the lock
 * and the rows pass to the next writer of any instance at once, then the flush barrier, whose
 * answer comes once the log is on disk past the COMMIT. The round trip is answered when the
 * transaction is durable, as a plain COMMIT is; what changes is that no other writer waits for
 * the flush meanwhile, and writers waiting for theirs share it (PostgreSQL flushes the log as far
 * as it has been written). The log is flushed in order: a transaction that read this one's rows
 * and committed durably made this one durable too. In the time of the flush (a fraction of a
 * millisecond) a reader may see rows whose writer has not been answered yet, as it may at any
 * commit between the commit and the answer.
 */
export function durableCommitSql(held: string): string {
  return `${held === '' ? '' : `${held}; `}set local synchronous_commit to off; commit; ${FLUSH_BARRIER_SQL}`;
}

/** A connection of the pool (`serviceClient`) as the pool's `connect` event gives it. */
export interface ServiceConnection {
  /** Asks, before anything else is sent on it, whether the connection ends its write transactions with the flush barrier. */
  learnFlushBarrier(): void;
}

/** The client class of a pool whose round trips `listener` hears. */
export function serviceClient(listener: RoundTripListener): typeof Pg.Client {
  return class ServiceClient extends pgDriver().Client implements ServiceConnection {
    /** Where the connection is: outside a transaction, in one, or in one an error ended. */
    #transaction: 'none' | 'open' | 'failed' = 'none';
    #versionsAtBegin: Result | null = null;
    /** Writes of the transaction held back, in order. */
    #held: Inline[] = [];
    #generation = generation;
    /** Whether the text being sent prepares statements (`#compose`). */
    #preparing = false;
    /**
     * A round trip that prepared statements failed: which of them PostgreSQL prepared is unknown,
     * so the connection deallocates them all before its next statement (outside a failed transaction).
     */
    #resync = false;

    /** BEGIN, the lock and the versions, not sent yet: they go with the transaction's first statement. */
    #pendingBegin: string | null = null;
    /** Whether the transaction has written `data_version` (what BEGIN read of it is then stale). */
    #versionsWritten = false;
    /** Whether the transaction has sent or holds anything but a select: it ends with the flush barrier when the connection uses it. */
    #wrote = false;
    /** Whether the connection's write transactions end with the flush barrier (`durableCommitSql`): known once it has asked. */
    #flushBarrier = false;

    learnFlushBarrier(): void {
      // Sent by itself (not timed, not heard): the driver sends its queries in order, so this
      // one goes before any the pool's caller sends.
      void (super.query(FLUSH_BARRIER_USABLE_SQL) as Promise<Result>).then(
        (answer) => {
          this.#flushBarrier = (answer.rows[0] as { usable?: unknown } | undefined)?.usable === true;
        },
        () => undefined,
      );
    }

    // The driver (Kysely) calls query(text, values); every other form is passed on as it is.
    override query(...args: unknown[]): any {
      const [text, values] = args;
      if (args.length === 2 && typeof text === 'string' && Array.isArray(values)) return this.#statement(text, values);
      // (Cursors: BEGIN and the held writes go first; the client sends its queries in order.)
      const prefix = this.#takePrefix();
      const preparing = this.#preparing;
      this.#preparing = false;
      if (prefix !== '')
        void (super.query(prefix) as Promise<unknown>).catch(() => {
          if (preparing) this.#resync = true;
        });
      return (super.query as (...a: unknown[]) => unknown).apply(this, args);
    }

    /** What the driver knows this connection has prepared (name to text). */
    get #parsed(): Record<string, string> {
      return (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection
        .parsedStatements;
    }

    /**
     * Deallocates every statement this connection prepared, when their names moved to a new
     * generation or which of them exist is unknown (`#resync`). Not in a transaction an error
     * ended (PostgreSQL would refuse it): after its ROLLBACK. The driver sends its queries in
     * order, so what is sent next goes after it.
     */
    #forgetPrepared(): void {
      if ((this.#generation === generation && !this.#resync) || this.#transaction === 'failed') return;
      void this.#timed('deallocate all', () => super.query('deallocate all')).catch(() => undefined);
      (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements =
        {};
      this.#generation = generation;
      this.#resync = false;
    }

    /**
     * Statements as one simple query's text, to be sent now: a named one not prepared on this
     * connection yet is prepared first (`prepare cc_1_7 as ...`), in the same text, and counts as
     * prepared from here on.
     */
    #compose(statements: readonly Inline[]): string {
      this.#forgetPrepared();
      const parsed = this.#parsed;
      return statements
        .map((s) => {
          if (s.name === undefined || parsed[s.name] !== undefined) return s.sql;
          parsed[s.name] = s.text;
          this.#preparing = true;
          return `prepare ${s.name} as ${s.text}; ${s.sql}`;
        })
        .join('; ');
    }

    #takeHeld(): string {
      const held = this.#compose(this.#held);
      this.#held = [];
      return held;
    }

    /** What the next round trip sends before its statement: BEGIN (not sent yet), then the held writes. */
    #takePrefix(): string {
      const begin = this.#pendingBegin ?? '';
      this.#pendingBegin = null;
      const held = this.#takeHeld();
      return begin && held ? `${begin}; ${held}` : begin || held;
    }

    async #statement(text: string, values: unknown[]): Promise<Result> {
      if (text === VERSIONS_READ_SQL && values.length === 0) {
        // The transaction's read of the versions: BEGIN read them (sent now if it was waiting).
        if (this.#pendingBegin !== null) await this.#sendPrefixed(null);
        const read = this.#versionsAtBegin;
        this.#versionsAtBegin = null;
        if (read) return read;
      }
      if (text.startsWith('begin; select pg_advisory_xact_lock(') && text.endsWith(VERSIONS_READ_SQL)) {
        // Sent with the transaction's first statement: one round trip for both.
        this.#pendingBegin = text;
        this.#transaction = 'open';
        this.#versionsAtBegin = null;
        this.#versionsWritten = false;
        this.#wrote = false;
        return { command: 'BEGIN', rowCount: null, rows: [] };
      }
      if (/^(commit|rollback)$/i.test(text)) return this.#end(text);
      if (this.#transaction === 'open' && !/^select\b/i.test(text)) this.#wrote = true;
      if (text.includes('"data_version"')) {
        this.#versionsAtBegin = null;
        this.#versionsWritten = true;
      }
      if (this.#transaction === 'open' && (VERSION_BUMP.test(text) || text.endsWith(SENT_WITH_NEXT))) {
        const held = inline(text, values);
        if (held !== null) {
          this.#held.push(held);
          return { command: /^\w+/.exec(text)![0]!.toUpperCase(), rowCount: 0, rows: [] };
        }
      }
      if (this.#pendingBegin !== null || this.#held.length > 0) {
        // BEGIN, the held writes and this statement, in one round trip; its answer is the last.
        const statement = inline(text, values);
        if (statement !== null) return (await this.#sendPrefixed(statement))!;
        await this.#sendPrefixed(null);
      }
      return this.#send(text, values);
    }

    /**
     * Sends what waits (BEGIN, the held writes) and `statement`, as one simple query; answers
     * with the last statement's result.
     */
    async #sendPrefixed(statement: Inline | null): Promise<Result | null> {
      const begin = this.#pendingBegin;
      const prefix = this.#takePrefix();
      const written = statement === null ? '' : this.#compose([statement]);
      const text = written === '' ? prefix : prefix === '' ? written : `${prefix}; ${written}`;
      if (text === '') return null;
      const preparing = this.#preparing;
      let answer: Result | Result[];
      try {
        answer = await this.#send(text, []);
      } catch (err) {
        // Before the migration that creates the versions, the transaction begins without them.
        if (begin === null || (err as { code?: string }).code !== '42P01') throw err;
        await this.#send('rollback', []).catch(() => undefined);
        // Nothing after BEGIN ran: what the text prepares is prepared by sending the rest again.
        this.#resync = false;
        this.#transaction = 'open';
        await this.#send(beginLockedSql(begin), []);
        const rest = text.slice(begin.length + 2);
        this.#preparing = preparing;
        return rest === '' ? null : lastOf(await this.#send(rest, []));
      }
      if (begin !== null && Array.isArray(answer) && !this.#versionsWritten) this.#versionsAtBegin = answer[2] ?? null;
      return lastOf(answer);
    }

    async #end(text: string): Promise<Result> {
      const waiting = this.#pendingBegin !== null;
      this.#versionsAtBegin = null;
      try {
        if (text.toLowerCase() === 'commit') {
          // A transaction that sent nothing yet sends BEGIN and its held writes with COMMIT, or nothing at all.
          if (waiting && this.#held.length === 0) {
            this.#pendingBegin = null;
            return { command: 'COMMIT', rowCount: null, rows: [] };
          }
          const prefix = this.#takePrefix();
          if (this.#wrote && this.#flushBarrier) {
            // Answered by COMMIT and the barrier after it (the last two answers).
            const answers = (await this.#send(durableCommitSql(prefix), [])) as unknown as Result[];
            return answers[answers.length - 2]!;
          }
          if (prefix !== '') return lastOf(await this.#send(`${prefix}; commit`, []));
          return await this.#send(text, []);
        }
        // ROLLBACK drops what was held; a transaction that sent nothing has nothing to roll back.
        this.#pendingBegin = null;
        this.#held = [];
        if (waiting) return { command: 'ROLLBACK', rowCount: null, rows: [] };
        return await this.#send(text, []);
      } finally {
        // A COMMIT sent after a statement that failed in the same text did not end the
        // transaction: it stays failed until the ROLLBACK that follows.
        if (this.#transaction !== 'failed' || text.toLowerCase() !== 'commit') this.#transaction = 'none';
      }
    }

    async #send(text: string, values: unknown[], retried = false): Promise<Result> {
      const preparing = this.#preparing;
      this.#preparing = false;
      this.#forgetPrepared();
      const name = values.length > 0 ? statementName(text) : undefined;
      try {
        return await this.#timed(text, () => (name ? super.query({ name, text, values }) : super.query(text, values)));
      } catch (err) {
        if (preparing) this.#resync = true;
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
