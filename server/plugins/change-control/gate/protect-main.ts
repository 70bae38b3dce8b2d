import type { Config, Ctx } from '../../../host';
import { PERMISSIONS } from '../names';

export const PROTECT_MAIN_MESSAGE =
  'Direct changes to main are disabled. Create a branch, make the change there, and open a change request.';

/** Whether `protect_main` covers this object type (`protect_main_scope` empty: every type). */
export function protectsType(config: Config, objectType: string): boolean {
  const { protect_main, protect_main_scope } = config.change_control;
  if (!protect_main) return false;
  if (protect_main_scope.length === 0) return true;
  const app = objectType.split('.')[0];
  return protect_main_scope.some((entry) => entry === objectType || entry === `${app}.*`);
}

/** The host's guard of direct writes on main: refused unless the caller holds `bypass_policy`. */
export async function protectMainGuard(ctx: Ctx, objectType: string): Promise<string | null> {
  if (!protectsType(ctx.host.config, objectType)) return null;
  if (ctx.user) {
    const perms = await ctx.host.permissions.forUser(ctx.user, ctx.db);
    if (perms.has(PERMISSIONS.bypassPolicy)) return null;
  }
  return PROTECT_MAIN_MESSAGE;
}

/** Entries of `protect_main_scope` that name no source-of-truth type (logged at start). */
export function protectScopeProblems(host: {
  config: Config;
  objectTypes: { sourceOfTruth(): Array<{ name: string; appLabel: string }> };
}): string[] {
  const types = host.objectTypes.sourceOfTruth();
  return host.config.change_control.protect_main_scope
    .filter((entry) =>
      entry.endsWith('.*')
        ? !types.some((t) => t.appLabel === entry.slice(0, -2))
        : !types.some((t) => t.name === entry),
    )
    .map((entry) => `"${entry}" names no source-of-truth object type; it protects nothing`);
}
