import { sql } from 'kysely';
import { type Ctx, foldedLike, type Row, type VisibleIds } from '../../host';
import { ccDb } from './db/database';
import type { ChangeControlTables } from './db/tables';

/** The plugin's tables the search reads. */
export type SearchTable =
  'cc_change_requests' | 'cc_policies' | 'cc_policy_rules' | 'cc_reviews' | 'cc_change_comments' | 'cc_merge_checks';
export type RowOf<T extends SearchTable> = Row<ChangeControlTables[T]> & { id: number };

/**
 * Rows of `table` with any of `fields` containing the pattern (case folded beyond ASCII), newest
 * first; with `visibleIn`, only rows whose `column` is among `ids` (the change requests the caller
 * may view).
 */
export async function matchingRows<T extends SearchTable>(
  ctx: Ctx,
  table: T,
  fields: readonly string[],
  like: string,
  offset: number,
  count: number,
  visibleIn?: { column: string; ids: VisibleIds },
): Promise<RowOf<T>[]> {
  const matches = sql.join(
    fields.map((f) => foldedLike(ctx.db, sql.ref(f), like)),
    sql` or `,
  );
  const visible = visibleIn ? sql` and ${sql.ref(visibleIn.column)} in ${visibleIn.ids}` : sql``;
  const { rows } = await sql<
    RowOf<T>
  >`select * from ${sql.table(table)} where (${matches})${visible} order by id desc limit ${count} offset ${offset}`.execute(
    ccDb(ctx),
  );
  return rows;
}
