import type { Evaluation } from '../../../../contract/api/change-control';
import type { Ctx } from '../../../host';
import type { ChangeRequestRow } from '../db/tables';
import type { GateState } from '../gate/merge-gate';
import { renderMarkdown } from '../markdown';
import { clearsGate } from '../checks/declared';
import { blockingReason } from '../checks/state';
import { loadUsers } from './load';

/** What the policy's checks would block on (a check is advisory when only evaluating policies name it). */
export function checkReasons(gate: Pick<GateState, 'checks'>, names: readonly string[]): string[] {
  return gate.checks
    .filter((c) => names.includes(c.name) && (!clearsGate(c.row?.status) || c.outdated))
    .map((c) => blockingReason(c).replace(/^Required check/, 'Check'));
}

/** The approval panel as data (`GET change-requests/{id}/evaluation/`). */
export async function presentEvaluation(
  ctx: Ctx,
  cr: Pick<ChangeRequestRow, 'id'>,
  gate: Pick<GateState, 'status' | 'evaluation' | 'checks'>,
): Promise<Evaluation> {
  const ev = gate.evaluation;
  const ids = new Set<number>([
    ...ev.policies.flatMap((p) =>
      p.rules.flatMap((r) => [...r.eligibleUserIds, ...r.approverIds, ...r.outstandingReviewerIds]),
    ),
    ...ev.staleReviews.map((r) => r.reviewerId),
    ...ev.rejections.map((r) => r.reviewerId),
    ...ev.policies.flatMap((p) => p.rules.flatMap((r) => r.uncounted.map((u) => u.reviewerId))),
  ]);
  const users = await loadUsers(ctx, ids);
  const ref = (id: number) => users.get(id) ?? { id, username: `user ${id}`, display: `user ${id}` };
  return {
    change_request: cr.id,
    status: gate.status,
    approved: ev.approved,
    policies: ev.policies.map((p) => ({
      id: p.id,
      name: p.name,
      matched_object_types: p.matchedObjectTypes,
      checks: p.checks,
      enforcement: p.enforcement,
      blocking_reasons: [...p.reasons, ...checkReasons(gate, p.checks)],
      rules: p.rules.map((r) => ({
        id: r.id,
        name: r.name,
        min_reviews: r.minReviews,
        approvals: r.approvals,
        satisfied: r.satisfied,
        approvers: r.approverIds.map(ref),
        eligible_users: r.eligibleUserIds.map(ref),
        eligible_groups: r.groups,
        empty_groups: r.emptyGroups,
        outstanding_reviewers: r.outstandingReviewerIds.map(ref),
        uncounted_approvals: r.uncounted.map((u) => ({
          review: u.reviewId,
          reviewer: ref(u.reviewerId),
          reason: u.reason,
          detail: u.detail,
        })),
      })),
    })),
    stale_reviews: ev.staleReviews.map((r) => ({ id: r.id, reviewer: ref(r.reviewerId), decision: r.decision })),
    rejections: ev.rejections.map((r) => ({
      id: r.id,
      reviewer: ref(r.reviewerId),
      comment: r.comment,
      comment_html: renderMarkdown(r.comment),
    })),
    reasons: ev.reasons,
  };
}
