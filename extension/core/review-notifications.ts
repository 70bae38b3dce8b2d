// Which of the caller's unread notifications deserve a (quiet) VS Code notification: change
// requests that now wait for the caller's review, and the caller's own requests approved,
// rejected, merged or merged by an override. Ids only grow, so "new" is "above the last seen";
// a first sign-in tells only of reviews waiting for the caller, never a burst of past outcomes.
import type { Notification } from '../../contract/api/host';
import { CHANGE_REQUEST_TYPE } from '../../contract/api/paths';

export { CHANGE_REQUEST_TYPE };

/** Event types that mean "your review is wanted". */
export const REVIEW_WANTED_EVENTS = ['change_request_review_requested', 'change_request_submitted'] as const;

/** Event types that tell the requester what became of their request. */
export const REQUESTER_EVENTS = [
  'change_request_approved',
  'change_request_rejected',
  'change_request_completed',
  'change_request_overridden',
] as const;

const SHOWN_EVENTS: readonly string[] = [...REVIEW_WANTED_EVENTS, ...REQUESTER_EVENTS];

export const MAX_SHOWN_AT_ONCE = 3;

export interface NotificationDecision {
  /** Shown one by one, newest first. */
  show: Notification[];
  /** Left out of `show` (told as "and N more"). */
  more: number;
  /** The new high-water mark. */
  lastSeenId: number;
}

/**
 * What to show of the unread notifications. `lastSeenId` undefined: nothing was ever shown to this
 * user on this machine (a first sign-in): what became of their requests before (approved,
 * rejected, merged) is the starting point, shown in the views, not as a burst of toasts; reviews
 * that wait for them are still told (something to do now). Afterwards, only what is new.
 */
export function reviewNotificationsToShow(
  unread: readonly Notification[],
  lastSeenId: number | undefined,
): NotificationDecision {
  const first = lastSeenId === undefined;
  const events: readonly string[] = first ? REVIEW_WANTED_EVENTS : SHOWN_EVENTS;
  const above = lastSeenId ?? 0;
  const fresh = unread
    .filter((n) => !n.read && n.id > above && n.object_type === CHANGE_REQUEST_TYPE && events.includes(n.event_type))
    .sort((a, b) => b.id - a.id);
  // One notification per change request, the newest.
  const perRequest = new Map<number, Notification>();
  for (const n of fresh) if (!perRequest.has(n.object_id)) perRequest.set(n.object_id, n);
  const unique = [...perRequest.values()];
  const highest = unread.reduce((m, n) => Math.max(m, n.id), above);
  return {
    show: unique.slice(0, MAX_SHOWN_AT_ONCE),
    more: Math.max(0, unique.length - MAX_SHOWN_AT_ONCE),
    lastSeenId: highest,
  };
}

/** The "N more" line after the first few: what they are about. */
export function moreMessage(more: number): string {
  return `${more} more change request${more === 1 ? '' : 's'} changed for you: see the Change Requests and My Reviews views.`;
}

/** `override`: who merged it past its gate and why, when the request could be read. */
export function notificationMessage(
  n: Notification,
  override?: { user: string | null; reason: string } | null,
): string {
  switch (n.event_type) {
    case 'change_request_overridden':
      return override
        ? `Your change request was merged past its gate (an override) by ${override.user ?? 'a deleted user'}: ${n.object_repr}. Reason: ${override.reason}`
        : `Your change request was merged past its gate (an override): ${n.object_repr}`;
    case 'change_request_approved':
      return `Your change request was approved: ${n.object_repr}`;
    case 'change_request_rejected':
      return `Your change request was rejected: ${n.object_repr}`;
    case 'change_request_completed':
      return `Your change request was merged: ${n.object_repr}`;
    default:
      return `Change request waiting for your review: ${n.object_repr}`;
  }
}
