import { type Ctx, PermissionDenied, grantAllows, parsePermissionName } from '../../host';

/**
 * Object permissions for a write on one object, as the host applies them everywhere: an object
 * the caller may not view is a 404 (callers load it with `getViewable` first); on a visible
 * object, holding none of the permissions that allow the write, or holding them only under
 * constraints that exclude this object, is a 403 naming what is missing.
 */
export type WriteAccess = 'allowed' | 'excluded' | 'not-held';

export async function writeAccess(
  ctx: Ctx,
  permissions: readonly string[],
  obj: Record<string, unknown>,
): Promise<WriteAccess> {
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

/** Throws 403 unless one of `permissions` admits `obj` (`denied` is the reason when none is held at all). */
export async function requireWriteAccess(
  ctx: Ctx,
  permissions: readonly string[],
  obj: Record<string, unknown>,
  denied?: string,
): Promise<void> {
  const access = await writeAccess(ctx, permissions, obj);
  if (access === 'not-held')
    throw new PermissionDenied(denied ?? `This needs the permission ${permissions.join(' or ')}.`);
  if (access === 'excluded')
    throw new PermissionDenied(`Your ${permissions.join(' / ')} permission does not extend to this object.`);
}

/** After a write: the object must still be one the caller's permission admits (403 otherwise; the transaction rolls back). */
export async function requireStillAdmitted(
  ctx: Ctx,
  permissions: readonly string[],
  obj: Record<string, unknown>,
): Promise<void> {
  if ((await writeAccess(ctx, permissions, obj)) !== 'allowed') {
    throw new PermissionDenied('The change would take the object outside what your permission allows.');
  }
}
