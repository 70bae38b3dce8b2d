import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Ctx } from '../core/context';
import type { AuthUser } from '../core/identity';
import { jsonDisplay, jsonNodeIn, jsonOrderTerms, jsonScalarText, foldedLike } from '../db/portable';
import { likePattern } from '../db/list';
import type { ConstraintObject, Grant } from '../users/object-permissions';
import { parseAttributes } from './attributes';
import type { ObjectState } from './main-repository';
import type { ObjectTypeDef } from './object-types';

/** A page of a source-of-truth list, as its query asks (`http/object-filters.ts` parses it). */
export interface ObjectListQuery {
  /** `id` (any of), `q` (any of, in the name), `<field>` (any of its values; all fields). */
  filters: { ids: number[] | null; q: string[] | null; fields: Record<string, string[]> };
  ordering: Array<{ field: string; desc: boolean }>;
  page: { limit: number; offset: number };
  /** What the caller may view: every object, or those matching one of the constraints. */
  grant: Exclude<Grant, false>;
  user: AuthUser;
}

type Cond = RawBuilder<SqlBool>;

const TRUE: Cond = sql<SqlBool>`1 = 1`;
const FALSE: Cond = sql<SqlBool>`1 = 0`;

function all(conds: Cond[]): Cond {
  if (conds.length === 0) return TRUE;
  return sql<SqlBool>`(${sql.join(conds, sql` and `)})`;
}

function any(conds: Cond[]): Cond {
  if (conds.length === 0) return FALSE;
  return sql<SqlBool>`(${sql.join(conds, sql` or `)})`;
}

/**
 * The objects of one type as the context sees them, a table `v (id, data, created,
 * last_updated)`: main's rows; in a branch, main's rows the branch does not change, and the
 * branch's created and updated objects (a created object's `created` is its change's, an
 * updated one keeps main's), its deleted ones left out (`overlay.ts` says the same per object).
 */
function visibleObjects(ctx: Ctx, objectType: string) {
  const main = ctx.db
    .selectFrom('objects')
    .select(['objects.id', 'objects.data', 'objects.created', 'objects.last_updated'])
    .where('objects.object_type', '=', objectType);
  if (!ctx.branch) return main;
  const branchId = ctx.branch.id;
  return main
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('branch_changes as c')
            .select('c.id')
            .where('c.branch_id', '=', branchId)
            .where('c.object_type', '=', objectType)
            .whereRef('c.object_id', '=', 'objects.id'),
        ),
      ),
    )
    .unionAll(
      ctx.db
        .selectFrom('branch_changes as c')
        .leftJoin('objects as o', (join) => join.onRef('o.id', '=', 'c.object_id').on('o.object_type', '=', objectType))
        .select(({ fn, ref }) => [
          'c.object_id as id',
          sql<string>`${ref('c.modified')}`.as('data'),
          fn.coalesce('o.created', 'c.created').as('created'),
          'c.last_updated',
        ])
        .where('c.branch_id', '=', branchId)
        .where('c.object_type', '=', objectType)
        .where('c.action', '<>', 'delete')
        .where('c.modified', 'is not', null),
    );
}

const DATA = sql.ref('v.data');
const ID = sql.ref('v.id');

/** The fields every object shows besides its attributes, as SQL on `v`. */
function presentedField(ctx: Ctx, def: ObjectTypeDef, field: string): Expression<unknown> | undefined {
  switch (field) {
    case 'id':
      return ID;
    case 'created':
      return sql.ref('v.created');
    case 'last_updated':
      return sql.ref('v.last_updated');
    case 'display':
      return jsonDisplay(ctx.db, DATA, sql`${`${def.display} `} || cast(${ID} as text)`);
    case 'url':
      return sql`${`${ctx.baseUrl}${def.path ?? '/'}`} || cast(${ID} as text) || '/'`;
    default:
      return undefined;
  }
}

/** `<field>=value` (any of the values): the field's value, or any element of a list, compared as text; a related object by its id. */
function fieldFilter(ctx: Ctx, def: ObjectTypeDef, field: string, wanted: string[]): Cond {
  const presented = presentedField(ctx, def, field);
  if (presented && field !== 'id') return sql<SqlBool>`${presented} in (${sql.join(wanted.map((w) => sql`${w}`))})`;
  return jsonNodeIn(ctx.db, DATA, [field], { json: wanted.map((w) => JSON.stringify(w)), plain: wanted });
}

