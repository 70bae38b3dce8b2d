import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { databaseKind, type HostDb } from './database';

/**
 * Backups of the service's data, the same file for both databases: JSON lines, a header (the
 * format and the migrations applied) then one line per table and one per row. A backup is read
 * in one transaction (a consistent snapshot, while the service runs); a restore fills a database
 * migrated to the same migrations, emptied first, in one transaction, and moves PostgreSQL's
 * identity sequences past the restored ids. A backup of SQLite restores into PostgreSQL and the
 * other way round: the way from a single-user service to a team server.
 */
const FORMAT = 'change-control-backup/1';
const MIGRATION_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

type Row = Record<string, unknown>;

async function tablesOf(db: HostDb): Promise<string[]> {
  if (databaseKind(db) === 'postgres') {
    const { rows } = await sql<{
      name: string;
    }>`select tablename as name from pg_tables where schemaname = current_schema() order by tablename`.execute(db);
    return rows.map((r) => r.name).filter((t) => !MIGRATION_TABLES.has(t));
  }
  const { rows } = await sql<{
    name: string;
  }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(db);
  return rows.map((r) => r.name).filter((t) => !MIGRATION_TABLES.has(t));
}

/** Foreign keys: table → the tables it references. */
async function referencesOf(db: HostDb, tables: string[]): Promise<Map<string, Set<string>>> {
  const out = new Map(tables.map((t) => [t, new Set<string>()]));
  if (databaseKind(db) === 'postgres') {
    const { rows } = await sql<{ child: string; parent: string }>`
      select c.relname as child, p.relname as parent from pg_constraint k
      join pg_class c on c.oid = k.conrelid join pg_class p on p.oid = k.confrelid
      join pg_namespace n on n.oid = c.relnamespace
      where k.contype = 'f' and n.nspname = current_schema()`.execute(db);
    for (const r of rows) if (r.child !== r.parent) out.get(r.child)?.add(r.parent);
    return out;
  }
  for (const table of tables) {
    const { rows } = await sql<{ table: string }>`select "table" from pragma_foreign_key_list(${table})`.execute(db);
    for (const r of rows) if (r.table !== table) out.get(table)?.add(r.table);
  }
  return out;
}

/** Tables with the ones they reference first. */
function inDependencyOrder(tables: string[], references: Map<string, Set<string>>): string[] {
  const done = new Set<string>();
  const out: string[] = [];
  const visit = (t: string, path: Set<string>): void => {
    if (done.has(t) || path.has(t)) return;
    path.add(t);
    for (const parent of references.get(t) ?? []) if (tables.includes(parent)) visit(parent, path);
    done.add(t);
    out.push(t);
  };
  for (const t of tables) visit(t, new Set());
  return out;
}

async function appliedMigrations(db: HostDb): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  return rows.map((r) => r.name);
}

/** Writes every table of the database to `file`; returns the number of rows written. */
export async function backupDatabase(db: HostDb, file: string): Promise<number> {
  return backupOnce(db, file);
}

async function backupOnce(db: HostDb, file: string): Promise<number> {
  const out = createWriteStream(file);
  const write = async (value: unknown): Promise<void> => {
    if (!out.write(`${JSON.stringify(value)}\n`)) await once(out, 'drain');
  };
  let count = 0;
  let tx = db.transaction();
  if (databaseKind(db) === 'postgres') tx = tx.setIsolationLevel('repeatable read');
  try {
    await tx.execute(async (trx) => {
      await write({ format: FORMAT, database: databaseKind(db), migrations: await appliedMigrations(trx) });
      for (const table of await tablesOf(trx)) {
        await write({ table });
        const { rows } = await sql<Row>`select * from ${sql.table(table)}`.execute(trx);
        for (const row of rows) await write(row);
        count += rows.length;
      }
    });
  } catch (err) {
    out.destroy();
    await once(out, 'close');
    throw err;
  }
  out.end();
  await once(out, 'finish');
  return count;
}

export class BackupError extends Error {}

/** Replaces the data of the database (migrated to the backup's migrations) with the backup in `file`; returns the rows restored. */
export async function restoreDatabase(db: HostDb, file: string): Promise<number> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  const byTable = new Map<string, Row[]>();
  type Header = { format?: string; migrations?: string[] };
  let header: Header | null = null as Header | null;
  let current: Row[] | null = null;
  for await (const line of lines) {
    if (line === '') continue;
    const value = JSON.parse(line) as Row;
    if (!header) {
      header = value as Header;
      if (header.format !== FORMAT) throw new BackupError(`${file} is not a Change Control backup`);
      continue;
    }
    if (Object.keys(value).length === 1 && typeof value.table === 'string') {
      current = [];
      byTable.set(value.table, current);
    } else if (current) current.push(value);
  }
  if (!header) throw new BackupError(`${file} is empty`);
  const applied = await appliedMigrations(db);
  const wanted = header.migrations ?? [];
  if (applied.join('\n') !== [...wanted].sort().join('\n')) {
    throw new BackupError(
      `the backup was made with other migrations than this database has (backup: ${wanted.length}, database: ${applied.length}); restore with the same version of the service`,
    );
  }
  const tables = await tablesOf(db);
  const unknown = [...byTable.keys()].filter((t) => !tables.includes(t));
  if (unknown.length > 0) throw new BackupError(`the backup has tables this database does not: ${unknown.join(', ')}`);
  const order = inDependencyOrder(tables, await referencesOf(db, tables));
  let count = 0;
  await db.transaction().execute(async (trx) => {
    count = 0;
    for (const table of [...order].reverse()) await sql`delete from ${sql.table(table)}`.execute(trx);
    for (const table of order) {
      const rows = byTable.get(table) ?? [];
      // Rows in id order: a row naming another of its table (a reply's parent) comes after it.
      rows.sort((x, y) => (typeof x.id === 'number' && typeof y.id === 'number' ? x.id - y.id : 0));
      for (let i = 0; i < rows.length; i += 200) {
        const batch = rows.slice(i, i + 200);
        const columns = Object.keys(batch[0]!);
        const values = sql.join(batch.map((r) => sql`(${sql.join(columns.map((c) => r[c] ?? null))})`));
        const overriding = databaseKind(db) === 'postgres' ? sql` overriding system value` : sql``;
        await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))})${overriding} values ${values}`.execute(
          trx,
        );
      }
      count += rows.length;
    }
    if (databaseKind(db) === 'postgres') {
      // Identity columns continue after the restored ids.
      const { rows } = await sql<{ table: string; column: string }>`
      select table_name as table, column_name as column from information_schema.columns
      where table_schema = current_schema() and is_identity = 'YES'`.execute(trx);
      for (const r of rows) {
        await sql`select setval(pg_get_serial_sequence(${r.table}, ${r.column}), coalesce((select max(${sql.ref(r.column)}) from ${sql.table(r.table)}), 0) + 1, false)`.execute(
          trx,
        );
      }
    }
  });
  return count;
}

/** Every table's rows, for comparing two databases (tests): table → rows sorted by their JSON. */
export async function tableContents(db: HostDb): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of await tablesOf(db)) {
    const { rows } = await sql<Row>`select * from ${sql.table(table)}`.execute(db);
    out[table] = rows
      .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)))))
      .sort();
  }
  return out;
}
