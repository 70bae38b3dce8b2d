import { sql, type Expression, type SqlBool } from 'kysely';
import {
  type AuthUser,
  type ConstraintObject,
  type Ctx,
  type Grant,
  grantAllows,
  jsonTextAt,
  valuesTable,
} from '../../../host';
import { ccDb } from '../db/database';
import type { ChangeRequestRow } from '../db/tables';
import { CHANGE_REQUEST_TYPE, MODELS } from '../names';
import { keptChangeRequestRow } from './repository';
import { snapshotChangeRequest } from './snapshot';

/**
 * Who may view a change request, as SQL: the caller's `view_changerequest` grant (its
 * constraints, which name the request's API fields, `snapshotChangeRequest`) turned into a
 * condition on `cc_change_requests` rows. Every list of what belongs to a request (reviews,
 * checks, comments, journal entries, notifications, the changelog, the event stream, search)
 * filters by it in the database, so 20,000 requests are never judged one by one in code, and
 * what a list filters, counts or searches (`q`) is only ever what the caller may see.
 *
 * The condition answers exactly as `grantAllows` does on the snapshot (`matchesConstraint`):
 * a field the snapshot does not have never matches; values compare by type (the id 5 is not the
 * text "5"); `__in` takes a list; `$user` is the caller's id. `custom_fields.<key>...` compares a
 * scalar (text, number, boolean, null) found at that path, or the `id` of an object found there.
 */
type Condition = Expression<SqlBool>;

const NEVER = sql<SqlBool>`1 = 0`;
const ALWAYS = sql<SqlBool>`1 = 1`;

type Kind = 'int' | 'text' | 'bool';
/** The snapshot's fields kept in a column, and how their values compare. */
const COLUMNS: Record<string, { column: string; kind: Kind; nullable?: boolean }> = {
  id: { column: 'id', kind: 'int' },
  title: { column: 'title', kind: 'text' },
  description: { column: 'description', kind: 'text' },
  ref: { column: 'ref', kind: 'text' },
  status: { column: 'status', kind: 'text' },
  priority: { column: 'priority', kind: 'text' },
  branch: { column: 'branch_id', kind: 'int', nullable: true },
  branch_name: { column: 'branch_name', kind: 'text' },
  branch_deleted: { column: 'branch_deleted', kind: 'bool' },
  gates_cleared: { column: 'gates_cleared', kind: 'bool' },
  scheduled_start: { column: 'scheduled_start', kind: 'text', nullable: true },
  scheduled_end: { column: 'scheduled_end', kind: 'text', nullable: true },
  auto_merge: { column: 'auto_merge', kind: 'bool' },
  comments: { column: 'comments', kind: 'text' },
  created: { column: 'created', kind: 'text' },
  last_updated: { column: 'last_updated', kind: 'text' },
  requester: { column: 'requester_id', kind: 'int', nullable: true },
  has_conflicts: { column: 'has_conflicts', kind: 'bool' },
  override_reason: { column: 'override_reason', kind: 'text', nullable: true },
  override_by: { column: 'override_by_id', kind: 'int', nullable: true },
  override_time: { column: 'override_time', kind: 'text', nullable: true },
  overridden_reason: { column: 'overridden_reason', kind: 'text', nullable: true },
};

const ref = (column: string) => sql.ref(`cc_change_requests.${column}`);

/** A column equals a value of the snapshot's type (a value of another type never matches). */
function columnEquals(def: { column: string; kind: Kind; nullable?: boolean }, value: unknown): Condition {
  const column = ref(def.column);
  if (value === null) return def.nullable ? sql<SqlBool>`${column} is null` : NEVER;
  if (def.kind === 'int') return Number.isSafeInteger(value) ? sql<SqlBool>`${column} = ${value}` : NEVER;
  if (def.kind === 'bool') return typeof value === 'boolean' ? sql<SqlBool>`${column} = ${value ? 1 : 0}` : NEVER;
  // No stored text holds NUL (PostgreSQL would refuse the parameter).
  return typeof value === 'string' && !value.includes('\0') ? sql<SqlBool>`${column} = ${value}` : NEVER;
}

/** One field of the snapshot equals one value (`sameValue` on `fieldValue`). */
function fieldEquals(ctx: Ctx, field: string, value: unknown): Condition {
  const def = COLUMNS[field];
  if (def) return columnEquals(def, value);
  if (field === 'display') {
    if (typeof value !== 'string' || value.includes('\0')) return NEVER;
    return sql<SqlBool>`(case when ${ref('ref')} <> '' then ${ref('ref')} || ': ' || ${ref('title')} else ${ref('title')} end) = ${value}`;
  }
  if (field === 'url') {
    const prefix = `${ctx.baseUrl}${MODELS.changeRequest.path}`;
    if (typeof value !== 'string' || !value.startsWith(prefix)) return NEVER;
    const id = /^(\d{1,15})\/$/.exec(value.slice(prefix.length))?.[1];
    return id === undefined ? NEVER : columnEquals(COLUMNS.id!, Number(id));
  }
  const path = field.split('.');
  if (path[0] === 'custom_fields' && path.length > 1 && path.every((p) => p !== '')) {
    const scalar =
      value === null || typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value as number);
    if (!scalar || (typeof value === 'string' && value.includes('\0'))) return NEVER;
    const json = JSON.stringify(value);
    const keys = path.slice(1);
    // The value itself, or the id of an object kept there (a related object compares by its id).
    return sql<SqlBool>`(${jsonTextAt(ccDb(ctx), ref('custom_fields'), keys)} = ${json} or ${jsonTextAt(ccDb(ctx), ref('custom_fields'), [...keys, 'id'])} = ${json})`;
  }
  return NEVER;
}

