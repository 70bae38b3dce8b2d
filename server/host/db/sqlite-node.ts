import type { SqliteConnection, SqliteDriver, SqliteStatement } from './sqlite-driver';

/** What the service uses of `node:sqlite` (Node.js 22.13 and later; the project's types are Node 20's). */
interface NodeSqliteModule {
  DatabaseSync: new (path: string, options: { readOnly: boolean }) => DatabaseSync;
  StatementSync: { prototype: object };
}
interface DatabaseSync {
  prepare(source: string): StatementSync;
  function(name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown): void;
  close(): void;
}
interface StatementSync {
  columns(): Array<{ name: string }>;
  setReturnArrays(enabled: boolean): void;
  all(...parameters: unknown[]): unknown[];
  get(...parameters: unknown[]): unknown;
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}

let loaded: NodeSqliteModule | undefined;
let loadProblem: string | null | undefined;

function load(): NodeSqliteModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('node:sqlite') as NodeSqliteModule;
  return loaded;
}

/** better-sqlite3's message for a value it cannot bind: both drivers refuse the same values alike. */
const UNBINDABLE = 'SQLite3 can only bind numbers, strings, bigints, buffers, and null';

/**
 * The parameters as better-sqlite3 binds them: numbers, strings, bigints, buffers and null;
 * `undefined` as null; anything else (a boolean, a Date, an object) refused with its TypeError.
 * (`node:sqlite` would bind a boolean as 0 or 1 and refuse `undefined`: code that passes on one
 * driver passes on the other.)
 */
function bindable(parameters: readonly unknown[]): unknown[] {
  const out = new Array<unknown>(parameters.length);
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i];
    switch (typeof value) {
      case 'number':
      case 'string':
      case 'bigint':
        out[i] = value;
        break;
      case 'undefined':
        out[i] = null;
        break;
      default:
        if (value === null || value instanceof Uint8Array) out[i] = value;
        else throw new TypeError(UNBINDABLE);
    }
  }
  return out;
}

/**
 * A statement answering rows as better-sqlite3 does: plain objects (`node:sqlite`'s own have no
 * prototype), built from arrays by column name, the last of a repeated name winning.
 */
class NodeStatement implements SqliteStatement {
  readonly reader: boolean;
  private readonly names: string[];
  constructor(
    private readonly statement: StatementSync,
    /**
     * `node:sqlite` does not tell whether a statement writes: on a read-only connection none can
     * (SQLite refuses any write there, changing nothing), on the writer any may.
     */
    readonly readonly: boolean,
  ) {
    this.names = statement.columns().map((column) => column.name);
    // Whether it answers rows, as better-sqlite3's `reader` says: it has result columns.
    this.reader = this.names.length > 0;
    if (this.reader) statement.setReturnArrays(true);
  }
  private row(values: unknown[]): Record<string, unknown> {
    const row: Record<string, unknown> = {};
    const names = this.names;
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row;
  }
  all(parameters: readonly unknown[]): unknown[] {
    const rows = this.statement.all(...bindable(parameters)) as unknown[][];
    const out = new Array<unknown>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = this.row(rows[i]!);
    return out;
  }
  get(parameters: readonly unknown[]): unknown {
    const values = this.statement.get(...bindable(parameters)) as unknown[] | undefined;
    return values === undefined ? undefined : this.row(values);
  }
  run(parameters: readonly unknown[]) {
    return this.statement.run(...bindable(parameters));
  }
  *iterate(parameters: readonly unknown[]): IterableIterator<unknown> {
    for (const values of this.statement.iterate(...bindable(parameters))) yield this.row(values as unknown[]);
  }
}

class NodeConnection implements SqliteConnection {
  private closed = false;
  constructor(
    private readonly database: DatabaseSync,
    private readonly readOnly: boolean,
  ) {}
  get open(): boolean {
    return !this.closed;
  }
  prepare(source: string): SqliteStatement {
    return new NodeStatement(this.database.prepare(source), this.readOnly);
  }
  pragma(source: string): unknown {
    return this.prepare(`pragma ${source}`).all([]);
  }
  function(name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown): void {
    this.database.function(name, { deterministic: options.deterministic }, fn);
  }
  close(): void {
    this.closed = true;
    this.database.close();
  }
}

/** Node's own SQLite (`node:sqlite`), adapted to the service's `SqliteConnection`: nothing to install. */
export const nodeSqlite: SqliteDriver = {
  name: 'node:sqlite',
  open: (path, options) =>
    new NodeConnection(new (load().DatabaseSync)(path, { readOnly: options.readonly }), options.readonly),
  problem() {
    if (loadProblem === undefined) {
      try {
        // `columns()` and `setReturnArrays()` (Node.js 22.16) make its rows as better-sqlite3's.
        const statement = load().StatementSync.prototype as Partial<StatementSync>;
        loadProblem =
          typeof statement.columns === 'function' && typeof statement.setReturnArrays === 'function'
            ? null
            : `this Node.js (${process.versions.node}) has an older node:sqlite: Node.js 22.16 or newer has what the service uses`;
      } catch {
        loadProblem = `this Node.js (${process.versions.node}) has no node:sqlite: Node.js 22.16 or newer has it`;
      }
    }
    return loadProblem;
  },
  threadModule: () => 'node:sqlite',
};
