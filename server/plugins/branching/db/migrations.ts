import type { Kysely, Migration } from 'kysely';

/** Each branch's digest state and change count (`digest.ts`); built by the first read of each branch. */
async function createDigests(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('branching_digests')
    .addColumn('branch_id', 'integer', (c) => c.primaryKey().references('branches.id').onDelete('cascade'))
    .addColumn('changes', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .execute();
}

/** The branching plugin's migrations (names start "10-"; never rename one). */
export const branchingMigrations: Record<string, Migration> = {
  '10-branching-0001-digests': { up: createDigests },
};
