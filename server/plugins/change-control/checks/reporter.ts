import { groupsByIds, type Ctx } from '../../../host';
import { reporterAdmitted, type DeclaredCheck } from './declared';

/**
 * A declared check may name its reporter (users or groups, in a policy's `check_settings` or in
 * `required_external_checks`): nobody else may report it, whatever they hold. The restriction is
 * on the caller's identity (the token's user), not on a permission, so superusers are held to it
 * as well: an administrator who must merge without the result uses the accountable override,
 * which leaves a record.
 */
export async function reporterRefusal(ctx: Ctx, declared: DeclaredCheck | undefined): Promise<string | null> {
  if (!declared?.reporters?.length) return null;
  const user = ctx.user;
  if (!user) return `Only the declared reporter may report check "${declared.name}".`;
  const needsNames = declared.reporters.some((r) => r.groups.some((g) => typeof g === 'string'));
  const groupNames =
    needsNames && user.groupIds.length > 0 ? (await groupsByIds(ctx, user.groupIds)).map((g) => g.name) : [];
  if (
    reporterAdmitted(declared.reporters, { id: user.id, username: user.username, groupIds: user.groupIds, groupNames })
  )
    return null;
  return `Only the declared reporter may report check "${declared.name}".`;
}
