import { z } from 'zod';
import { user as userOutput, type User } from '../../../contract/api/host';
import { recordChange } from '../events/changelog';
import type { Ctx } from '../core/context';
import { Conflict, NotFound, PermissionDenied, ValidationError } from '../core/errors';
import type { Host } from '../host';
import { hashPassword } from '../core/secrets';
import type { UserRow } from '../db/tables';
import { registerResource, type ApiObject } from '../http/resource';
import { defineList } from '../db/list';
import { dropFromPermissions, requireExistingIds } from './references';
import { groupIdsOfUsers, membersOf, setUserGroups, userRows, userTable } from './users-repository';
import { briefObject, fieldsOf } from '../core/api-object';

/** A user as presented (its schema, `user`, is in the shared contract: contract/api/host.ts). */
export type UserOut = User & ApiObject;

const name = (max: number) => z.string().max(max, { error: `at most ${max} characters` });

const userWrite = z.strictObject({
  username: z
    .string()
    .trim()
    .min(1, { error: 'This field may not be blank.' })
    .max(150, { error: 'at most 150 characters' })
    .regex(/^[\w.@+-]+$/, { error: 'Letters, digits and @ . + - _ only.' }),
  password: z
    .string()
    .min(1, { error: 'This field may not be blank.' })
    .max(256, { error: 'at most 256 characters' })
    .optional(),
  first_name: name(150).optional(),
  last_name: name(150).optional(),
  email: z.union([z.literal(''), z.email({ error: 'Enter a valid email address.' })]).optional(),
  is_superuser: z.boolean().optional(),
  is_active: z.boolean().optional(),
  groups: z.array(z.number().int()).max(1000).optional(),
});
type UserWrite = z.infer<typeof userWrite>;

function present(ctx: Ctx, row: UserRow, groups: number[]): UserOut {
  return {
    ...briefObject(ctx, '/api/users/users/', row.id, row.username),
    ...fieldsOf(row, ['username', 'first_name', 'last_name', 'email']),
    is_superuser: row.is_superuser === 1,
    is_active: row.is_active === 1,
    groups,
    created: row.created,
    last_updated: row.last_updated,
  };
}

/** One user as the API shows it, or undefined. */
export async function getUser(ctx: Ctx, id: number): Promise<UserOut | undefined> {
  const row = await userTable.byId(ctx, id);
  if (!row) return undefined;
  return present(ctx, row, (await groupIdsOfUsers(ctx, [id])).get(id) ?? []);
}

/** The users list: filters, `q` over the names and e-mail, ordering. */
const userList = defineList({
  from: userRows,
  columnFilters: { id: { type: 'int', allowMe: true }, username: 'string', is_superuser: 'bool', is_active: 'bool' },
  filters: {
    group_id: { type: 'int', where: (ids) => membersOf(ids) },
  },
  ordering: {
    id: 'id',
    username: 'username',
    first_name: 'first_name',
    last_name: 'last_name',
    email: 'email',
    created: 'created',
    last_updated: 'last_updated',
  },
  search: ['username', 'first_name', 'last_name', 'email'],
  present: async (ctx, found) => {
    const groups = await groupIdsOfUsers(
      ctx,
      found.map((r) => r.id),
    );
    return found.map((r) => present(ctx, r, groups.get(r.id) ?? []));
  },
});

/** Superuser status is granted, revoked and guarded by superusers only. */
function guardSuperuser(ctx: Ctx, existing: UserOut | null, input: Partial<UserWrite>): void {
  if (ctx.user?.isSuperuser) return;
  if (existing?.is_superuser) throw new PermissionDenied('Only a superuser may change a superuser account.');
  if (input.is_superuser === true) throw new PermissionDenied('Only a superuser may grant superuser status.');
}

async function assertUsernameFree(ctx: Ctx, username: string, exceptId: number | null): Promise<void> {
  if (await userTable.taken(ctx, 'username', username, exceptId))
    throw ValidationError.field('username', 'A user with that username already exists.');
}

function sameIgnoringTimestamps(a: UserOut, b: UserOut): boolean {
  return JSON.stringify({ ...a, last_updated: null }) === JSON.stringify({ ...b, last_updated: null });
}

export function registerUsers(host: Host): void {
  registerResource(host.routes, {
    tag: 'users',
    objectType: 'users.user',
    path: '/api/users/users/',
    output: userOutput,
    list: userList,
    get: getUser,
    create: {
      body: userWrite,
      run: async (ctx, input: UserWrite) => {
        guardSuperuser(ctx, null, input);
        await assertUsernameFree(ctx, input.username, null);
        await requireExistingIds(ctx, 'groups', 'groups', input.groups ?? []);
        const now = ctx.host.clock.now().toISOString();
        const id = await userTable.insert(ctx, {
          username: input.username,
          password_hash: input.password !== undefined ? await hashPassword(input.password) : null,
          first_name: input.first_name ?? '',
          last_name: input.last_name ?? '',
          email: input.email ?? '',
          is_superuser: input.is_superuser ? 1 : 0,
          is_active: input.is_active === false ? 0 : 1,
          created: now,
          last_updated: now,
        });
        await setUserGroups(ctx, id, input.groups ?? []);
        return id;
      },
    },
    update: {
      body: userWrite.partial(),
      put: userWrite,
      run: async (ctx, existing, input: Partial<UserWrite>) => {
        guardSuperuser(ctx, existing, input);
        if (input.username !== undefined) await assertUsernameFree(ctx, input.username, existing.id);
        if (input.groups !== undefined) await requireExistingIds(ctx, 'groups', 'groups', input.groups);
        const { password, groups, is_superuser, is_active, ...plain } = input;
        await userTable.update(ctx, existing.id, {
          ...plain,
          ...(password !== undefined ? { password_hash: await hashPassword(password) } : {}),
          ...(is_superuser !== undefined ? { is_superuser: is_superuser ? 1 : 0 } : {}),
          ...(is_active !== undefined ? { is_active: is_active ? 1 : 0 } : {}),
          last_updated: ctx.host.clock.now().toISOString(),
        });
        if (groups !== undefined) await setUserGroups(ctx, existing.id, groups);
        if (password !== undefined) {
          // A password change shows in no API field; record it here when nothing else changed.
          const updated = await getUser(ctx, existing.id);
          if (!updated) throw new NotFound();
          if (sameIgnoringTimestamps(existing, updated)) {
            await recordChange(ctx, {
              action: 'update',
              objectType: 'users.user',
              objectId: existing.id,
              repr: updated.display,
              prechange: existing,
              postchange: updated,
            });
          }
        }
      },
    },
    remove: async (ctx, existing) => {
      guardSuperuser(ctx, existing, {});
      for (const guard of ctx.host.userDeletionGuards) {
        const reason = await guard(ctx, existing.id);
        if (reason) throw new Conflict(reason);
      }
      await userTable.remove(ctx, existing.id);
      await dropFromPermissions(ctx, 'users', existing.id);
    },
  });
}
