import { sql } from 'kysely';
import type { Ctx } from '../core/context';

/**
 * The object types a branch touches now, sorted: a skip scan of the index on (branch, object
 * type, object id), one probe per type, whatever the branch's size.
 */
export async function touchedObjectTypes(ctx: Ctx, branchId: number): Promise<string[]> {
  const { rows } = await sql<{ object_type: string }>`
    WITH RECURSIVE t(object_type) AS (
      SELECT (SELECT object_type FROM branch_changes WHERE branch_id = ${branchId} ORDER BY object_type LIMIT 1)
      UNION ALL
      SELECT (SELECT b.object_type FROM branch_changes b WHERE b.branch_id = ${branchId} AND b.object_type > t.object_type ORDER BY b.object_type LIMIT 1)
      FROM t WHERE t.object_type IS NOT NULL
    )
    SELECT object_type FROM t WHERE object_type IS NOT NULL`.execute(ctx.db);
  return rows.map((r) => r.object_type).sort();
}

/** Whether the branch changes an object of this type now (one index probe). */
export async function branchTouchesType(ctx: Ctx, branchId: number, objectType: string): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('branch_changes')
    .select('id')
    .where('branch_id', '=', branchId)
    .where('object_type', '=', objectType)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
