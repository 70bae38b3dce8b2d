import type { ColumnDefinitionBuilder, CreateTableBuilder, Expression, Kysely } from 'kysely';

/**
 * The shapes the migrations repeat, written once for host and plugin migrations alike. Each
 * builds exactly the SQL it replaces: a migration written with them creates the same schema.
 */

/** A new table keyed by `id`, an integer the database assigns. */
export function keyedTable(db: Kysely<unknown>, name: string): CreateTableBuilder<string, 'id'> {
  return db.schema.createTable(name).addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** `created` and `last_updated` (ISO 8601 text), set by every insert, or defaulting to `now` when given. */
export function stamps(now?: Expression<unknown>) {
  const stamp = (c: ColumnDefinitionBuilder): ColumnDefinitionBuilder => (now === undefined ? c.notNull() : c.notNull().defaultTo(now));
  return <T extends string, C extends string>(table: CreateTableBuilder<T, C>) => table.addColumn('created', 'text', stamp).addColumn('last_updated', 'text', stamp);
}

/** A column holding the id of a row of `table` that it cannot outlive: deleted with it. */
export function ownedBy(table: string): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return (c) => c.notNull().references(`${table}.id`).onDelete('cascade');
}

/** A column holding the id of a row of `table`, or null once that row is deleted. */
export function clearedWith(table: string): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return (c) => c.references(`${table}.id`).onDelete('set null');
}
