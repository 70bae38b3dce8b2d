import type { Ctx, BranchRow } from '../../../host';
import { findChangeRequestForBranch } from '../change-requests/repository';
import { snapshotChangeRequest } from '../change-requests/snapshot';
import { runChecks } from '../checks/run';
import { matchBranch } from '../policies/governing';
import { computeGate, mayOverrideWindow, namedConflictsReason } from './merge-gate';
import { isOverrideInFlight } from './override';

/**
 * The host's merge validator: with `enforce_merge_gate`, a branch merges only when its change
 * request is ready, re-matching policies from the branch itself. The refusal is the blocked
 * reason. Conflicts with main are the merge's own to refuse (`mergeBranch`: unless acknowledged).
 */
export async function mergeGateValidator(ctx: Ctx, branch: BranchRow): Promise<string | null> {
  if (!ctx.host.config.change_control.enforce_merge_gate) return null;
  // An accountable override (gate/override.ts) has checked, recorded and is carrying out this merge.
  if (isOverrideInFlight(ctx, branch)) return null;
  const cr = await findChangeRequestForBranch(ctx, branch.id);
  if (!cr) return `Branch "${branch.name}" has no change request; open one and have it approved before merging.`;
  const governing =
    cr.status !== 'completed' && cr.status !== 'abandoned' ? await matchBranch(ctx, branch.id) : undefined;
  // The registered checks run again first: a result that time has overtaken since the last
  // refresh (the branch went stale) must not let the branch merge.
  if (governing) await runChecks(ctx, cr, governing, { registeredOnly: true });
  const gate = await computeGate(ctx, cr, {
    rematch: true,
    governing,
    overrideWindow: await mayOverrideWindow(ctx, snapshotChangeRequest(ctx, cr)),
  });
  if (gate.reasons.length === 0) return null;
  // In the words of merge_blocked_reason, the conflicts named for this merger.
  return gate.conflictsBlock
    ? [...gate.reasons, await namedConflictsReason(ctx, branch.id)].join(' ')
    : gate.reasons.join(' ');
}