function resolveValue(value: unknown, user: AuthUser): unknown {
  if (value === '$user') return user.id;
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, user));
  return value;
}

function constraintCondition(ctx: Ctx, constraint: ConstraintObject, user: AuthUser): Condition {
  const parts = Object.entries(constraint).map(([key, raw]) => {
    const expected = resolveValue(raw, user);
    if (key.endsWith('__in')) {
      if (!Array.isArray(expected) || expected.length === 0) return NEVER;
      const field = key.slice(0, -4);
      return sql<SqlBool>`(${sql.join(
        expected.map((e) => fieldEquals(ctx, field, e)),
        sql` or `,
      )})`;
    }
    return fieldEquals(ctx, key, expected);
  });
  return parts.length === 0 ? ALWAYS : sql<SqlBool>`(${sql.join(parts, sql` and `)})`;
}

/** A grant as a condition on `cc_change_requests` rows (null: every row). */
export function grantCondition(ctx: Ctx, grant: Grant, user: AuthUser | null): Condition | null {
  if (grant === true) return null;
  if (grant === false || !user) return NEVER;
  return sql<SqlBool>`(${sql.join(
    grant.map((c) => constraintCondition(ctx, c, user)),
    sql` or `,
  )})`;
}

/** The caller's view grant on change requests. */
export async function requestViewGrant(ctx: Ctx): Promise<Grant> {
  if (!ctx.user) return false;
  return (await ctx.host.permissions.forUser(ctx.user, ctx.db)).grant(CHANGE_REQUEST_TYPE, 'view');
}

/** The change requests the caller may view, as a condition on `cc_change_requests` rows (null: every one). */
export async function requestViewCondition(ctx: Ctx): Promise<Condition | null> {
  return grantCondition(ctx, await requestViewGrant(ctx), ctx.user);
}

/**
 * The ids of the change requests the caller may view, for `change_request_id in (...)` (null:
 * every request; no request's id otherwise when the caller may view none).
 */
export async function visibleRequestIds(ctx: Ctx): Promise<Expression<number> | null> {
  const condition = await requestViewCondition(ctx);
  if (condition === null) return null;
  return ccDb(ctx)
    .selectFrom('cc_change_requests')
    .select('cc_change_requests.id')
    .where(condition) as Expression<unknown> as Expression<number>;
}

/**
 * A condition: `column` (of the list's own table) names a change request the caller may view
 * (null: every row passes).
 */
export async function ofVisibleRequest(ctx: Ctx, column: string): Promise<Condition | null> {
  const ids = await visibleRequestIds(ctx);
  // A subquery in a raw fragment is put in parentheses by the compiler itself.
  return ids === null ? null : sql<SqlBool>`${sql.ref(column)} in ${ids}`;
}

/** Whether the caller may view this one request (its stored fields; in code, for one row). */
export async function mayViewRequest(ctx: Ctx, row: ChangeRequestRow | undefined): Promise<boolean> {
  if (!row || !ctx.user) return false;
  return grantAllows(await requestViewGrant(ctx), snapshotChangeRequest(ctx, row), ctx.user);
}

/**
 * Whether the caller may view the request of this id (what belongs to it is then visible): the
 * row is read only when the caller's view of requests has constraints, and kept in the read memo.
 */
export async function mayViewRequestId(ctx: Ctx, id: number): Promise<boolean> {
  const grant = await requestViewGrant(ctx);
  if (grant === true || grant === false || !ctx.user) return grant === true;
  const row = await keptChangeRequestRow(ctx, id);
  return row !== undefined && grantAllows(grant, snapshotChangeRequest(ctx, row), ctx.user);
}

/** A list's `visible` (`defineList`): the rows whose `column` names a request the caller may view. */
export function rowsOfVisibleRequests(column: string): (ctx: Ctx) => Promise<(() => Condition) | null> {
  return async (ctx) => {
    const condition = await ofVisibleRequest(ctx, column);
    return condition === null ? null : () => condition;
  };
}

/** Which of these change requests the caller may view (one query, whatever their number). */
export async function visibleRequestsAmong(ctx: Ctx, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const condition = await requestViewCondition(ctx);
  if (condition === null) return new Set(ids);
  const rows = await ccDb(ctx)
    .selectFrom('cc_change_requests')
    .select('id')
    .where('id', 'in', (eb) => eb.selectFrom(valuesTable(ctx.db, [...ids]).as('j')).select('j.value'))
    .where(condition)
    .execute();
  return new Set(rows.map((r) => r.id));
}
