import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import {
  type Ctx,
  jsonArrayHasAnyIn,
  jsonArrayHasColumnIn,
  partitionTable,
  withTables,
  type Queryable,
  type HostTables,
} from '../../../host';
import type { ChangeControlTables } from './tables';

export type CcDb = Queryable<HostTables & ChangeControlTables>;

/**
 * A request's rows have versions of their own (`host/db/partitions.ts`): an answer read from one
 * request's checks and reviews (its gate) is kept across writes of other requests' rows. A
 * write says its request by a condition on the column (an update by id names the request too:
 * `updateCheckResult`); the request's own row is partitioned by id, which its delete moves
 * (the cascade to its checks, reviews and comments is not seen by itself). A request's comments
 * are partitioned too: its thread counts are kept across other requests' comments.
 */
partitionTable('cc_change_requests', 'id');
partitionTable('cc_merge_checks', 'change_request_id');
partitionTable('cc_reviews', 'change_request_id');
partitionTable('cc_change_comments', 'change_request_id');

/** The context's database handle (a transaction during writes), seeing the plugin's tables too. */
export function ccDb(ctx: Ctx): CcDb {
  return ccTables(ctx.db);
}

/** A database handle, seeing the plugin's tables too. */
export function ccTables(db: Queryable<any>): CcDb {
  return withTables<ChangeControlTables>(db);
}

export const toBool = (v: number): boolean => v === 1;
export const fromBool = (v: boolean): number => (v ? 1 : 0);

export function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null || text === '') return fallback;
  return JSON.parse(text) as T;
}

export function nowIso(ctx: Ctx): string {
  return ctx.host.clock.now().toISOString();
}

/** SQL: the JSON array in `column` (a qualified column name) holds any of `values`. */
export function jsonArrayHasAny(
  db: Kysely<any>,
  column: string,
  values: readonly (string | number)[],
): RawBuilder<SqlBool> {
  return jsonArrayHasAnyIn(db, sql.ref(column), values);
}

/** SQL: the JSON array in `column` holds the value of `valueColumn` (both qualified column names). */
export function jsonArrayHasColumn(db: Kysely<any>, column: string, valueColumn: string): RawBuilder<SqlBool> {
  return jsonArrayHasColumnIn(db, sql.ref(column), sql.ref(valueColumn));
}
