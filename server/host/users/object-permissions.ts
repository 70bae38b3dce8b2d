import type { HostDb, Queryable } from '../db/database';
import type { AuthUser } from '../core/identity';
import type { ReadMemo } from '../cache/read-memo';
import { enabledPermissionRows } from './permission-rows-repository';

/**
 * Object permissions as the host application has them: a permission grants `actions` on
 * `object_types` to users and groups, optionally narrowed by constraints on the object's
 * API fields. Superusers hold everything. Deny by default.
 */
export type ConstraintObject = Record<string, unknown>;
/** `true`: every object; `false`: none; a list: objects matching any one constraint object. */
export type Grant = true | false | ConstraintObject[];

interface PermissionRow {
  objectTypes: string[];
  actions: string[];
  constraints: ConstraintObject[] | null;
  users: number[];
  groups: number[];
}

const parsedNames = new Map<string, { objectType: string; action: string }>();

/** Splits `change_control.abandon_changerequest` into object type and action. */
export function parsePermissionName(name: string): { objectType: string; action: string } {
  let parsed = parsedNames.get(name);
  if (!parsed) {
    const dot = name.indexOf('.');
    const appLabel = name.slice(0, dot);
    const rest = name.slice(dot + 1);
    const underscore = rest.lastIndexOf('_');
    parsed = { objectType: `${appLabel}.${rest.slice(underscore + 1)}`, action: rest.slice(0, underscore) };
    // Permission names come from code and stored permissions: a bounded set.
    if (parsedNames.size < 10_000) parsedNames.set(name, parsed);
  }
  return parsed;
}

function fieldValue(obj: Record<string, unknown>, field: string): unknown {
  let value: unknown = obj;
  for (const part of field.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  // A related object is compared by its id.
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'id' in value) {
    return (value as { id: unknown }).id;
  }
  return value;
}

function resolveValue(value: unknown, user: AuthUser): unknown {
  if (value === '$user') return user.id;
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, user));
  return value;
}

function sameValue(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(actual)) return actual.some((a) => sameValue(a, expected));
  if (actual !== null && typeof actual === 'object' && 'id' in (actual as object)) {
    return (actual as { id: unknown }).id === expected;
  }
  return actual === expected;
}

/** Whether an API object satisfies one constraint object (every condition holds). */
export function matchesConstraint(obj: Record<string, unknown>, constraint: ConstraintObject, user: AuthUser): boolean {
  return Object.entries(constraint).every(([key, raw]) => {
    const expected = resolveValue(raw, user);
    if (key.endsWith('__in')) {
      const actual = fieldValue(obj, key.slice(0, -4));
      return Array.isArray(expected) && expected.some((e) => sameValue(actual, e));
    }
    return sameValue(fieldValue(obj, key), expected);
  });
}

export function grantAllows(grant: Grant, obj: Record<string, unknown>, user: AuthUser): boolean {
  if (grant === true) return true;
  if (grant === false) return false;
  return grant.some((c) => matchesConstraint(obj, c, user));
}

/** The permissions one user holds, ready to answer questions. */
export class UserPermissions {
  constructor(
    readonly user: AuthUser,
    private readonly rows: PermissionRow[],
  ) {}

  /** What the user may do with `action` on objects of `objectType`. */
  grant(objectType: string, action: string): Grant {
    if (this.user.isSuperuser) return true;
    let constraints: ConstraintObject[] = [];
    let any = false;
    for (const row of this.rows) {
      if (!row.objectTypes.includes(objectType) || !row.actions.includes(action)) continue;
      any = true;
      if (row.constraints === null || row.constraints.length === 0) return true;
      constraints = constraints.concat(row.constraints);
    }
    return any ? constraints : false;
  }

  /** Holds `app.action_model` on at least some objects. */
  has(permission: string): boolean {
    const { objectType, action } = parsePermissionName(permission);
    return this.grant(objectType, action) !== false;
  }

  /** Holds `app.action_model` on this object. */
  allows(permission: string, obj: Record<string, unknown>): boolean {
    const { objectType, action } = parsePermissionName(permission);
    return grantAllows(this.grant(objectType, action), obj, this.user);
  }
}

function parseJsonList<T>(text: string | null): T[] {
  if (!text) return [];
  const value = JSON.parse(text) as unknown;
  return Array.isArray(value) ? (value as T[]) : [];
}

/** What the permission rows are read from: inside a write transaction, writes of other tables keep them. */
const PERMISSION_TABLES: readonly string[] = ['permissions'];

/** Loads permission rows, kept in the host's read memo (any committed write drops them). */
export class PermissionService {
  constructor(
    private readonly db: HostDb,
    private readonly memo: ReadMemo,
  ) {}

  /**
   * Rows from `db` (default: the host's handle). Inside a write transaction pass the
   * transaction (`ctx.db`): the host's handle would wait for it forever.
   */
  private allRows(db?: Queryable): Promise<PermissionRow[]> {
    const source = db ?? this.db;
    const scope = { db: source, inTransaction: source.isTransaction };
    return this.memo.get(scope, 'permission-rows', () => this.load(source), PERMISSION_TABLES);
  }

  private async load(source: Queryable): Promise<PermissionRow[]> {
    const rows = await enabledPermissionRows(source);
    const parsed = rows.map((r) => {
      const constraints = r.constraints ? (JSON.parse(r.constraints) as unknown) : null;
      return {
        objectTypes: parseJsonList<string>(r.object_types),
        actions: parseJsonList<string>(r.actions),
        constraints:
          constraints === null
            ? null
            : Array.isArray(constraints)
              ? (constraints as ConstraintObject[])
              : [constraints as ConstraintObject],
        users: parseJsonList<number>(r.users),
        groups: parseJsonList<number>(r.groups),
      };
    });
    return parsed;
  }

  async forUser(user: AuthUser, db?: Queryable): Promise<UserPermissions> {
    return this.of(user, user.isSuperuser ? [] : await this.allRows(db));
  }

  /** The permissions of several users, the rows read once for all of them. */
  async forUsers(users: readonly AuthUser[], db?: Queryable): Promise<Map<number, UserPermissions>> {
    const rows = users.every((u) => u.isSuperuser) ? [] : await this.allRows(db);
    return new Map(users.map((u) => [u.id, this.of(u, rows)]));
  }

  private of(user: AuthUser, rows: readonly PermissionRow[]): UserPermissions {
    return new UserPermissions(
      user,
      user.isSuperuser
        ? []
        : rows.filter((r) => r.users.includes(user.id) || r.groups.some((g) => user.groupIds.includes(g))),
    );
  }
}
