import { branchContributors } from '../../branching';
import { activeGroupMembers, groupsByIds, usersByIds, type Ctx } from '../../../host';
import { computations } from '../computations';
import { toBool } from '../db/database';
import type { ChangeRequestRow } from '../db/tables';
import type { PolicyWithRules } from '../policies/repository';
import { reviewFactsOf } from '../reviews/repository';
import { evaluate, type EvalPolicy, type EvalReview, type EvalUser, type EvaluationResult } from './evaluate';

/** A governing policy and the object types through which it matched. */
export interface GoverningPolicy {
  policy: PolicyWithRules;
  matchedObjectTypes: string[];
}

export async function loadReviews(ctx: Ctx, changeRequestId: number): Promise<EvalReview[]> {
  const rows = await reviewFactsOf(ctx, changeRequestId);
  return rows.map((r) => ({
    id: r.id,
    reviewerId: r.reviewer_id,
    decision: r.decision,
    stale: toBool(r.stale),
    comment: r.comment,
  }));
}

/** Users by id (unknown ids are left out). */
export async function loadUsers(ctx: Ctx, ids: Iterable<number>): Promise<Map<number, EvalUser>> {
  const rows = await usersByIds(ctx, ids);
  return new Map(rows.map((r) => [r.id, { id: r.id, username: r.username, display: r.username }]));
}

/**
 * Evaluates a change request against the given governing policies: loads its reviews, the
 * named groups with their active members, and the users involved, then runs the pure evaluation.
 */
export async function evaluateChangeRequest(
  ctx: Ctx,
  cr: Pick<ChangeRequestRow, 'id' | 'requester_id' | 'branch_id'>,
  governing: readonly GoverningPolicy[],
): Promise<EvaluationResult> {
  computations(ctx.host).evaluation++;
  const reviews = await loadReviews(ctx, cr.id);
  const contributorsCanApprove = ctx.host.config.change_control.contributors_can_approve;
  const contributorIds = contributorsCanApprove ? new Set<number>() : await branchContributors(ctx, cr.branch_id);
  const rules = governing.flatMap((g) => g.policy.rules);
  const groupIds = [...new Set(rules.flatMap((r) => r.groupIds))];
  const groupNames = new Map<number, string>();
  const groupMembers = new Map<number, number[]>();
  if (groupIds.length > 0) {
    for (const g of await groupsByIds(ctx, groupIds)) groupNames.set(g.id, g.name);
    for (const m of await activeGroupMembers(ctx, groupIds)) {
      const list = groupMembers.get(m.groupId) ?? [];
      list.push(m.userId);
      groupMembers.set(m.groupId, list);
    }
  }
  const userIds = new Set<number>([
    ...rules.flatMap((r) => r.userIds),
    ...[...groupMembers.values()].flat(),
    ...reviews.map((r) => r.reviewerId),
  ]);
  const userRows = await usersByIds(ctx, userIds);
  const users = new Map(userRows.map((r) => [r.id, { id: r.id, username: r.username, display: r.username }]));
  // Inactive users named directly by a rule cannot approve either.
  const inactive = new Set(userRows.filter((r) => !r.isActive).map((r) => r.id));
  const policies: EvalPolicy[] = governing.map((g) => ({
    id: g.policy.id,
    name: g.policy.name,
    matchedObjectTypes: g.matchedObjectTypes,
    checks: g.policy.checks,
    enforcement: g.policy.enforcement,
    rules: g.policy.rules.map((r) => ({ ...r, userIds: r.userIds.filter((id) => !inactive.has(id)) })),
  }));
  return evaluate({
    requesterId: cr.requester_id,
    contributorIds,
    contributorsCanApprove,
    policies,
    reviews,
    groupMembers,
    groupNames,
    users,
  });
}
