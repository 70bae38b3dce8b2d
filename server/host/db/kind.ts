import { type Kysely, PostgresAdapter } from 'kysely';

/** The two databases the service runs on: SQLite embedded (the default), PostgreSQL for a team server. */
export type DatabaseKind = 'sqlite' | 'postgres';

/** Whether a `--db` / `DATABASE_URL` value names a PostgreSQL database (`postgres://…` or `postgresql://…`). */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** Which database a handle (or a transaction, or a migration's handle) runs on. */
export function databaseKind(db: Kysely<any>): DatabaseKind {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
