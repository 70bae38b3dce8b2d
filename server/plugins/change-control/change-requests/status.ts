import type { ChangeRequestStatus } from '../../../../contract/api/change-control';

/**
 * Status is derived from policy evaluation and never written by a client (pure).
 * `draft` is held by the author, `abandoned` by whoever abandoned, `completed` is terminal:
 * evaluation moves none of them. An open, submitted request is `rejected` while a live
 * rejection by an eligible reviewer stands, `approved` when the policies are satisfied, and
 * `needs-review` otherwise.
 */
export const HELD_STATUSES = ['draft', 'abandoned', 'completed'] as const satisfies readonly ChangeRequestStatus[];

export function isHeld(status: ChangeRequestStatus): boolean {
  return (HELD_STATUSES as readonly string[]).includes(status);
}

export function isOpen(status: ChangeRequestStatus): boolean {
  return status !== 'completed' && status !== 'abandoned';
}

export function deriveStatus(
  current: ChangeRequestStatus,
  evaluation: { approved: boolean; rejected: boolean },
): ChangeRequestStatus {
  if (isHeld(current)) return current;
  if (evaluation.rejected) return 'rejected';
  if (evaluation.approved) return 'approved';
  return 'needs-review';
}

/** The status a submitted request lands on (draft is no longer held). */
export function statusAfterSubmit(evaluation: { approved: boolean; rejected: boolean }): ChangeRequestStatus {
  return deriveStatus('needs-review', evaluation);
}
