import type { Ctx } from '../core/context';
import { NotFound, PermissionDenied } from '../core/errors';
import { grantAllows } from '../core/permissions';
import { parsePermissionName } from '../core/permissions';

/**
 * Object permissions for a write on one object, as the host application applies them: a write
 * acts only on the objects its permission admits. Holding none of the permissions that allow
 * the write is a 403; holding one whose constraints exclude this object is a 404 (the object
 * is outside what the caller may act on).
 */
export type WriteAccess = 'allowed' | 'excluded' | 'not-held';

export async function writeAccess(ctx: Ctx, permissions: readonly string[], obj: Record<string, unknown>): Promise<WriteAccess> {
  if (!ctx.user) return 'not-held';
  const perms = await ctx.host.permissions.forUser(ctx.user, ctx.db);
  let held = false;
  for (const name of permissions) {
    const { objectType, action } = parsePermissionName(name);
    const grant = perms.grant(objectType, action);
    if (grant === false) continue;
    held = true;
    if (grantAllows(grant, obj, ctx.user)) return 'allowed';
  }
  return held ? 'excluded' : 'not-held';
}

/** Throws 403 (none of `permissions` held, with `denied` as the reason) or 404 (their constraints exclude `obj`). */
export async function requireWriteAccess(ctx: Ctx, permissions: readonly string[], obj: Record<string, unknown>, denied?: string): Promise<void> {
  const access = await writeAccess(ctx, permissions, obj);
  if (access === 'not-held') throw new PermissionDenied(denied ?? `This needs the permission ${permissions.join(' or ')}.`);
  if (access === 'excluded') throw new NotFound();
}

/** After a write: the object must still be one the caller's permission admits (403 otherwise; the transaction rolls back). */
export async function requireStillAdmitted(ctx: Ctx, permissions: readonly string[], obj: Record<string, unknown>): Promise<void> {
  if ((await writeAccess(ctx, permissions, obj)) !== 'allowed') {
    throw new PermissionDenied('The change would take the object outside what your permission allows.');
  }
}
