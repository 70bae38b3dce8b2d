import type { Ctx } from '../../../host';
import { branchDigest } from '../../branching';
import type { ChangeRequestRow } from '../db/tables';
import { markReviewsStale, settleReviewsByContent } from '../reviews/repository';
import { updateChangeRequest } from './repository';

/**
 * A change request's content: the digest of its branch's net diff (branching/digest.ts), and
 * what follows when it moves: the cached `digest` on the request, and the staleness of its
 * reviews under `stale_approval_basis`.
 */

/** The digest of the request's branch now; once the branch is gone, the last one cached. */
export async function requestDigest(
  ctx: Ctx,
  cr: Pick<ChangeRequestRow, 'branch_id' | 'digest'>,
): Promise<string | null> {
  return cr.branch_id === null ? cr.digest : branchDigest(ctx, cr.branch_id);
}

/**
 * The branch of an open request moved: `wrote` for a write in it (its changes moved), false for
 * a sync or a revert. With `stale_approval_basis: "content"` (the default) a review is stale
 * exactly when the net diff differs from the one it was given on; with `"write"` any write makes
 * every live review stale (a sync none).
 */
export async function followContent(ctx: Ctx, cr: ChangeRequestRow, wrote: boolean): Promise<void> {
  if (cr.branch_id === null) return;
  const digest = await branchDigest(ctx, cr.branch_id);
  if (digest !== cr.digest) await updateChangeRequest(ctx, cr, { digest }, { changelog: false });
  if (ctx.host.config.change_control.stale_approval_basis === 'write') {
    if (wrote) await markReviewsStale(ctx, cr.id);
    return;
  }
  await settleReviewsByContent(ctx, cr.id, digest, wrote);
}
