import type { AuthUser, Ctx } from '../core/context';
import { activeUsers, groupIdsOfUsers } from './users-repository';

/**
 * Which of these (active) users hold `permission` on `object`: for work done on behalf of
 * others, such as notifying reviewers only of requests they may open.
 */
export async function usersHolding(
  ctx: Ctx,
  userIds: readonly number[],
  permission: string,
  object: Record<string, unknown>,
): Promise<number[]> {
  const wanted = [...new Set(userIds)];
  if (wanted.length === 0) return [];
  const users = await activeUsers(ctx, wanted);
  const memberships = await groupIdsOfUsers(
    ctx,
    users.map((u) => u.id),
  );
  const out: number[] = [];
  for (const u of users) {
    const auth: AuthUser = {
      id: u.id,
      username: u.username,
      isSuperuser: u.is_superuser === 1,
      groupIds: memberships.get(u.id) ?? [],
      writeEnabled: false,
    };
    if ((await ctx.host.permissions.forUser(auth, ctx.db)).allows(permission, object)) out.push(u.id);
  }
  return out;
}
