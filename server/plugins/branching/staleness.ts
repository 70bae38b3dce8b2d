import type { Ctx, BranchRow } from '../../host';

const DAY_MS = 86_400_000;

/**
 * A branch is stale (too far behind main to sync safely) when its last sync, or its creation
 * if never synced, is older than the host's `changelog_retention_days`.
 */
export function isBranchStale(ctx: Ctx, branch: Pick<BranchRow, 'last_sync' | 'created'>): boolean {
  const since = Date.parse(branch.last_sync ?? branch.created);
  const limit = ctx.host.config.host.changelog_retention_days * DAY_MS;
  return ctx.host.clock.now().getTime() - since > limit;
}
