import type { ReviewDecision, UncountedApprovalReason } from '../../../../contract/api/change-control';
import type { RuleDef } from '../policies/repository';

/**
 * The approval panel (pure): per governing policy and rule, who may approve, the approvals
 * that count, and whether the policies are satisfied.
 *
 * - An approval counts toward a rule only when the approver is eligible for it (named in the
 *   rule's users, or an active member of one of its groups), is not the requester, the review
 *   is not stale, and the approver changed nothing on the branch (unless
 *   `contributors_can_approve`): nothing reaches main without an independent approval.
 * - An approval counts only while its reviewer may still review the request: active, eligible by
 *   the rule, holding `add_review` for the review and able to view the request.
 * - Each rule lists the approvals of its eligible reviewers that do not count, and why
 *   (`contributor`, `stale`, `not_permitted`).
 * - A rule is satisfied when its counted approvals reach `min_reviews` (zero is allowed).
 * - No applicable rule means not satisfied ("No policy rules apply").
 * - An empty group can never satisfy a rule and is called out by name.
 * - A live (not stale) rejection by a reviewer eligible for any governing rule rejects the request.
 */
export interface EvalPolicy {
  id: number;
  name: string;
  matchedObjectTypes: string[];
  checks: string[];
  /** `evaluate`: evaluated and shown with what it would block on, never counted for the decision. */
  enforcement?: 'active' | 'evaluate';
  rules: RuleDef[];
}

export interface EvalReview {
  id: number;
  reviewerId: number;
  decision: ReviewDecision;
  stale: boolean;
  comment: string;
}

export interface EvalUser {
  id: number;
  username: string;
  display: string;
}

export interface EvaluationInput {
  requesterId: number | null;
  /** Users who changed objects on the branch (its changelog). */
  contributorIds?: ReadonlySet<number>;
  /** `contributors_can_approve`: their approvals count like anyone's. */
  contributorsCanApprove?: boolean;
  policies: EvalPolicy[];
  reviews: EvalReview[];
  /** Active members of every group the rules name, by group id (a group missing here has no members). */
  groupMembers: ReadonlyMap<number, readonly number[]>;
  groupNames: ReadonlyMap<number, string>;
  /** Every user named by a rule, a group or a review (unknown ids are skipped). */
  users: ReadonlyMap<number, EvalUser>;
  /** Reviewers who may no longer review the request (no add_review for their review, or no view of the request). */
  notPermittedIds?: ReadonlySet<number>;
}

export interface RuleEvaluation {
  id: number;
  policyId: number;
  name: string;
  minReviews: number;
  approvals: number;
  satisfied: boolean;
  approverIds: number[];
  eligibleUserIds: number[];
  groups: Array<{ id: number; name: string; empty: boolean }>;
  emptyGroups: string[];
  outstandingReviewerIds: number[];
  /** Approvals of eligible reviewers that do not count, and why. */
  uncounted: UncountedApproval[];
}

export interface UncountedApproval {
  reviewId: number;
  reviewerId: number;
  reason: UncountedApprovalReason;
  detail: string;
}

export interface PolicyEvaluation {
  id: number;
  name: string;
  matchedObjectTypes: string[];
  checks: string[];
  enforcement: 'active' | 'evaluate';
  rules: RuleEvaluation[];
  /** What this policy's rules say against the request (for an evaluating policy: what it would block on). */
  reasons: string[];
}

export interface EvaluationResult {
  /** The policies are satisfied. */
  approved: boolean;
  /** A live rejection by an eligible reviewer stands. */
  rejected: boolean;
  policies: PolicyEvaluation[];
  staleReviews: EvalReview[];
  rejections: EvalReview[];
  /** Eligible reviewers of unsatisfied rules who owe a decision: no live approval or rejection (a comment is no decision). */
  outstandingReviewerIds: number[];
  /** Every user eligible for some governing rule (the requester excluded). */
  eligibleReviewerIds: number[];
  /** Users only policies on trial make eligible (no active rule names them): their reviews are advisory. */
  trialReviewerIds: number[];
  /** Of those, who owe a decision to an unsatisfied rule on trial. */
  trialWaitingIds: number[];
  reasons: string[];
}

