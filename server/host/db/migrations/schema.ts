import type { ColumnDefinitionBuilder, CreateTableBuilder, Expression, Kysely } from 'kysely';

/**
 * The shapes the migrations repeat, written once for host and plugin migrations alike. Each
 * builds exactly the SQL it replaces: a migration written with them creates the same schema.
 */

/** A new table keyed by `id`, an integer the database assigns. */
export function keyedTable(db: Kysely<unknown>, name: string): CreateTableBuilder<string, 'id'> {
  return db.schema.createTable(name).addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/**
 * A table pairing rows of two tables: each of its two columns holds the id of a row of its table,
 * which it cannot outlive; the pair is the primary key (`<name>_pk`).
 */
export function pairTable(
  db: Kysely<unknown>,
  name: string,
  first: [column: string, table: string],
  second: [column: string, table: string],
) {
  return db.schema
    .createTable(name)
    .addColumn(first[0], 'integer', ownedBy(first[1]))
    .addColumn(second[0], 'integer', ownedBy(second[1]))
    .addPrimaryKeyConstraint(`${name}_pk`, [first[0], second[0]]);
}

/** `created` and `last_updated` (ISO 8601 text), set by every insert, or defaulting to `now` when given. */
export function stamps(now?: Expression<unknown>) {
  const stamp = (c: ColumnDefinitionBuilder): ColumnDefinitionBuilder =>
    now === undefined ? c.notNull() : c.notNull().defaultTo(now);
  return <T extends string, C extends string>(table: CreateTableBuilder<T, C>) =>
    table.addColumn('created', 'text', stamp).addColumn('last_updated', 'text', stamp);
}

/** The object a row is about: `<prefix>object_type` ("app_label.model") and `<prefix>object_id`, both always given. */
export function objectRef(prefix = '') {
  return <T extends string, C extends string>(table: CreateTableBuilder<T, C>) =>
    table
      .addColumn(`${prefix}object_type`, 'text', (c) => c.notNull())
      .addColumn(`${prefix}object_id`, 'integer', (c) => c.notNull());
}

/** A column holding the id of a row of `table` that it cannot outlive: deleted with it. */
export function ownedBy(table: string): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return (c) => c.notNull().references(`${table}.id`).onDelete('cascade');
}

/** A column holding the id of a row of `table`, or null once that row is deleted. */
export function clearedWith(table: string): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return (c) => c.references(`${table}.id`).onDelete('set null');
}
