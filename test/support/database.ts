import type { Migration } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate, openDatabase, postgresUrlOf, type HostDb, type OpenDatabase } from '../../server/host/db/database';

/**
 * The database the service tests run on. Without `TEST_DATABASE_URL`: a fresh SQLite database
 * in memory per service, as always. With `TEST_DATABASE_URL=postgres://USER@HOST:PORT/DATABASE`
 * (a database the user may create schemas in): PostgreSQL, each service in a schema of its own
 * in that database.
 *
 * Migrating a schema on PostgreSQL takes about half a second, so schemas are reused: a schema
 * released by a closed service is emptied (its tables truncated, identities restarted, the rows
 * the migrations wrote put back) and handed to the next service that runs the same migrations.
 * Every schema this process made is dropped when it exits (`dropTestSchemas`).
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || '';
export const onPostgres = TEST_DATABASE_URL !== '';

/**
 * How a write transaction's COMMIT ends its round trip's text on PostgreSQL, as a regular
 * expression's source: `commit`, or, where the session commits synchronously, COMMIT without
 * waiting for the flush and the flush barrier after it (`durableCommitSql`).
 */
export const COMMIT_TEXT = String.raw`(?:set local synchronous_commit to off; )?commit(?:; select pg_logical_emit_message\(true, 'change-control', ''\))?`;
/**
 * With `TEST_SQLITE_FILES=1` (and no `TEST_DATABASE_URL`), each fresh SQLite database is a file
 * (in a folder removed when the process exits) instead of one in memory: the service's writer and
 * reader connections (`openSqlite`) under every test, as `npm start` runs it.
 */
const TEST_SQLITE_FILES = !onPostgres && process.env.TEST_SQLITE_FILES === '1';
let filesDir = '';

function sqliteFile(): string {
  if (!filesDir) {
    filesDir = mkdtempSync(join(tmpdir(), 'cc-test-db-'));
    process.on('exit', () => rmSync(filesDir, { recursive: true, force: true }));
  }
  return join(filesDir, `${counter++}.sqlite3`);
}

export interface TestDatabase extends OpenDatabase {
  /** The URL another process (an instance of the service) opens the same database with. */
  url: string;
}

interface Schema {
  name: string;
  /** The migrations applied in it (sorted names, joined). */
  key: string;
  /** Rows the migrations wrote, per table, put back when the schema is emptied. */
  seed: Map<string, Record<string, unknown>[]> | null;
}

const prefix = `t${process.pid}_`;
let counter = 0;
const free: Schema[] = [];
const made: string[] = [];
/** Schemas kept by name (a service reopening "the same file"): never emptied while the process runs. */
const named = new Map<string, Schema>();
let admin: pg.Client | null = null;

async function adminClient(): Promise<pg.Client> {
  if (!admin) {
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
  }
  return admin;
}