export const NO_RULES_REASON = 'No policy rules apply';

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Why an approval does not count, or null when it does. */
function uncountedReason(
  review: EvalReview,
  input: EvaluationInput,
): { reason: UncountedApprovalReason; detail: string } | null {
  if (review.decision !== 'approve') return null;
  const name = input.users.get(review.reviewerId)?.username ?? `user ${review.reviewerId}`;
  if (!input.contributorsCanApprove && input.contributorIds?.has(review.reviewerId)) {
    return {
      reason: 'contributor',
      detail: `${name} changed objects on this branch; an approval must come from someone who did not.`,
    };
  }
  if (review.stale)
    return {
      reason: 'stale',
      detail: `The branch changed after ${name} approved; the approval counts again once they review again.`,
    };
  if (input.notPermittedIds?.has(review.reviewerId))
    return {
      reason: 'not_permitted',
      detail: `${name} may no longer review this change request (change_control.add_review, and viewing it); the approval counts again once they may.`,
    };
  return null;
}

function evaluateRule(
  rule: RuleDef,
  input: EvaluationInput,
  liveByReviewer: ReadonlyMap<number, EvalReview>,
  byReviewer: ReadonlyMap<number, EvalReview>,
): RuleEvaluation {
  const eligible = new Set<number>();
  for (const id of rule.userIds) if (input.users.has(id)) eligible.add(id);
  const groups = rule.groupIds
    .filter((id) => input.groupNames.has(id))
    .map((id) => {
      const members = input.groupMembers.get(id) ?? [];
      for (const m of members) eligible.add(m);
      return { id, name: input.groupNames.get(id)!, empty: members.length === 0 };
    });
  if (input.requesterId !== null) eligible.delete(input.requesterId);
  const eligibleUserIds = [...eligible].sort((a, b) => a - b);
  const uncounted: UncountedApproval[] = [];
  for (const id of eligibleUserIds) {
    const review = byReviewer.get(id);
    const why = review ? uncountedReason(review, input) : null;
    if (review && why) uncounted.push({ reviewId: review.id, reviewerId: id, ...why });
  }
  const uncountedIds = new Set(uncounted.map((u) => u.reviewerId));
  const approverIds = eligibleUserIds.filter(
    (id) => liveByReviewer.get(id)?.decision === 'approve' && !uncountedIds.has(id),
  );
  // Who may not approve (they changed the branch) owes no decision that could satisfy the rule.
  const mayApprove = (id: number) => input.contributorsCanApprove || !input.contributorIds?.has(id);
  const satisfied = approverIds.length >= rule.minReviews;
  return {
    id: rule.id,
    policyId: rule.policyId,
    name: rule.name,
    minReviews: rule.minReviews,
    approvals: approverIds.length,
    satisfied,
    approverIds,
    eligibleUserIds,
    groups,
    emptyGroups: groups.filter((g) => g.empty).map((g) => g.name),
    // A comment is not a decision: who only commented still owes one.
    outstandingReviewerIds: satisfied
      ? []
      : eligibleUserIds.filter((id) => {
          const d = liveByReviewer.get(id)?.decision;
          return d !== 'approve' && d !== 'reject' && mayApprove(id);
        }),
    uncounted,
  };
}

