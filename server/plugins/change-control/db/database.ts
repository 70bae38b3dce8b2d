import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import {
  type Ctx,
  jsonArrayHasAnyIn,
  jsonArrayHasColumnIn,
  withTables,
  type Queryable,
  type HostTables,
} from '../../../host';
import type { ChangeControlTables } from './tables';

export type CcDb = Queryable<HostTables & ChangeControlTables>;

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
