import type { AuthUser, Ctx } from '../core/context';

/**
 * Which of these (active) users hold `permission` on `object`: for work done on behalf of
 * others, such as notifying reviewers only of requests they may open.
 */
export async function usersHolding(ctx: Ctx, userIds: readonly number[], permission: string, object: Record<string, unknown>): Promise<number[]> {
  const wanted = [...new Set(userIds)];
  if (wanted.length === 0) return [];
  const users = await ctx.db.selectFrom('users').select(['id', 'username', 'is_superuser']).where('id', 'in', wanted).where('is_active', '=', 1).execute();
  const memberships = await ctx.db.selectFrom('user_groups').select(['user_id', 'group_id']).where('user_id', 'in', wanted).execute();
  const out: number[] = [];
  for (const u of users) {
    const auth: AuthUser = {
      id: u.id,
      username: u.username,
      isSuperuser: u.is_superuser === 1,
      groupIds: memberships.filter((m) => m.user_id === u.id).map((m) => m.group_id),
      writeEnabled: false,
    };
    if ((await ctx.host.permissions.forUser(auth, ctx.db)).allows(permission, object)) out.push(u.id);
  }
  return out;
}
