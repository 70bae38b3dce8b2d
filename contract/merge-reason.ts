// Why a merge is refused, in words (shared by the extension and the webview; types only from
// the contract so that the webview bundle stays free of zod).
import type { ChangeRequest } from './api/change-control';

const NOT_OFFERED = 'The service does not offer this action for this change request.';

/**
 * Why the caller cannot merge: the gate's `merge_blocked_reason` when the request is not ready,
 * and the merge action's own reason (e.g. a missing permission) when it says something else.
 */
export function mergeBlockedReason(
  cr: Pick<ChangeRequest, 'actions' | 'merge_blocked_reason' | 'ready_to_merge'>,
): string {
  const gate = cr.ready_to_merge ? '' : cr.merge_blocked_reason.trim();
  const a = cr.actions.merge;
  const caller = a && !a.allowed ? (a.reason?.trim() ?? '') : '';
  if (gate && caller && caller !== gate) return `${gate} ${caller}`;
  return gate || caller || NOT_OFFERED;
}
