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

/** The JSON path of `keys` in SQLite's syntax (`$."a"."b"`); null when a key cannot be written in it. */
function sqlitePath(keys: readonly string[]): string | null {
  if (keys.some((k) => /["\\]/.test(k))) return null;
  return `$${keys.map((k) => `."${k}"`).join('')}`;
}

/** Lists nested in lists that `jsonNodeIn` looks into on PostgreSQL (SQLite looks at any depth). */
const LIST_DEPTH = 8;

/**
 * Whether the value at `keys` inside the JSON object in `column`, or when it is a list any of
 * its elements (lists in lists too), equals one of the values sought. A related object (an
 * object with an `id`) stands for its id. A value is compared by its JSON text (`5`, `"a"`,
 * `true`, `null`, `{"k":1}`, as `JSON.stringify` writes them): `json` holds JSON texts sought
 * whatever the value's type; `plain` texts sought only of values that are not strings (so a
 * filter's `5` finds the number 5 and the string "5" is sought as `"5"` in `json`). A key
 * holding `"` or `\` is never found.
 */
export function jsonNodeIn(
  db: Kysely<any>,
  column: Expression<unknown>,
  keys: readonly string[],
  sought: { json: readonly string[]; plain: readonly string[] },
): RawBuilder<SqlBool> {
  if (sought.json.length === 0 && sought.plain.length === 0) return sql<SqlBool>`1 = 0`;
  if (databaseKind(db) === 'postgres') {
    const flatten = `lax $${'[*]'.repeat(LIST_DEPTH)}`;
    return sql<SqlBool>`exists (select 1 from jsonb_path_query((${column})::jsonb #> ${[...keys]}::text[], ${flatten}::jsonpath) as t(v)
      cross join lateral (select case when jsonb_typeof(t.v) = 'object' and t.v ? 'id' then (t.v -> 'id')::text else t.v::text end as j) as n
      where jsonb_typeof(t.v) <> 'array' and (n.j = any(${[...sought.json]}::text[])
        or (n.j = any(${[...sought.plain]}::text[]) and left(n.j, 1) <> '"')))`;
  }
  const root = sqlitePath(keys);
  if (root === null) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`exists (select 1 from (
      select case when t.type = 'object' and json_type(t.value, '$.id') is not null then t.value -> '$.id'
        else ${column} -> t.fullkey end as j
      from json_tree(${column}, ${root}) as t
      where t.type <> 'array' and instr(substr(t.fullkey, ${root.length + 1}), '.') = 0) as n
    where n.j in (select value from json_each(${JSON.stringify(sought.json)}))
      or (n.j in (select value from json_each(${JSON.stringify(sought.plain)})) and substr(n.j, 1, 1) <> '"'))`;
}

/**
 * The value at `key` of the JSON object in `column` as text, as `String()` gives it: a string
 * itself, absent or null as '', anything else as its JSON text.
 */
export function jsonScalarText(db: Kysely<any>, column: Expression<unknown>, key: string): RawBuilder<string> {
  if (databaseKind(db) === 'postgres')
    return sql<string>`(case jsonb_typeof((${column})::jsonb -> ${key}) when 'string' then (${column})::jsonb ->> ${key}
      when 'null' then '' when null then '' else coalesce(((${column})::jsonb -> ${key})::text, '') end)`;
  const path = sqlitePath([key]);
  if (path === null) return sql<string>`''`;
  return sql<string>`(case json_type(${column}, ${path}) when 'text' then ${column} ->> ${path}
    when 'null' then '' else coalesce(${column} -> ${path}, '') end)`;
}

/**
 * An object's display text from its JSON attributes in `column`: its `name` when that is a
 * non-empty string (any other name that is not null: its JSON text), else `fallback` (SQL text).
 */
export function jsonDisplay(
  db: Kysely<any>,
  column: Expression<unknown>,
  fallback: Expression<unknown>,
): RawBuilder<string> {
  if (databaseKind(db) === 'postgres')
    return sql<string>`coalesce(case jsonb_typeof((${column})::jsonb -> 'name') when 'string' then nullif((${column})::jsonb ->> 'name', '')
      when 'null' then null else ((${column})::jsonb -> 'name')::text end, ${fallback})`;
  return sql<string>`coalesce(case json_type(${column}, '$."name"') when 'text' then nullif(${column} ->> '$."name"', '')
    when 'null' then null else ${column} -> '$."name"' end, ${fallback})`;
}

/**
 * What orders rows by the value at `key` of the JSON object in `column`: values of one type
 * together (absent or null, then numbers, strings, booleans, lists and objects), each type in its
 * own order (numbers by value, strings by their characters, false before true).
 */
export function jsonOrderTerms(db: Kysely<any>, column: Expression<unknown>, key: string): Array<RawBuilder<unknown>> {
  if (databaseKind(db) === 'postgres') {
    const v = sql`((${column})::jsonb -> ${key})`;
    return [
      sql`(case jsonb_typeof(${v}) when 'number' then 1 when 'string' then 2 when 'boolean' then 3
        when 'array' then 4 when 'object' then 4 else 0 end)`,
      sql`(case when jsonb_typeof(${v}) = 'number' then (${v})::numeric end)`,
      sql`(case when jsonb_typeof(${v}) = 'string' then ${v} #>> '{}' end)`,
      sql`(case when jsonb_typeof(${v}) in ('boolean', 'array', 'object') then ${v} end)`,
    ];
  }
  const path = sqlitePath([key]) ?? '$."\u0000"';
  return [
    sql`(case json_type(${column}, ${path}) when 'integer' then 1 when 'real' then 1 when 'text' then 2
      when 'true' then 3 when 'false' then 3 when 'array' then 4 when 'object' then 4 else 0 end)`,
    sql`(${column} ->> ${path})`,
  ];
}