function resolved(value: unknown, user: AuthUser): unknown {
  if (value === '$user') return user.id;
  if (Array.isArray(value)) return value.map((v) => resolved(v, user));
  return value;
}

function isScalar(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/**
 * One condition of a permission's constraint (`users/object-permissions.ts` judges the same in
 * code): the API field at the dotted path, or an element of it when it is a list, a related
 * object by its id, strictly equal to one of the values.
 */
function constraintCondition(ctx: Ctx, def: ObjectTypeDef, key: string, expected: unknown): Cond {
  const field = key.endsWith('__in') ? key.slice(0, -4) : key;
  const values = key.endsWith('__in') ? (Array.isArray(expected) ? expected : []) : [expected];
  const scalars = values.filter(isScalar);
  const parts = field.split('.');
  const presented = presentedField(ctx, def, parts[0]!);
  if (presented) {
    if (parts.length > 1) return FALSE;
    const typed = scalars.filter((v) => (parts[0] === 'id' ? Number.isSafeInteger(v) : typeof v === 'string'));
    return typed.length === 0 ? FALSE : sql<SqlBool>`${presented} in (${sql.join(typed.map((v) => sql`${v}`))})`;
  }
  return jsonNodeIn(ctx.db, DATA, parts, { json: scalars.map((v) => JSON.stringify(v)), plain: [] });
}

function constraintMatches(ctx: Ctx, def: ObjectTypeDef, constraint: ConstraintObject, user: AuthUser): Cond {
  return all(Object.entries(constraint).map(([key, raw]) => constraintCondition(ctx, def, key, resolved(raw, user))));
}

function conditions(ctx: Ctx, def: ObjectTypeDef, query: ObjectListQuery): Cond[] {
  const { filters, grant, user } = query;
  const out: Cond[] = [];
  if (grant !== true) out.push(any(grant.map((c) => constraintMatches(ctx, def, c, user))));
  if (filters.ids) out.push(filters.ids.length === 0 ? FALSE : sql<SqlBool>`${ID} in (${sql.join(filters.ids)})`);
  if (filters.q)
    out.push(any(filters.q.map((q) => foldedLike(ctx.db, jsonScalarText(ctx.db, DATA, 'name'), likePattern(q)))));
  for (const [field, wanted] of Object.entries(filters.fields)) out.push(fieldFilter(ctx, def, field, wanted));
  return out;
}

/** ORDER BY terms: each field's (attributes by type, then value), then the id. */
function orderTerms(ctx: Ctx, def: ObjectTypeDef, ordering: ObjectListQuery['ordering']): RawBuilder<unknown> {
  const terms: RawBuilder<unknown>[] = [];
  for (const { field, desc } of ordering) {
    const presented = presentedField(ctx, def, field);
    const exprs = presented ? [presented] : jsonOrderTerms(ctx.db, DATA, field);
    for (const e of exprs) terms.push(desc ? sql`${e} desc` : sql`${e} asc`);
  }
  if (ordering.at(-1)?.field !== 'id') terms.push(sql`${ID} asc`);
  return sql.join(terms);
}

/**
 * A page of the objects of one type as the context sees them (main, or main overlaid with the
 * branch's changes), with how many there are: the caller's view constraints, the filters, the
 * ordering and the page are all applied by the database.
 */
export async function pageObjects(
  ctx: Ctx,
  def: ObjectTypeDef & { name: string },
  query: ObjectListQuery,
): Promise<{ count: number; items: ObjectState[] }> {
  const where = all(conditions(ctx, def, query));
  const rows = () => ctx.db.selectFrom(visibleObjects(ctx, def.name).as('v')).where(where);
  const counted = await rows()
    .select(({ fn }) => fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const count = Number(counted.n);
  if (count === 0 || query.page.offset >= count) return { count, items: [] };
  const page = await rows()
    .select(['v.id', 'v.data', 'v.created', 'v.last_updated'])
    .orderBy(orderTerms(ctx, def, query.ordering))
    .limit(query.page.limit)
    .offset(query.page.offset)
    .execute();
  return {
    count,
    items: page.map((r) => ({
      id: Number(r.id),
      objectType: def.name,
      attrs: parseAttributes(r.data) ?? {},
      created: r.created,
      lastUpdated: r.last_updated,
    })),
  };
}
