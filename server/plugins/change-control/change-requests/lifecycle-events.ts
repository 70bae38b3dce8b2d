import type { ChangeRequestStatus, LifecycleEvent } from '../../../../contract/api/change-control';
import { LIFECYCLE_EVENTS } from '../../../../contract/api/change-control';
import { notify, usersHolding, type Ctx, type Host } from '../../../host';
import type { GateState } from '../gate/merge-gate';
import { presentChangeRequest } from './present';
import { displayOfChangeRequest, snapshotChangeRequest } from './snapshot';
import type { ChangeRequestRow } from '../db/tables';
import { CHANGE_REQUEST_TYPE, OVERRIDE_EVENT } from '../names';

/**
 * The six lifecycle events (contract 4.5) on the host's event pipeline. Each fires once per
 * real transition (`review_submitted` once per review write); the payload's `data` is the
 * change request.
 */
export function registerLifecycleEventTypes(host: Host): void {
  for (const name of LIFECYCLE_EVENTS) host.events.registerType(name);
  host.events.registerType(OVERRIDE_EVENT);
}

/** `change_request_overridden`: someone merged the request past its gate (the payload's data shows `override`). */
export async function emitOverrideEvent(ctx: Ctx, before: ChangeRequestRow, after: ChangeRequestRow): Promise<void> {
  await ctx.host.events.emit(ctx, {
    event: OVERRIDE_EVENT,
    objectType: CHANGE_REQUEST_TYPE,
    objectId: after.id,
    data: await presentChangeRequest(ctx, after),
    prechange: snapshotChangeRequest(ctx, before),
    postchange: snapshotChangeRequest(ctx, after),
  });
}

/** The event a status transition fires, or null (a move into draft or abandoned fires none). */
export function transitionEvent(from: ChangeRequestStatus, to: ChangeRequestStatus): LifecycleEvent | null {
  if (from === to) return null;
  switch (to) {
    case 'needs-review':
      return 'change_request_review_requested';
    case 'approved':
      return 'change_request_approved';
    case 'rejected':
      return 'change_request_rejected';
    case 'completed':
      return 'change_request_completed';
    default:
      return null;
  }
}

/** The transitions the requester hears of: their request approved, rejected, or merged (completed). */
export const REQUESTER_NOTIFIED: readonly LifecycleEvent[] = [
  'change_request_approved',
  'change_request_rejected',
  'change_request_completed',
];

/**
 * Tells the requester their request moved (approved, rejected, merged; merged by an override as
 * `change_request_overridden`), once per real transition
 * (the event fires once), not when the move is their own doing, and only while they may still
 * view the request.
 */
async function notifyRequester(ctx: Ctx, event: LifecycleEvent, after: ChangeRequestRow): Promise<void> {
  const requester = after.requester_id;
  if (requester === null || !REQUESTER_NOTIFIED.includes(event) || ctx.user?.id === requester) return;
  const recipients = await usersHolding(
    ctx,
    [requester],
    `${CHANGE_REQUEST_TYPE.split('.')[0]}.view_changerequest`,
    snapshotChangeRequest(ctx, after),
  );
  await notify(ctx, recipients, {
    objectType: CHANGE_REQUEST_TYPE,
    objectId: after.id,
    objectRepr: displayOfChangeRequest(after),
    // Merged past its gate: the requester hears that it was overridden (the request's `override` says by whom and why).
    eventType:
      event === 'change_request_completed' && after.override_reason !== null ? 'change_request_overridden' : event,
  });
}

/** Fires a lifecycle event; its data is the request `after` with the given gate (or the gate as it stands). */
export async function emitLifecycleEvent(
  ctx: Ctx,
  event: LifecycleEvent,
  before: ChangeRequestRow | null,
  after: ChangeRequestRow,
  gate?: GateState,
): Promise<void> {
  await notifyRequester(ctx, event, after);
  await ctx.host.events.emit(ctx, {
    event,
    objectType: CHANGE_REQUEST_TYPE,
    objectId: after.id,
    data: await presentChangeRequest(ctx, after, gate),
    prechange: before ? snapshotChangeRequest(ctx, before) : null,
    postchange: snapshotChangeRequest(ctx, after),
  });
}
