import type { Ctx } from '../core/context';
import type { Condition, FilterValue } from '../db/list';
import { tableRows } from '../db/table-rows';
import type { HostTables, UserRow } from '../db/tables';

/** Every user (the list's query). */
export function userRows(ctx: Ctx) {
  return ctx.db.selectFrom('users').selectAll();
}

/** Users by id: read, username taken, insert, update, delete. */
export const userTable = tableRows((ctx: Ctx) => ctx.db, 'users');

export function userByUsername(ctx: Ctx, username: string): Promise<UserRow | undefined> {
  return ctx.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
}

/** The groups of each of `userIds`, by group id (every user has an entry). */
export async function groupIdsOfUsers(ctx: Ctx, userIds: readonly number[]): Promise<Map<number, number[]>> {
  const byUser = new Map<number, number[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return byUser;
  const rows = await ctx.db
    .selectFrom('user_groups')
    .select(['user_id', 'group_id'])
    .where('user_id', 'in', [...userIds])
    .orderBy('group_id')
    .execute();
  for (const r of rows) byUser.get(r.user_id)?.push(r.group_id);
  return byUser;
}

/** The users in any of these groups (a condition on the users list). */
export function membersOf(groupIds: FilterValue[]): Condition<HostTables, 'users'> {
  return (eb) =>
    eb(
      'id',
      'in',
      eb
        .selectFrom('user_groups')
        .select('user_id')
        .where('group_id', 'in', groupIds as number[]),
    );
}

/** Makes `groups` the user's groups (duplicates once). */
export async function setUserGroups(ctx: Ctx, userId: number, groups: readonly number[]): Promise<void> {
  await ctx.db.deleteFrom('user_groups').where('user_id', '=', userId).execute();
  const unique = [...new Set(groups)];
  if (unique.length > 0)
    await ctx.db
      .insertInto('user_groups')
      .values(unique.map((g) => ({ user_id: userId, group_id: g })))
      .execute();
}

/** The ids among `ids` that have a row in `table`. */
export async function existingIds(ctx: Ctx, table: 'users' | 'groups', ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await ctx.db
    .selectFrom(table)
    .select('id')
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** The active users among `ids`. */
export function activeUsers(
  ctx: Ctx,
  ids: readonly number[],
): Promise<Array<Pick<UserRow, 'id' | 'username' | 'is_superuser'>>> {
  return ctx.db
    .selectFrom('users')
    .select(['id', 'username', 'is_superuser'])
    .where('id', 'in', [...ids])
    .where('is_active', '=', 1)
    .execute();
}

/** These users (unknown ids are left out), active or not: id, username, is_active. */
export function usersWithIds(
  ctx: Ctx,
  ids: readonly number[],
): Promise<Array<Pick<UserRow, 'id' | 'username' | 'is_active' | 'is_superuser'>>> {
  return ctx.db
    .selectFrom('users')
    .select(['id', 'username', 'is_active', 'is_superuser'])
    .where('id', 'in', [...ids])
    .execute();
}

/** The active members of these groups, one row per membership. */
export function activeMembersOfGroups(
  ctx: Ctx,
  groupIds: readonly number[],
): Promise<Array<{ group_id: number; user_id: number }>> {
  return ctx.db
    .selectFrom('user_groups')
    .innerJoin('users', 'users.id', 'user_groups.user_id')
    .select(['user_groups.group_id as group_id', 'users.id as user_id'])
    .where('user_groups.group_id', 'in', [...groupIds])
    .where('users.is_active', '=', 1)
    .execute();
}