/** The URL of a schema of the test database. */
export function schemaUrl(schema: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function newSchema(): Promise<Schema> {
  const name = `${prefix}${counter++}`;
  await (await adminClient()).query(`create schema ${name}`);
  made.push(name);
  return { name, key: '', seed: null };
}

async function tablesOf(schema: string): Promise<string[]> {
  const { rows } = await (
    await adminClient()
  ).query<{ tablename: string }>(
    `select tablename from pg_tables where schemaname = $1 and tablename not like 'kysely_migration%' order by tablename`,
    [schema],
  );
  return rows.map((r) => r.tablename);
}

async function readSeed(schema: string): Promise<Map<string, Record<string, unknown>[]>> {
  const client = await adminClient();
  const seed = new Map<string, Record<string, unknown>[]>();
  for (const table of await tablesOf(schema)) {
    const { rows } = await client.query<Record<string, unknown>>(`select * from ${schema}."${table}"`);
    if (rows.length > 0) seed.set(table, rows);
  }
  return seed;
}

/** Empties a schema back to what its migrations left: rows deleted, identities restarted, seed rows put back. */
async function reset(schema: Schema): Promise<void> {
  const client = await adminClient();
  const tables = (await tablesOf(schema.name)).map((t) => `${schema.name}."${t}"`);
  if (tables.length === 0) return;
  const { rows: sequences } = await client.query<{ name: string }>(
    `select quote_ident(schemaname) || '.' || quote_ident(sequencename) as name from pg_sequences where schemaname = $1`,
    [schema.name],
  );
  const restart = sequences.map((s) => `alter sequence ${s.name} restart`);
  try {
    // Deleting the few rows of small tables is several times faster than TRUNCATE; foreign keys
    // are not checked meanwhile (a superuser's session_replication_role), every table is emptied.
    await client.query(
      [
        'set session_replication_role = replica',
        ...tables.map((t) => `delete from ${t}`),
        ...restart,
        'set session_replication_role = origin',
      ].join(';\n'),
    );
  } catch {
    await client.query('set session_replication_role = origin').catch(() => undefined);
    await client.query(`truncate ${tables.join(', ')} restart identity cascade`);
  }
  for (const [table, rows] of schema.seed ?? []) {
    for (const row of rows) {
      const columns = Object.keys(row);
      await client.query(
        `insert into ${schema.name}."${table}" (${columns.map((c) => `"${c}"`).join(', ')}) overriding system value values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
        columns.map((c) => row[c]),
      );
    }
  }
}

/**
 * A database for one service running `migrations` (applied here). `name` keeps the database
 * under that name for the process's life (a service stopped and started again on "the same
 * file"); without it the database is fresh.
 */
export async function openTestDatabase(migrations: Record<string, Migration>, name?: string): Promise<TestDatabase> {
  if (!onPostgres) {
    // The service migrates it when it starts.
    const target = name ?? (TEST_SQLITE_FILES ? sqliteFile() : ':memory:');
    const database = openDatabase(target);
    return { ...database, url: target };
  }
  const key = Object.keys(migrations).sort().join('\n');
  let schema: Schema | undefined;
  let fresh = false;
  if (name !== undefined && named.has(name)) schema = named.get(name)!;
  else {
    const index = name === undefined ? free.findIndex((s) => s.key === key) : -1;
    if (index >= 0) {
      schema = free.splice(index, 1)[0]!;
      await reset(schema);
    } else {
      schema = await newSchema();
      fresh = true;
    }
    if (name !== undefined) named.set(name, schema);
  }
  const url = schemaUrl(schema.name);
  const database = openDatabase(url);
  if (fresh) {
    await migrate(database.db, migrations);
    schema.key = key;
    schema.seed = await readSeed(schema.name);
  }
  const reusable = name === undefined ? schema : null;
  let closed = false;
  return {
    ...database,
    url,
    close: async () => {
      // Closing twice must not offer the schema twice (two services would then share it).
      if (closed) return;
      closed = true;
      await database.close();
      if (!reusable) return;
      // Reused only with the migrations it was emptied for (a service may have applied more).
      const { rows } = await (
        await adminClient()
      ).query<{ name: string }>(`select name from ${reusable.name}.kysely_migration order by name`);
      if (
        rows
          .map((r) => r.name)
          .sort()
          .join('\n') === key
      )
        free.push(reusable);
    },
  };
}

/** A schema for processes started by a test (instances of the service), dropped at exit. */
export async function newTestSchemaUrl(): Promise<string> {
  return schemaUrl((await newSchema()).name);
}

/** Drops every schema this process made (mocha's root hook calls it once at the end). */
export async function dropTestSchemas(): Promise<void> {
  if (!admin) return;
  const client = admin;
  admin = null;
  // Mocha's parallel mode runs this after each file: nothing dropped may be handed out again.
  free.splice(0);
  named.clear();
  for (const name of made.splice(0)) await client.query(`drop schema if exists ${name} cascade`).catch(() => undefined);
  await client.end().catch(() => undefined);
}

/** What a rolling-upgrade test on PostgreSQL works with (`duringSchemaChange`). */
export interface SchemaChange {
  /** A handle of its own on the service's database, one connection: what its first call prepares, a second call reuses. */
  own: OpenDatabase;
  /** An administrator's connection, standing for another instance whose migration changes the tables. */
  admin: pg.Client;
  /** The schema the service runs in. */
  schema: string;
}

/**
 * Runs `work` as a rolling upgrade on PostgreSQL sees it (`SchemaChange`); afterwards, whatever
 * `work` found, the statements of `undo(schema)` put the tables back and both connections close.
 */
export async function duringSchemaChange(
  db: HostDb,
  undo: (schema: string) => string[],
  work: (change: SchemaChange) => Promise<void>,
): Promise<void> {
  const url = postgresUrlOf(db)!;
  const schema = /search_path=(\w+)/.exec(decodeURIComponent(url))![1]!;
  const own = openDatabase(url, { poolSize: 1 });
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await work({ own, admin, schema });
  } finally {
    for (const statement of undo(schema)) await admin.query(statement);
    await admin.end();
    await own.close();
  }
}
