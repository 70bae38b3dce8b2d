import { sql, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { databaseKind } from './database';

/**
 * SQL that differs between SQLite and PostgreSQL, written once here so the rest of the service
 * stays portable. Everything else is plain Kysely: integer booleans (0/1), text timestamps
 * (ISO 8601, UTC, compared as text), JSON kept as text.
 */

/**
 * A list of values as a table with one column `value`, for `where(col, 'in', ...)` with lists of
 * any length (a bound list of thousands would exceed SQLite's parameter limit): one parameter
 * either way. Use as `eb.selectFrom(valuesTable(db, ids).as('j')).select('j.value')`.
 */
export function valuesTable<V extends number | string>(
  db: Kysely<any>,
  values: readonly V[],
  type: 'integer' | 'text' = 'integer',
): RawBuilder<{ value: V }> {
  if (databaseKind(db) === 'postgres') {
    return type === 'integer'
      ? sql<{ value: V }>`(select unnest(${[...values]}::bigint[]) as value)`
      : sql<{ value: V }>`(select unnest(${[...values]}::text[]) as value)`;
  }
  return sql<{ value: V }>`json_each(${JSON.stringify(values)})`;
}

/**
 * `column` (text) matches a LIKE `pattern` with case folded beyond ASCII; the pattern must be
 * folded already (`toLowerCase()`), `\` escapes `%` and `_`.
 */
export function foldedLike(db: Kysely<any>, column: Expression<unknown>, pattern: string): RawBuilder<SqlBool> {
  if (databaseKind(db) === 'postgres')
    return sql<SqlBool>`lower(${column} collate "und-x-icu") like ${pattern} escape '\\'`;
  return sql<SqlBool>`unicode_lower(${column}) like ${pattern} escape '\\'`;
}

/** The JSON array of text in `column` holds at least one of `values` (compared as text). */
export function jsonArrayHasAny(
  db: Kysely<any>,
  column: Expression<unknown>,
  values: readonly (string | number)[],
): RawBuilder<SqlBool> {
  const texts = values.map(String);
  if (databaseKind(db) === 'postgres')
    return sql<SqlBool>`exists (select 1 from jsonb_array_elements_text(${column}::jsonb) as j(value) where j.value = any(${texts}::text[]))`;
  return sql<SqlBool>`exists (select 1 from json_each(${column}) where cast(value as text) in (select value from json_each(${JSON.stringify(texts)})))`;
}

/** The current time as the service stores it (ISO 8601, UTC, milliseconds), for column defaults. */
export function nowText(db: Kysely<any>): RawBuilder<string> {
  if (databaseKind(db) === 'postgres')
    return sql<string>`(to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
  return sql<string>`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;
}

/** The JSON array of text in `column` holds the value of `valueColumn` (compared as text). */
export function jsonArrayHasColumn(
  db: Kysely<any>,
  column: Expression<unknown>,
  valueColumn: Expression<unknown>,
): RawBuilder<SqlBool> {
  if (databaseKind(db) === 'postgres')
    return sql<SqlBool>`exists (select 1 from jsonb_array_elements_text(${column}::jsonb) as j(value) where j.value = ${valueColumn}::text)`;
  return sql<SqlBool>`exists (select 1 from json_each(${column}) where value = ${valueColumn})`;
}

/**
 * The JSON text of the value at `keys` inside the JSON object in `column` (null when absent), in
 * the form `JSON.stringify` gives a scalar (`"text"`, `5`, `true`, `null`): compare it with the
 * JSON text of a scalar. A key holding `"` or `\` is not addressable (null).
 */
export function jsonTextAt(
  db: Kysely<any>,
  column: Expression<unknown>,
  keys: readonly string[],
): RawBuilder<string | null> {
  if (databaseKind(db) === 'postgres') return sql<string | null>`((${column})::jsonb #> ${[...keys]}::text[])::text`;
  if (keys.some((k) => /["\\]/.test(k))) return sql<string | null>`null`;
  const path = `$${keys.map((k) => `."${k}"`).join('')}`;
  return sql<string | null>`(${column} -> ${path})`;
}
