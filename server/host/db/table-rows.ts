import type { Generated, Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { Queryable } from './database';

/** What `tableRows` needs of a table: an integer key named `id`; other columns are named by the caller. */
interface KeyedTable {
  id: Generated<number>;
  [column: string]: unknown;
}

/** The tables of a database keyed by an integer `id`. */
export type KeyedTableName<DB> = {
  [T in keyof DB & string]: Selectable<DB[T]> extends { id: number } ? T : never;
}[keyof DB & string];

/** The columns of a table that hold text (the ones a name or a slug lives in). */
export type TextColumn<Table> = {
  [C in keyof Selectable<Table> & string]: Selectable<Table>[C] extends string ? C : never;
}[keyof Selectable<Table> & string];

/** The columns of a new row of a table (those the database fills in may be left out). */
export type NewRow<Table> = Insertable<Table>;

/** Columns of a table's row to change. */
export type RowChanges<Table> = Updateable<Table>;

/** The reads and writes of one row by its id, for a table keyed by an integer `id`; `C` is the caller's context. */
export interface TableRows<C, Table> {
  byId(ctx: C, id: number): Promise<Selectable<Table> | undefined>;
  exists(ctx: C, id: number): Promise<boolean>;
  /** Whether a row other than `exceptId` holds `value` in `column` (a unique text column). */
  taken(ctx: C, column: TextColumn<Table>, value: string, exceptId?: number | null): Promise<boolean>;
  /** Adds a row and answers its id. */
  insert(ctx: C, values: Insertable<Table>): Promise<number>;
  /** Adds a row and answers it as stored (with the values the database filled in). */
  insertRow(ctx: C, values: Insertable<Table>): Promise<Selectable<Table>>;
  update(ctx: C, id: number, values: Updateable<Table>): Promise<void>;
  remove(ctx: C, id: number): Promise<void>;
}

/**
 * The row-by-id queries of `table`, written once for every table of that shape (users, groups,
 * permissions, webhooks, event rules, tags, and the plugins' own); `dbOf` gives the context's
 * database handle (a transaction during writes).
 *
 * The signatures are typed by the table (`Insertable<DB[T]>`, `Selectable<DB[T]>`), so a caller
 * cannot write a column the table lacks nor name a table without an integer `id`. Inside, Kysely
 * cannot resolve column types through a table name that is still a type parameter, so the handle
 * is viewed, in this one place, as a database of keyed tables: the queries name only `id` and the
 * caller's `column`, both of which the signatures tie to the real table; the view changes no query.
 */
export function tableRows<C, DB, T extends KeyedTableName<DB>>(
  dbOf: (ctx: C) => Queryable<DB>,
  table: T,
): TableRows<C, DB[T]> {
  const name: string = table;
  const keyed = (ctx: C) => dbOf(ctx) as unknown as Kysely<Record<string, KeyedTable>>;
  const only = <R>(rows: R[]): R => {
    if (rows.length !== 1) throw new Error(`tableRows: an insert into ${name} answered ${rows.length} rows`);
    return rows[0];
  };
  return {
    byId: (ctx, id) =>
      keyed(ctx).selectFrom(name).selectAll().where('id', '=', id).$castTo<Selectable<DB[T]>>().executeTakeFirst(),
    exists: async (ctx, id) =>
      (await keyed(ctx).selectFrom(name).select('id').where('id', '=', id).executeTakeFirst()) !== undefined,
    async taken(ctx, column, value, exceptId = null) {
      const textColumn: string = column;
      let q = keyed(ctx).selectFrom(name).select('id').where(textColumn, '=', value);
      if (exceptId !== null) q = q.where('id', '!=', exceptId);
      return (await q.executeTakeFirst()) !== undefined;
    },
    async insert(ctx, values) {
      const rows = await keyed(ctx)
        .insertInto(name)
        .values(values as Insertable<KeyedTable>)
        .returning('id')
        .execute();
      return only(rows).id;
    },
    insertRow: async (ctx, values) =>
      only(
        await keyed(ctx)
          .insertInto(name)
          .values(values as Insertable<KeyedTable>)
          .returningAll()
          .$castTo<Selectable<DB[T]>>()
          .execute(),
      ),
    async update(ctx, id, values) {
      await keyed(ctx)
        .updateTable(name)
        .set(values as Updateable<KeyedTable>)
        .where('id', '=', id)
        .execute();
    },
    async remove(ctx, id) {
      await keyed(ctx).deleteFrom(name).where('id', '=', id).execute();
    },
  };
}
