import type { Ctx } from '../core/context';
import { defineList, type DeclaredList, type ListDeclaration } from '../db/list';

/**
 * How a resource whose rows are presented one by one is read: its repository's rows (the
 * list's query) and one row by id, the presentation of a row, and the list's filters, ordering
 * and search.
 */
export interface RowReadsSpec<DB, TB extends keyof DB, Row, Out> extends Pick<
  ListDeclaration<DB, TB, Row, Out>,
  'from' | 'columnFilters' | 'filters' | 'ordering' | 'defaultOrdering' | 'search'
> {
  byId(ctx: Ctx, id: number): Promise<Row | undefined>;
  present(ctx: Ctx, row: Row): Out;
}

/** A resource's retrieve (`get`): its row by id, presented (undefined when there is none). */
export function presentedById<Row, Out>(
  byId: (ctx: Ctx, id: number) => Promise<Row | undefined>,
  present: (ctx: Ctx, row: Row) => Out | Promise<Out>,
): (ctx: Ctx, id: number) => Promise<Out | undefined> {
  return async (ctx, id) => {
    const row = await byId(ctx, id);
    return row ? present(ctx, row) : undefined;
  };
}

/** A resource's retrieve (`get`) and list, written once for resources read row by row. */
export function rowReads<DB, TB extends keyof DB, Row, Out>(
  spec: RowReadsSpec<DB, TB, Row, Out>,
): { get(ctx: Ctx, id: number): Promise<Out | undefined>; list: DeclaredList<Out> } {
  const { byId, present, ...list } = spec;
  return {
    get: presentedById(byId, present),
    list: defineList({ ...list, present: async (ctx, rows) => rows.map((row) => present(ctx, row)) }),
  };
}
