import type { AuthUser, Ctx } from '../core/context';
import { groupNamesByIds } from './groups-repository';
import { activeMembersOfGroups, groupIdsOfUsers, userTable, usersWithIds } from './users-repository';

/**
 * Who is who, as plugins ask it: users and groups by id, the active members of groups, and a
 * user as an acting identity. Plugins never read the host's user tables themselves.
 */
export interface UserEntry {
  id: number;
  username: string;
  isActive: boolean;
}

/** What `usersByIds`, `groupsByIds` and `activeGroupMembers` read, for a cached answer to name. */
export const DIRECTORY_TABLES: readonly string[] = ['users', 'groups', 'user_groups'];

/** Users by id (unknown ids are left out), active or not. */
export async function usersByIds(ctx: Ctx, ids: Iterable<number>): Promise<UserEntry[]> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  const rows = await usersWithIds(ctx, wanted);
  return rows.map((r) => ({ id: r.id, username: r.username, isActive: r.is_active === 1 }));
}

/** Groups by id (unknown ids are left out). */
export async function groupsByIds(ctx: Ctx, ids: Iterable<number>): Promise<Array<{ id: number; name: string }>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  return groupNamesByIds(ctx, wanted);
}

/** The active members of these groups, one entry per membership. */
export async function activeGroupMembers(
  ctx: Ctx,
  groupIds: Iterable<number>,
): Promise<Array<{ groupId: number; userId: number }>> {
  const wanted = [...new Set(groupIds)];
  if (wanted.length === 0) return [];
  const rows = await activeMembersOfGroups(ctx, wanted);
  return rows.map((r) => ({ groupId: r.group_id, userId: r.user_id }));
}

/** Who a user is, as a rule naming users and groups (by id or by name) asks it. */
export interface Identity {
  id: number;
  username: string;
  isActive: boolean;
  isSuperuser: boolean;
  groupIds: number[];
  groupNames: string[];
}

/** The identities of these users (unknown ids are left out): three queries for any number. */
export async function identitiesOf(ctx: Ctx, ids: Iterable<number>): Promise<Map<number, Identity>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await usersWithIds(ctx, wanted);
  const groups = await groupIdsOfUsers(ctx, wanted);
  const names = new Map(
    (await groupNamesByIds(ctx, [...new Set([...groups.values()].flat())])).map((g) => [g.id, g.name]),
  );
  return new Map(
    rows.map((r) => {
      const groupIds = groups.get(r.id) ?? [];
      return [
        r.id,
        {
          id: r.id,
          username: r.username,
          isActive: r.is_active === 1,
          isSuperuser: r.is_superuser === 1,
          groupIds,
          groupNames: groupIds.flatMap((g) => names.get(g) ?? []),
        },
      ];
    }),
  );
}

/** An active user as an identity to act as (work done on their behalf), or null. */
export async function actingUser(ctx: Ctx, userId: number | null): Promise<AuthUser | null> {
  if (userId === null) return null;
  const user = await userTable.byId(ctx, userId);
  if (!user || user.is_active !== 1) return null;
  const groupIds = (await groupIdsOfUsers(ctx, [userId])).get(userId) ?? [];
  return { id: user.id, username: user.username, isSuperuser: user.is_superuser === 1, groupIds, writeEnabled: true };
}
