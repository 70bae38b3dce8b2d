/**
 * What the service uses of a SQLite driver's connection: better-sqlite3's API, which
 * `node:sqlite` is adapted to (`sqlite-node.ts`).
 */
export interface SqliteConnection {
  prepare(source: string): SqliteStatement;
  /** Runs `pragma <source>`; its rows. */
  pragma(source: string): unknown;
  function(name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown): unknown;
  close(): unknown;
  /** Whether it is open (not closed yet). */
  readonly open: boolean;
}

export interface SqliteStatement {
  /** Whether it answers rows. */
  readonly reader: boolean;
  /** Whether it cannot write. */
  readonly readonly: boolean;
  all(parameters: readonly unknown[]): unknown[];
  get(parameters: readonly unknown[]): unknown;
  run(parameters: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(parameters: readonly unknown[]): IterableIterator<unknown>;
}

export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite';

/** A SQLite driver: better-sqlite3 (a native module, `npm start`) or Node's own `node:sqlite` (the editor's runtime). */
export interface SqliteDriver {
  readonly name: SqliteDriverName;
  /** Opens a connection to a SQLite file (or `:memory:`). */
  open(path: string, options: { readonly: boolean }): SqliteConnection;
  /** Why it cannot be used in this process (its module cannot be loaded), or null. */
  problem(): string | null;
  /**
   * What the checkpointer thread opens its own connection with (`wal-checkpointer.ts`):
   * `node:sqlite`, or the file better-sqlite3 is loaded from.
   */
  threadModule(): string;
}
