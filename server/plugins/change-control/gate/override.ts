import { Conflict, PermissionDenied, grantAllows, type Ctx, type BranchRow, type UserPermissions } from '../../../host';
import { mergeBranch } from '../../branching';
import { emitOverrideEvent } from '../change-requests/lifecycle-events';
import { getChangeRequestRow, updateChangeRequest } from '../change-requests/repository';
import { snapshotChangeRequest } from '../change-requests/snapshot';
import { runChecks } from '../checks/run';
import type { ChangeRequestRow } from '../db/tables';
import { GATE_TYPE, PERMISSIONS } from '../names';
import { matchBranch } from '../policies/governing';
import { windowState } from './change-window';
import { computeGate, type GateState } from './merge-gate';

/**
 * The accountable override: a holder of `change_control.override_gate` on a request (the grant's
 * constraints are checked against the change request) merges it although the gate refuses, by
 * giving a reason. The reason, the person, the time and the blocking reason they set aside are
 * recorded on the request (its `override`, with a changelog entry), and
 * `change_request_overridden` fires; then the branch merges and the request completes.
 *
 * What is overridable: whatever the gate says about approvals, checks, the change window (and
 * any other gate reason, such as a freeze). What is not: a request that is a draft, closed, or
 * whose branch is gone or not ready (there is nothing a merge could do), and a request that
 * nothing blocks (merge it normally: an override is never recorded without a refusal to set aside).
 *
 * The change-window override (`override_window_changerequest`) is a case of it: its holders may
 * override a request that only its window blocks, and a plain merge outside the window by such
 * a holder is recorded as an override with a reason saying so.
 */

/** Merges that are overrides, in flight: the merge validator lets exactly these through. */
const inFlight = new Set<string>();

function grantKey(ctx: Ctx, branchId: number): string {
  return `${ctx.requestId}|${branchId}`;
}

/** Whether this merge of the branch is an override being carried out (asked by the merge validator). */
export function isOverrideInFlight(ctx: Ctx, branch: BranchRow): boolean {
  return inFlight.has(grantKey(ctx, branch.id));
}

/** Whether these permissions hold `override_gate` on this request (its stored fields). */
export function holdsOverrideGate(
  perms: UserPermissions | null,
  user: Ctx['user'],
  object: Record<string, unknown>,
): boolean {
  if (!perms || !user) return false;
  return grantAllows(perms.grant(GATE_TYPE, 'override'), object, user);
}

/**
 * Why the request cannot be overridden whatever the caller holds, or null. `gateClear`: nothing
 * but (perhaps) conflicts with main blocks it, which an override does not set aside (a merge by
 * hand acknowledging them does).
 */
export function overrideRefusal(
  status: ChangeRequestRow['status'],
  branch: Pick<BranchRow, 'name' | 'status'> | null,
  gateClear: boolean,
  conflicts = false,
): string | null {
  if (status === 'completed' || status === 'abandoned') return `The change request is ${status}.`;
  if (!branch) return 'The branch of this change request has been deleted.';
  if (branch.status !== 'ready') return `Branch "${branch.name}" is ${branch.status}.`;
  if (status === 'draft') return 'The change request is a draft; submit it for review.';
  if (gateClear && conflicts)
    return 'Nothing but conflicts with main blocks this change request; merge it normally, acknowledging the conflicts.';
  if (gateClear) return 'Nothing blocks this change request; merge it normally.';
  return null;
}

/** Writes the override on the request (with its changelog entry) and fires the event. */
async function recordOverride(
  ctx: Ctx,
  row: ChangeRequestRow,
  reason: string,
  overridden: string,
): Promise<ChangeRequestRow> {
  const after = await updateChangeRequest(ctx, row, {
    override_reason: reason,
    override_by_id: ctx.user?.id ?? null,
    override_time: ctx.host.clock.now().toISOString(),
    overridden_reason: overridden,
  });
  await emitOverrideEvent(ctx, row, after);
  return after;
}

/**
 * POST `override/`: checks, records and merges. The caller must hold `override_gate` on the
 * request, or `override_window_changerequest` when the change window is all that blocks; the
 * route has already checked `branching.merge_branch` and that the caller may see the request.
 */
export async function overrideGate(
  ctx: Ctx,
  row: ChangeRequestRow,
  reason: string,
  acknowledgeConflicts = false,
): Promise<ChangeRequestRow> {
  const open = row.status !== 'completed' && row.status !== 'abandoned';
  const governing = open && row.branch_id !== null ? await matchBranch(ctx, row.branch_id) : undefined;
  // As the merge validator does: registered checks run first, so the refusal set aside is current.
  if (governing) await runChecks(ctx, row, governing, { registeredOnly: true });
  const fresh = (await getChangeRequestRow(ctx, row.id))!;
  const gate: GateState = await computeGate(ctx, fresh, { rematch: true, governing });
  const refusal = overrideRefusal(gate.status, gate.branch, gate.reasons.length === 0, gate.conflictsBlock);
  if (refusal) throw new Conflict(refusal);

  const perms = ctx.user ? await ctx.host.permissions.forUser(ctx.user, ctx.db) : null;
  const object = snapshotChangeRequest(ctx, fresh);
  const mayOverride =
    holdsOverrideGate(perms, ctx.user, object) ||
    (gate.onlyWindowBlocks && perms !== null && perms.allows(PERMISSIONS.overrideWindow, object));
  if (!mayOverride) {
    throw new PermissionDenied(
      gate.onlyWindowBlocks
        ? 'You need change_control.override_gate (or change_control.override_window_changerequest) to override the merge gate or the change window of this change request.'
        : 'You need change_control.override_gate to override the merge gate of this change request.',
    );
  }

  // What the override sets aside: the gate's reasons (conflicts are acknowledged, or refused, by the merge).
  const recorded = await recordOverride(ctx, fresh, reason, gate.reasons.join(' '));
  const key = grantKey(ctx, gate.branch!.id);
  inFlight.add(key);
  try {
    await mergeBranch(ctx, gate.branch!.id, { commit: true, acknowledgeConflicts });
  } finally {
    inFlight.delete(key);
  }
  return (await getChangeRequestRow(ctx, recorded.id))!;
}

/**
 * After a merge (the `merged` hook, before the request completes): a request merged outside its
 * change window, not through `override/`, was merged by a holder of the window override (the
 * gate let nobody else through): the override is recorded with a reason saying so.
 */
export async function recordWindowOverride(
  ctx: Ctx,
  row: ChangeRequestRow,
  branch: BranchRow,
): Promise<ChangeRequestRow> {
  if (isOverrideInFlight(ctx, branch) || !ctx.host.config.change_control.enforce_merge_gate) return row;
  const window = windowState(row.scheduled_start, row.scheduled_end, ctx.host.clock.now());
  if (window.open) return row;
  return recordOverride(
    ctx,
    row,
    'Merged outside the change window by a holder of the change-window override.',
    window.reason!,
  );
}
