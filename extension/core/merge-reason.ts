// Why a merge is refused, in words (shared by the extension and the webview; types only from
// the contract so that the webview bundle stays free of zod).
import type { ChangeRequest } from '../../server/contract/change-control';

const NOT_OFFERED = 'The service does not offer this action for this change request.';

/** The merge action's reason, else the request's `merge_blocked_reason`. */
export function mergeBlockedReason(cr: Pick<ChangeRequest, 'actions' | 'merge_blocked_reason'>): string {
  const a = cr.actions.merge;
  if (a && !a.allowed && a.reason?.trim()) return a.reason.trim();
  return cr.merge_blocked_reason.trim() || NOT_OFFERED;
}