/** What a policy's rules say against the request: empty groups and unsatisfied rules. */
function ruleReasons(policyName: string, rules: readonly RuleEvaluation[]): string[] {
  const reasons: string[] = [];
  for (const rule of rules) {
    for (const group of rule.emptyGroups) {
      reasons.push(
        `Group "${group}" of rule "${rule.name}" (policy "${policyName}") has no members and can never approve.`,
      );
    }
    if (!rule.satisfied) {
      const who = rule.eligibleUserIds.length === 0 ? ' Nobody may approve it.' : '';
      const contributors = rule.uncounted.filter((u) => u.reason === 'contributor').length;
      const notCounted =
        contributors > 0
          ? ` ${plural(contributors, 'approval does', 'approvals do')} not count: ${contributors === 1 ? 'its reviewer' : 'their reviewers'} changed the branch.`
          : '';
      reasons.push(
        `Rule "${rule.name}" of policy "${policyName}" has ${rule.approvals} of ${plural(rule.minReviews, 'required approval', 'required approvals')}.${who}${notCounted}`,
      );
    }
  }
  return reasons;
}

export function evaluate(input: EvaluationInput): EvaluationResult {
  const live = input.reviews.filter((r) => !r.stale && r.reviewerId !== input.requesterId);
  const liveByReviewer = new Map(live.map((r) => [r.reviewerId, r]));
  const byReviewer = new Map(
    input.reviews.filter((r) => r.reviewerId !== input.requesterId).map((r) => [r.reviewerId, r]),
  );
  const policies: PolicyEvaluation[] = input.policies.map((p) => {
    const rules = p.rules.map((r) => evaluateRule(r, input, liveByReviewer, byReviewer));
    return {
      id: p.id,
      name: p.name,
      matchedObjectTypes: p.matchedObjectTypes,
      checks: p.checks,
      enforcement: p.enforcement ?? 'active',
      rules,
      reasons: ruleReasons(p.name, rules),
    };
  });
  // Policies in `evaluate` enforcement are evaluated and shown, but never decide anything.
  const active = policies.filter((p) => p.enforcement === 'active');
  const rules = active.flatMap((p) => p.rules);
  const eligible = new Set(rules.flatMap((r) => r.eligibleUserIds));
  const rejections = live.filter((r) => r.decision === 'reject' && eligible.has(r.reviewerId));
  const approved = rules.length > 0 && rules.every((r) => r.satisfied);

  const reasons: string[] = [];
  if (rules.length === 0) reasons.push(NO_RULES_REASON);
  for (const policy of active) reasons.push(...policy.reasons);
  for (const policy of policies) {
    if (policy.enforcement !== 'evaluate') continue;
    // A rejection by someone only an evaluating policy makes eligible would reject.
    const own = new Set(policy.rules.flatMap((r) => r.eligibleUserIds));
    for (const r of live)
      if (r.decision === 'reject' && own.has(r.reviewerId))
        policy.reasons.push(
          `Changes requested by ${input.users.get(r.reviewerId)?.username ?? `user ${r.reviewerId}`}.`,
        );
  }
  for (const r of rejections) {
    reasons.push(`Changes requested by ${input.users.get(r.reviewerId)?.username ?? `user ${r.reviewerId}`}.`);
  }
  const trialRules = policies.filter((p) => p.enforcement === 'evaluate').flatMap((p) => p.rules);
  const trialReviewerIds = [...new Set(trialRules.flatMap((r) => r.eligibleUserIds))]
    .filter((id) => !eligible.has(id))
    .sort((a, b) => a - b);
  const trialOnly = new Set(trialReviewerIds);
  const trialWaitingIds = [...new Set(trialRules.flatMap((r) => r.outstandingReviewerIds))]
    .filter((id) => trialOnly.has(id))
    .sort((a, b) => a - b);
  return {
    approved,
    rejected: rejections.length > 0,
    policies,
    staleReviews: input.reviews.filter((r) => r.stale),
    rejections,
    outstandingReviewerIds: [...new Set(rules.flatMap((r) => r.outstandingReviewerIds))].sort((a, b) => a - b),
    eligibleReviewerIds: [...eligible].sort((a, b) => a - b),
    trialReviewerIds,
    trialWaitingIds,
    reasons,
  };
}
