import { type Ctx, PermissionDenied, grantAllows } from '../../../host';
import type { ChangeRequestRow } from '../db/tables';
import { MERGE_CHECK_TYPE } from '../names';
import { presentCheckRows } from './present';
import { checkRowsOf } from './state';

/**
 * Re-run checks needs `change_mergecheck` (contract 4.3) on the checks of this request: a
 * constraint on that permission must admit one of its checks (or, before it has any, a check
 * of this request). Otherwise 403; the caller already sees the request.
 */
export async function requireRunChecks(ctx: Ctx, cr: ChangeRequestRow): Promise<void> {
  const denied = new PermissionDenied(
    'You need change_control.change_mergecheck, for the checks of this change request, to re-run them.',
  );
  if (!ctx.user) throw denied;
  const grant = (await ctx.host.permissions.forUser(ctx.user, ctx.db)).grant(MERGE_CHECK_TYPE, 'change');
  if (grant === true) return;
  if (grant === false) throw denied;
  const user = ctx.user;
  if (grantAllows(grant, { change_request: cr.id }, user)) return;
  const checks = await presentCheckRows(ctx, await checkRowsOf(ctx, cr.id));
  if (!checks.some((c) => grantAllows(grant, c, user))) throw denied;
}
