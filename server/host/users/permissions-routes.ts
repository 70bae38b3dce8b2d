import { z } from 'zod';
import { objectBase, objectTypeName, text } from '../../../contract/api/common';
import type { Ctx } from '../core/context';
import { ValidationError } from '../core/errors';
import type { Host } from '../host';
import type { PermissionsTable, Row } from '../db/tables';
import { registerResource, type ApiObject } from '../http/resource';
import { jsonListHasAny } from '../db/list';
import { rowReads } from '../http/row-reads';
import { rowWrites } from '../http/row-writes';
import type { NewRow } from '../db/table-rows';
import { permissionRows, permissionTable } from './permissions-repository';
import { constraints, type Constraints } from './constraints';
import { requireExistingIds } from './references';
import { briefObject, givenFields } from '../core/api-object';

export const permissionOutput = z.object({
  ...objectBase,
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  object_types: z.array(z.string()),
  actions: z.array(z.string()),
  constraints: z.union([z.null(), z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))]),
  users: z.array(z.number().int()),
  groups: z.array(z.number().int()),
});
export type PermissionOut = z.infer<typeof permissionOutput> & ApiObject;

const action = z
  .string()
  .regex(/^[a-z][a-z0-9_]*$/, { error: 'An action is a lowercase word, e.g. view, add, change, delete.' })
  .max(100);

const permissionWrite = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, { error: 'This field may not be blank.' })
    .max(100, { error: 'at most 100 characters' }),
  description: text(200).optional(),
  enabled: z.boolean().optional(),
  object_types: z.array(objectTypeName).min(1, { error: 'Give at least one object type.' }).max(1000),
  actions: z.array(action).min(1, { error: 'Give at least one action.' }).max(100),
  constraints: constraints.optional(),
  users: z.array(z.number().int()).max(10_000).optional(),
  groups: z.array(z.number().int()).max(10_000).optional(),
});
type PermissionWrite = z.infer<typeof permissionWrite>;

function parseJson<T>(raw: string | null, fallback: T): T {
  if (raw === null) return fallback;
  return JSON.parse(raw) as T;
}

function present(ctx: Ctx, row: Row<PermissionsTable>): PermissionOut {
  return {
    ...briefObject(ctx, '/api/users/permissions/', row.id, row.name),
    name: row.name,
    description: row.description,
    enabled: row.enabled === 1,
    object_types: parseJson<string[]>(row.object_types, []),
    actions: parseJson<string[]>(row.actions, []),
    constraints: parseJson<PermissionOut['constraints']>(row.constraints, null),
    users: parseJson<number[]>(row.users, []),
    groups: parseJson<number[]>(row.groups, []),
    created: row.created,
    last_updated: row.last_updated,
  };
}

/** One permission and the permissions list; the JSON lists inside a row are tested in code (permissions are few). */
const permissions = rowReads({
  from: permissionRows,
  byId: permissionTable.byId,
  present,
  columnFilters: { name: 'string', enabled: 'bool' },
  filters: {
    object_type: {
      type: 'string',
      description: 'Permissions on this object type ("app_label.model").',
      test: (r, v) => jsonListHasAny(r.object_types, v),
    },
    action: {
      type: 'string',
      description: 'Permissions granting this action.',
      test: (r, v) => jsonListHasAny(r.actions, v),
    },
    user_id: { type: 'int', allowMe: true, test: (r, v) => jsonListHasAny(r.users, v) },
    group_id: { type: 'int', test: (r, v) => jsonListHasAny(r.groups, v) },
  },
  ordering: { id: 'id', name: 'name', enabled: 'enabled', created: 'created', last_updated: 'last_updated' },
  search: ['name', 'description'],
});

function requireKnownObjectTypes(ctx: Ctx, names: readonly string[]): void {
  const unknown = names.filter((n) => !ctx.host.objectTypes.has(n));
  if (unknown.length > 0) {
    const messages = unknown.map((n) => `Unknown object type "${n}".`);
    throw new ValidationError(`object_types: ${messages.join(' ')}`, { object_types: messages });
  }
}

function uniqueList<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

function columns(input: Partial<PermissionWrite>, now: string): Partial<Omit<Row<PermissionsTable>, 'id'>> {
  const out: Partial<Omit<Row<PermissionsTable>, 'id'>> = {
    ...givenFields(input, ['name', 'description']),
    last_updated: now,
  };
  if (input.enabled !== undefined) out.enabled = input.enabled ? 1 : 0;
  if (input.object_types !== undefined) out.object_types = JSON.stringify(uniqueList(input.object_types));
  if (input.actions !== undefined) out.actions = JSON.stringify(uniqueList(input.actions));
  if (input.constraints !== undefined)
    out.constraints = input.constraints === null ? null : JSON.stringify(input.constraints as Constraints);
  if (input.users !== undefined) out.users = JSON.stringify(uniqueList(input.users));
  if (input.groups !== undefined) out.groups = JSON.stringify(uniqueList(input.groups));
  return out;
}

/** A new permission row: defaults for what the input leaves out, then the input's columns; `now` stamps it. */
function newRow(input: PermissionWrite, now: string): NewRow<PermissionsTable> {
  return {
    name: input.name,
    description: input.description ?? '',
    enabled: input.enabled === false ? 0 : 1,
    object_types: '[]',
    actions: '[]',
    constraints: null,
    users: '[]',
    groups: '[]',
    ...columns(input, now),
    created: now,
    last_updated: now,
  };
}

async function validateReferences(ctx: Ctx, input: Partial<PermissionWrite>): Promise<void> {
  if (input.object_types) requireKnownObjectTypes(ctx, input.object_types);
  await requireExistingIds(ctx, 'users', 'users', input.users ?? []);
  await requireExistingIds(ctx, 'groups', 'groups', input.groups ?? []);
}

export function registerPermissions(host: Host): void {
  registerResource(host.routes, {
    tag: 'users',
    objectType: 'users.objectpermission',
    path: '/api/users/permissions/',
    output: permissionOutput,
    list: permissions.list,
    get: permissions.get,
    ...rowWrites({
      table: permissionTable,
      body: permissionWrite,
      partial: permissionWrite.partial(),
      uniqueName: { column: 'name', message: 'A permission with this name already exists.' },
      check: validateReferences,
      insert: newRow,
      columns,
    }),
  });
}
