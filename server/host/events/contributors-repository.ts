import { sql } from 'kysely';
import type { Ctx } from '../core/context';
import { databaseKind } from '../db/database';
import { valuesTable } from '../db/portable';
import './object-changes-repository';

/** What `branchContributors` reads, for a cached answer to name: the changelog. */
export const CONTRIBUTORS_READS: readonly string[] = ['object_changes'];

/**
 * Who changed objects in a branch, as the branch's own changelog says: every user with a
 * recorded create, update or delete of a source-of-truth object made with the branch's
 * `X-NetBox-Branch`. Read with one index probe per contributor (the changelog is indexed by
 * branch and user), so a branch of 100,000 changes by three people costs four probes.
 */
export async function branchContributors(ctx: Ctx, branchId: number | null): Promise<Set<number>> {
  const out = new Set<number>();
  if (branchId === null) return out;
  const types = valuesTable(
    ctx.db,
    ctx.host.objectTypes.sourceOfTruth().map((t) => t.name),
    'text',
  );
  // SQLite's planner is told the index; PostgreSQL's finds it.
  const hint = databaseKind(ctx.db) === 'sqlite' ? sql.raw(' INDEXED BY object_changes_branch_user') : sql.raw('');
  let after = -1;
  for (;;) {
    const row = await sql<{ user_id: number | null }>`
      SELECT user_id FROM object_changes${hint}
      WHERE branch_id = ${branchId} AND user_id > ${after}
        AND changed_object_type IN (SELECT j.value FROM ${types} AS j)
      ORDER BY user_id LIMIT 1`.execute(ctx.db);
    const next = row.rows[0]?.user_id;
    if (next === null || next === undefined) return out;
    out.add(next);
    after = next;
  }
}
