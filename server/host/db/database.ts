import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Migration, type Transaction } from 'kysely';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HostTables } from './tables';
import { countingWrites, readVersionWith } from './data-version';

export type HostDb = Kysely<HostTables>;
/** A migration step of the host or a plugin. */
export type { Migration };
/** A database handle or a transaction: repository functions take either. */
export type Queryable<T = HostTables> = Kysely<T> | Transaction<T>;

export interface OpenDatabase {
  db: HostDb;
  sqlite: SQLite.Database;
  close(): Promise<void>;
}

/** Prepared statements kept per SQL text (a query compiled again reuses its statement); the cache is bounded. */
const STATEMENT_CACHE_SIZE = 2000;

function withStatementCache(sqlite: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (source: string): SQLite.Statement => {
    let statement = cache.get(source);
    if (!statement) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
      statement = sqlite.prepare(source);
      cache.set(source, statement);
    }
    return statement;
  };
  return new Proxy(sqlite, {
    get(target, property, receiver) {
      if (property === 'prepare') return prepare;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Opens (creating the folder when needed) a SQLite database with WAL and foreign keys. */
export function openDatabase(path: string): OpenDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  if (path !== ':memory:') sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  // SQLite's lower() folds ASCII only; case-insensitive search needs every script folded.
  sqlite.function('unicode_lower', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value) as string | null);
  const db = countingWrites(new Kysely<HostTables>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) }));
  // The data version is read on a read-only connection of its own (WAL: it sees the last
  // commit and never waits for a transaction on the main one). Nothing else can open a
  // database in memory.
  const versionReader = path === ':memory:' ? null : new Kysely<HostTables>({ dialect: new SqliteDialect({ database: new SQLite(path, { readonly: true }) }) });
  readVersionWith(db, versionReader);
  return {
    db,
    sqlite,
    close: async () => {
      await db.destroy();
      await versionReader?.destroy();
    },
  };
}

/** Views a database handle with a plugin's tables added to the host's. */
export function withTables<T>(db: Queryable): Queryable<HostTables & T> {
  return db as unknown as Queryable<HostTables & T>;
}

/** Runs every migration (host first, then each plugin's, in the order given). */
export async function migrate(db: HostDb, migrations: Record<string, Migration>): Promise<void> {
  const migrator = new Migrator({
    db,
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
