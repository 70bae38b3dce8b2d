import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type SelectQueryBuilder,
  type SqlBool,
  type StringReference,
} from 'kysely';
import type { Ctx } from '../core/context';

/**
 * The one list of every resource. A resource declares its list (the base query, its filters
 * with their types and SQL, its ordering fields, its free-text fields, what the caller may see,
 * how rows are presented); `runList` applies filters, `q`, visibility, ordering and paging the
 * same way for every one of them. Everything a filter decides is SQL: no list scans in code,
 * except where a resource says the caller's visibility is judged in code (`admit`).
 */

/** How a filter parameter's values are read. Values repeated in the query (or comma-separated) are OR. */
export type FilterType = 'int' | 'string' | 'bool' | 'choice' | 'datetime';

export interface FilterDef {
  type: FilterType;
  choices?: readonly string[];
  description?: string;
  /** Accepts `me` for the caller's id (int filters on users). */
  allowMe?: boolean;
}
export type FilterValue = string | number | boolean;
export type ParsedFilters = Record<string, FilterValue[]>;

export interface Page {
  limit: number;
  offset: number;
}

export interface OrderBy {
  field: string;
  desc: boolean;
}

export interface ListOptions {
  filters: ParsedFilters;
  ordering: OrderBy[];
  /** Free-text terms (`q`): every term matches one of the list's text fields. */
  search?: string[];
  /** Null when permission constraints are filtered in code: return every match then. */
  page: Page | null;
}

/** A condition on the list's rows. */
export type Condition<DB, TB extends keyof DB> = (eb: ExpressionBuilder<DB, TB>) => Expression<SqlBool>;

export interface ListFilter<DB, TB extends keyof DB, Row = unknown> extends FilterDef {
  /** The column compared with `in` (booleans as 0 and 1), when `where` is not given. */
  column?: StringReference<DB, TB>;
  /** The condition for these values (their OR); may read the database first (ids of a related table). */
  where?: (values: FilterValue[], ctx: Ctx) => Condition<DB, TB> | Promise<Condition<DB, TB>>;
  /**
   * A test in code on each row, for a JSON list inside a row of a small administrative table
   * (permissions, event rules): the list then reads every row and pages in code.
   */
  test?: (row: Row, values: FilterValue[]) => boolean;
  /** Also `<name>__gte`, `__lte`, `__gt`, `__lt` on `column` (int and datetime filters). */
  range?: boolean;
  /** A bool filter on whether this column is empty: true picks the rows where it is null, false the others. */
  isNull?: StringReference<DB, TB>;
  /** A bool filter on whether this column is filled: true picks the rows where it is not null, false the others. */
  isNotNull?: StringReference<DB, TB>;
}

/** A filter on the column of its own name: its type, or its definition (choices, range, description). */
export type ColumnFilter = FilterType | (FilterDef & Pick<ListFilter<never, never>, 'range'>);

export interface ListDeclaration<DB, TB extends keyof DB, Row, Out> {
  from(ctx: Ctx): SelectQueryBuilder<DB, TB, Row>;
  /** The filters on the column of the same name (`{ name: 'string' }`); they come first, after `id` (an int filter unless declared here). */
  columnFilters?: { [C in StringReference<DB, TB>]?: ColumnFilter };
  /** The other filters: on another column, by a condition, or by a test in code. */
  filters?: Record<string, ListFilter<DB, TB, Row>>;
  /** Ordering fields: a column, or an expression (priority by rank). */
  ordering: Record<string, StringReference<DB, TB> | Expression<unknown>>;
  defaultOrdering?: OrderBy[];
  /** The text columns `q` searches (a case-insensitive substring match on any of them). */
  search?: StringReference<DB, TB>[];
  /** The rows the caller may see, in SQL (null: every row). */
  visible?(ctx: Ctx): Promise<Condition<DB, TB> | null>;
  /**
   * The rows the caller may see when that is judged in code (null: SQL decided). A list then
   * reads every match in order and pages in code.
   */
  admit?(ctx: Ctx): Promise<((rows: Row[]) => Promise<Row[]>) | null>;
  /** Reuse the count of a query between its pages while the database is unchanged: the list's name in the memo keys. */
  memoCount?: string;
  /**
   * The tables a page (or count) with these options is computed from, every function it calls
   * included (undefined: any table): a write of another table keeps a memoized count.
   */
  reads?(options: ListOptions): readonly string[] | undefined;
  present(ctx: Ctx, rows: Row[]): Promise<Out[]>;
}

