import { sql } from 'kysely';
import { type Ctx, foldedLike, type Row } from '../../host';
import { ccDb } from './db/database';
import type { ChangeControlTables } from './db/tables';

/** The plugin's tables the search reads. */
export type SearchTable =
  'cc_change_requests' | 'cc_policies' | 'cc_policy_rules' | 'cc_reviews' | 'cc_change_comments' | 'cc_merge_checks';
export type RowOf<T extends SearchTable> = Row<ChangeControlTables[T]> & { id: number };

/** Rows of `table` with any of `fields` containing the pattern (case folded beyond ASCII), newest first. */
export async function matchingRows<T extends SearchTable>(
  ctx: Ctx,
  table: T,
  fields: readonly string[],
  like: string,
  offset: number,
  count: number,
): Promise<RowOf<T>[]> {
  const matches = sql.join(
    fields.map((f) => foldedLike(ctx.db, sql.ref(f), like)),
    sql` or `,
  );
  const { rows } = await sql<
    RowOf<T>
  >`select * from ${sql.table(table)} where (${matches}) order by id desc limit ${count} offset ${offset}`.execute(
    ccDb(ctx),
  );
  return rows;
}
