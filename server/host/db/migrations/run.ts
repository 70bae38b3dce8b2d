import { CompiledQuery, Migrator, type Kysely, type Migration } from 'kysely';
import { databaseKind } from '../kind';

/** Held (per session) while an instance runs the migrations. */
const MIGRATION_LOCK = [0x4343, 2] as const;

/**
 * Runs every migration (host first, then each plugin's, in the order given), each once: on
 * PostgreSQL, instances starting at the same moment wait for each other on a session advisory
 * lock, and the later ones find the migrations applied.
 */
export async function migrate(db: Kysely<any>, migrations: Record<string, Migration>): Promise<void> {
  if (databaseKind(db) === 'sqlite') return runMigrations(db, migrations);
  await db.connection().execute(async (conn) => {
    await conn.executeQuery(CompiledQuery.raw('select pg_advisory_lock($1, $2)', [...MIGRATION_LOCK]));
    try {
      // The migration tables live in the schema the connection works in (the search path's first).
      const { rows } = await conn.executeQuery<{ schema: string }>(
        CompiledQuery.raw('select current_schema() as schema'),
      );
      await runMigrations(conn, migrations, rows[0]!.schema);
    } finally {
      await conn.executeQuery(CompiledQuery.raw('select pg_advisory_unlock($1, $2)', [...MIGRATION_LOCK]));
    }
  });
}

async function runMigrations(db: Kysely<any>, migrations: Record<string, Migration>, schema?: string): Promise<void> {
  const migrator = new Migrator({
    db,
    ...(schema ? { migrationTableSchema: schema } : {}),
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
