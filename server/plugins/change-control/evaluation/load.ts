import { branchContributors } from '../../branching';
import { activeGroupMembers, grantAllows, groupsByIds, identitiesOf, usersByIds, type Ctx } from '../../../host';
import { computations } from '../computations';
import { toBool } from '../db/database';
import type { ChangeRequestRow, ReviewRow } from '../db/tables';
import { snapshotChangeRequest } from '../change-requests/snapshot';
import { CHANGE_REQUEST_TYPE, REVIEW_TYPE } from '../names';
import type { PolicyWithRules } from '../policies/repository';
import { reviewFactsOf, snapshotReview } from '../reviews/repository';
import { evaluate, type EvalPolicy, type EvalReview, type EvalUser, type EvaluationResult } from './evaluate';

/** A governing policy and the object types through which it matched. */
export interface GoverningPolicy {
  policy: PolicyWithRules;
  matchedObjectTypes: string[];
}

export async function loadReviews(ctx: Ctx, changeRequestId: number): Promise<EvalReview[]> {
  return evalReviews(await reviewFactsOf(ctx, changeRequestId));
}

function evalReviews(rows: readonly ReviewRow[]): EvalReview[] {
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

/** A request not created yet (a preview): it has no reviews. */
export interface WouldBeRequest {
  id: 0;
  requester_id: number | null;
  branch_id: number;
}

/**
 * The reviewers of live approvals who may no longer review the request: inactive, or without
 * `add_review` admitting their review, or without the view of the request (constraints included).
 * Decided on the permission rows the service keeps, a few queries for any number of reviewers.
 */
async function reviewersNoLongerPermitted(
  ctx: Ctx,
  cr: ChangeRequestRow,
  rows: readonly ReviewRow[],
): Promise<Set<number>> {
  const approvals = rows.filter((r) => r.decision === 'approve' && r.stale === 0);
  const out = new Set<number>();
  if (approvals.length === 0) return out;
  const identities = await identitiesOf(
    ctx,
    approvals.map((r) => r.reviewer_id),
  );
  const request = snapshotChangeRequest(ctx, cr);
  const users = [...identities.values()].map((who) => ({ ...who, writeEnabled: true }));
  const permissions = await ctx.host.permissions.forUsers(users, ctx.db);
  for (const review of approvals) {
    const who = identities.get(review.reviewer_id);
    const perms = permissions.get(review.reviewer_id);
    if (!who || !who.isActive || !perms) {
      out.add(review.reviewer_id);
      continue;
    }
    const user = { ...who, writeEnabled: true };
    if (
      !grantAllows(perms.grant(REVIEW_TYPE, 'add'), snapshotReview(ctx, review), user) ||
      !grantAllows(perms.grant(CHANGE_REQUEST_TYPE, 'view'), request, user)
    )
      out.add(review.reviewer_id);
  }
  return out;
}

/**
 * Evaluates a change request against the given governing policies: loads its reviews, the
 * named groups with their active members, the users involved and whether each approver may
 * still review it, then runs the pure evaluation.
 */
export async function evaluateChangeRequest(
  ctx: Ctx,
  cr: ChangeRequestRow | WouldBeRequest,
  governing: readonly GoverningPolicy[],
): Promise<EvaluationResult> {
  computations(ctx.host).evaluation++;
  const reviewRows = cr.id === 0 ? [] : await reviewFactsOf(ctx, cr.id);
  const reviews = evalReviews(reviewRows);
  const notPermittedIds =
    cr.id === 0 ? new Set<number>() : await reviewersNoLongerPermitted(ctx, cr as ChangeRequestRow, reviewRows);
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
    notPermittedIds,
  });
}
