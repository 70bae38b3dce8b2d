import type { ChangeRequestStatus, LifecycleEvent } from '../../../../contract/api/change-control';
import { LIFECYCLE_EVENTS } from '../../../../contract/api/change-control';
import type { Ctx, Host } from '../../../host';
import type { GateState } from '../gate/merge-gate';
import { presentChangeRequest } from './present';
import { snapshotChangeRequest } from './snapshot';
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

/** Fires a lifecycle event; its data is the request `after` with the given gate (or the gate as it stands). */
export async function emitLifecycleEvent(ctx: Ctx, event: LifecycleEvent, before: ChangeRequestRow | null, after: ChangeRequestRow, gate?: GateState): Promise<void> {
  await ctx.host.events.emit(ctx, {
    event,
    objectType: CHANGE_REQUEST_TYPE,
    objectId: after.id,
    data: await presentChangeRequest(ctx, after, gate),
    prechange: before ? snapshotChangeRequest(ctx, before) : null,
    postchange: snapshotChangeRequest(ctx, after),
  });
}