/** A declared list, as the HTTP layer sees it: the filters it parses and the runner. */
export interface DeclaredList<Out> {
  filters: Record<string, FilterDef>;
  ordering: readonly string[];
  defaultOrdering?: OrderBy[];
  searchable: boolean;
  run(ctx: Ctx, options: ListOptions): Promise<{ count: number; items: Out[] }>;
}

export const RANGE_SUFFIXES = { gte: '>=', lte: '<=', gt: '>', lt: '<' } as const;

/** `%text%` for LIKE, lower-cased, with `\` escaping % and _ so they match literally. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Case-insensitive substring match, portable (SQLite and PostgreSQL both have lower() and
 * LIKE … ESCAPE). SQLite's lower() folds ASCII letters only.
 */
export function textContains(column: string, text: string): Expression<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${likePattern(text)} escape '\\'`;
}

function conditionOf<DB, TB extends keyof DB, Row>(
  name: string,
  filter: ListFilter<DB, TB, Row>,
  op: string,
  values: FilterValue[],
  ctx: Ctx,
): Condition<DB, TB> | Promise<Condition<DB, TB>> {
  if (op === 'in' && filter.where) return filter.where(values, ctx);
  const empty = filter.isNull ?? filter.isNotNull;
  if (op === 'in' && empty !== undefined) {
    const nullWhen = filter.isNull !== undefined;
    return (eb) => eb.or(values.map((v) => eb(empty, v === nullWhen ? 'is' : 'is not', null)));
  }
  const column = filter.column;
  if (column === undefined) throw new Error(`list filter ${name} has neither column nor where`);
  const ref = column as string;
  const stored = values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
  if (op === 'in') return (eb) => eb(sql.ref(ref), 'in', stored);
  // A range filter takes one bound; several values: all of them hold.
  return (eb) => eb.and(stored.map((v) => eb(sql.ref(ref), op as '>=', v)));
}

/** `created` as a range filter (`created__gte` …). */
export const createdRange: ColumnFilter = {
  type: 'datetime',
  description: 'Creation time (with __gte, __lte, __gt, __lt: a range).',
  range: true,
};

/** `last_updated` as a range filter (`last_updated__gte` …). */
export const lastUpdatedRange: ColumnFilter = {
  type: 'datetime',
  description: 'Last change (with __gte, __lte, __gt, __lt: a range).',
  range: true,
};

/** The column filters as filters, in their order (`id` first, an int unless declared otherwise): each on the column of its name. */
function columnFilters<DB, TB extends keyof DB, Row>(
  declared: { [C in StringReference<DB, TB>]?: ColumnFilter } = {},
): Array<[string, ListFilter<DB, TB, Row>]> {
  // Object.entries types the keys as plain strings; they are the declaration's column names.
  return Object.entries<ColumnFilter | undefined>({ id: 'int', ...declared }).flatMap(([name, def]) =>
    def === undefined
      ? []
      : [[name, { ...(typeof def === 'string' ? { type: def } : def), column: name as StringReference<DB, TB> }]],
  );
}

/** Declares a resource's list once: its filter definitions for the HTTP layer and its runner. */
export function defineList<DB, TB extends keyof DB, Row, Out>(
  decl: ListDeclaration<DB, TB, Row, Out>,
): DeclaredList<Out> {
  const filters: Record<string, FilterDef> = {};
  const applied = new Map<string, { filter: ListFilter<DB, TB, Row>; op: string; base: string }>();
  for (const [name, filter] of [
    ...columnFilters<DB, TB, Row>(decl.columnFilters),
    ...Object.entries(decl.filters ?? {}),
  ]) {
    filters[name] = {
      type: filter.type,
      choices: filter.choices,
      description: filter.description,
      allowMe: filter.allowMe,
    };
    applied.set(name, { filter, op: 'in', base: name });
    if (filter.range) {
      for (const [suffix, op] of Object.entries(RANGE_SUFFIXES)) {
        filters[`${name}__${suffix}`] = { type: filter.type, description: `${name} ${op} the value.` };
        applied.set(`${name}__${suffix}`, { filter, op, base: name });
      }
    }
  }

  /** The query with the SQL filters, and the in-code tests of the others. */
  async function query(
    ctx: Ctx,
    options: ListOptions,
  ): Promise<{ q: SelectQueryBuilder<DB, TB, Row>; tests: Array<(row: Row) => boolean> }> {
    let q = decl.from(ctx);
    const tests: Array<(row: Row) => boolean> = [];
    const visible = decl.visible ? await decl.visible(ctx) : null;
    if (visible) q = q.where(visible);
    for (const [name, values] of Object.entries(options.filters)) {
      const entry = applied.get(name);
      if (!entry || values.length === 0) continue;
      const test = entry.filter.test;
      if (test && entry.op === 'in') {
        tests.push((row) => test(row, values));
        continue;
      }
      q = q.where(await conditionOf(entry.base, entry.filter, entry.op, values, ctx));
    }
    const columns = (decl.search ?? []) as string[];
    for (const term of options.search ?? []) {
      if (term === '' || columns.length === 0) continue;
      q = q.where((eb) => eb.or(columns.map((c) => textContains(c, term))));
    }
    return { q, tests };
  }

  async function run(ctx: Ctx, options: ListOptions): Promise<{ count: number; items: Out[] }> {
    const { q, tests } = await query(ctx, options);
    let rows = q;
    for (const o of options.ordering) {
      const by = decl.ordering[o.field];
      if (by === undefined) continue;
      rows = rows.orderBy(typeof by === 'string' ? sql.ref(by) : by, o.desc ? 'desc' : 'asc');
    }
    // Rows equal on the ordering keep a stable order.
    if (!options.ordering.some((o) => o.field === 'id'))
      rows = rows.orderBy(sql.ref('id'), options.ordering[0]?.desc ? 'desc' : 'asc');
    const admit = decl.admit ? await decl.admit(ctx) : null;
    const page = options.page;
    if (admit || !page || tests.length > 0) {
      const all = (await rows.execute()).filter((row) => tests.every((t) => t(row)));
      const visible = admit ? await admit(all) : all;
      return {
        count: visible.length,
        items: await decl.present(ctx, page ? visible.slice(page.offset, page.offset + page.limit) : visible),
      };
    }
    const counting = q.clearSelect().select((eb) => eb.fn.countAll<number>().as('count'));
    const countNow = async (): Promise<{ count: number }> =>
      (await counting.executeTakeFirstOrThrow()) as unknown as { count: number };
    const { count } = decl.memoCount
      ? await ctx.host.readMemo.get(
          ctx,
          `${decl.memoCount}-count|${ctx.user?.id ?? ''}|${JSON.stringify([options.filters, options.search ?? []])}`,
          countNow,
          decl.reads?.(options),
        )
      : await countNow();
    const found = await rows.limit(page.limit).offset(page.offset).execute();
    return { count: Number(count), items: await decl.present(ctx, found) };
  }

  return {
    filters,
    ordering: Object.keys(decl.ordering),
    defaultOrdering: decl.defaultOrdering,
    searchable: (decl.search ?? []).length > 0,
    run,
  };
}

/** A JSON list kept in a column (text) holds any of `values`. */
export function jsonListHasAny(text: unknown, values: readonly FilterValue[]): boolean {
  if (typeof text !== 'string' || text === '') return false;
  const list = JSON.parse(text) as unknown;
  return Array.isArray(list) && list.some((item) => values.includes(item as FilterValue));
}
