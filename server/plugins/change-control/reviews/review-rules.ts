import type { ChangeRequestStatus, ReviewDecision } from '../../../../contract/api/change-control';
import { hasVisibleText } from '../../../../contract/api/common';

/**
 * The review rules of the specification (pure). Each returns the refusal text, or null.
 *
 * 1. Naming another reviewer is not an error: the review is recorded as the caller's.
 * 2. A user cannot review their own change request.
 * 3. A second review by the same user on the same request is refused; the existing one is edited.
 * 4. A review against a draft moves nothing (draft is held; the review counts once submitted).
 * 5. A review becomes stale when the branch moves on; stale approvals are dropped.
 * 6. Only the author of a review may edit it; only its author may withdraw (delete) it.
 * And: a `reject` (Request changes) needs a comment.
 */
export function selfReviewRefusal(callerId: number, requesterId: number | null): string | null {
  return requesterId !== null && callerId === requesterId ? 'You cannot review your own change request.' : null;
}

export function secondReviewRefusal(existingReviewId: number | undefined): string | null {
  return existingReviewId === undefined
    ? null
    : `You have already reviewed this change request (review ${existingReviewId}); edit that review instead.`;
}

/** A rejection (Request changes) needs a comment with at least one visible character. */
export function rejectNeedsComment(decision: ReviewDecision, comment: string): string | null {
  return decision === 'reject' && !hasVisibleText(comment) ? 'A comment is required to request changes.' : null;
}

export function closedRequestRefusal(status: ChangeRequestStatus): string | null {
  return status === 'completed' || status === 'abandoned'
    ? `The change request is ${status}; it takes no more reviews.`
    : null;
}

/**
 * Independent approval: a user who changed objects on the branch cannot approve its change
 * request (rejecting and commenting stay open to them), unless `contributors_can_approve`.
 */
export function contributorApprovalRefusal(
  decision: ReviewDecision,
  isContributor: boolean,
  contributorsCanApprove: boolean,
): string | null {
  if (decision !== 'approve' || !isContributor || contributorsCanApprove) return null;
  return 'You changed objects on this branch, so your approval would not be independent: an approval must come from someone who did not change the branch. You may still request changes or comment.';
}

export function editorRefusal(callerId: number, reviewerId: number): string | null {
  return callerId === reviewerId ? null : 'Only the author of a review may edit it.';
}

/**
 * A review is a record: only its reviewer withdraws it (deletes it). Nobody else may, whatever
 * they hold, superusers included; to merge past a review, there is the accountable override.
 */
export function withdrawRefusal(callerId: number, reviewerId: number): string | null {
  return callerId === reviewerId
    ? null
    : 'Only its reviewer may withdraw a review: a review is a record, whatever permission you hold. To merge past it, use the accountable override (change-requests/{id}/override/).';
}
