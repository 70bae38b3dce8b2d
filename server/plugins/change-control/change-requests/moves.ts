import type { LifecycleAction } from '../../../../contract/api/change-control';
import { type Ctx, Conflict } from '../../../host';
import type { ChangeRequestRow } from '../db/tables';
import { evaluateChangeRequest } from '../evaluation/load';
import { transitionEvent } from './lifecycle-events';
import { matchBranch, saveAttachedPolicies } from '../policies/governing';
import { lifecycleRefusal, LIFECYCLE } from './lifecycle';
import { requestRefresh, type LifecycleEmit } from './refresh';
import { writeStatus } from './repository';
import { statusAfterSubmit } from './status';

/**
 * The four person-driven moves. The caller's permission is checked by the route; here the
 * move is refused with 409 when it does not apply in the current state.
 */
export async function applyLifecycleAction(
  ctx: Ctx,
  action: LifecycleAction,
  cr: ChangeRequestRow,
): Promise<ChangeRequestRow> {
  const refusal = lifecycleRefusal(action, cr.status, cr.branch_id !== null);
  if (refusal) throw new Conflict(refusal);
  switch (action) {
    case 'submit':
      return submit(ctx, cr);
    case 'return-to-draft':
    case 'abandon':
    case 'reopen': {
      const to = LIFECYCLE[action].to;
      if (to === 'derived') throw new Error(`${action} has no fixed target state`);
      // Reviews are kept: resubmitting picks up where it left off.
      const after = await writeStatus(ctx, cr, to);
      await requestRefresh(ctx, cr.id, { rematch: action === 'reopen' });
      return after;
    }
  }
}

/**
 * Submit: policies are matched from the branch now, the request leaves draft for the state
 * evaluation derives, outstanding reviewers are notified, and the checks run (trigger 2).
 */
async function submit(ctx: Ctx, cr: ChangeRequestRow): Promise<ChangeRequestRow> {
  const governing = await matchBranch(ctx, cr.branch_id!);
  await saveAttachedPolicies(ctx, cr.id, governing);
  const evaluation = await evaluateChangeRequest(ctx, cr, governing);
  const after = await writeStatus(ctx, cr, statusAfterSubmit(evaluation));
  // The events fire once the request is refreshed (below), with the gate the refresh computes.
  const events: LifecycleEmit[] = [{ event: 'change_request_submitted', before: cr, after }];
  const transition = transitionEvent(cr.status, after.status);
  if (transition) events.push({ event: transition, before: cr, after });
  // Outstanding reviewers are notified by the refresh, as the request starts waiting for them.
  await requestRefresh(ctx, cr.id, { rematch: false, checks: true, events, known: { governing, evaluation } });
  return after;
}
