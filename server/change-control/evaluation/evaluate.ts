import type { ReviewDecision } from '../../contract/change-control';
import type { RuleDef } from '../policies/repository';

/**
 * The approval panel (pure): per governing policy and rule, who may approve, the approvals
 * that count, and whether the policies are satisfied.
 *
 * - An approval counts toward a rule only when the approver is eligible for it (named in the
 *   rule's users, or an active member of one of its groups), is not the requester, and the
 *   review is not stale.
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
  policies: EvalPolicy[];
  reviews: EvalReview[];
  /** Active members of every group the rules name, by group id (a group missing here has no members). */
  groupMembers: ReadonlyMap<number, readonly number[]>;
  groupNames: ReadonlyMap<number, string>;
  /** Every user named by a rule, a group or a review (unknown ids are skipped). */
  users: ReadonlyMap<number, EvalUser>;
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
}

export interface PolicyEvaluation {
  id: number;
  name: string;
  matchedObjectTypes: string[];
  checks: string[];
  rules: RuleEvaluation[];
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
  reasons: string[];
}

export const NO_RULES_REASON = 'No policy rules apply';

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function evaluateRule(rule: RuleDef, input: EvaluationInput, liveByReviewer: ReadonlyMap<number, EvalReview>): RuleEvaluation {
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
  const approverIds = eligibleUserIds.filter((id) => liveByReviewer.get(id)?.decision === 'approve');
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
    outstandingReviewerIds: satisfied ? [] : eligibleUserIds.filter((id) => { const d = liveByReviewer.get(id)?.decision; return d !== 'approve' && d !== 'reject'; }),
  };
}

export function evaluate(input: EvaluationInput): EvaluationResult {
  const live = input.reviews.filter((r) => !r.stale && r.reviewerId !== input.requesterId);
  const liveByReviewer = new Map(live.map((r) => [r.reviewerId, r]));
  const policies: PolicyEvaluation[] = input.policies.map((p) => ({
    id: p.id,
    name: p.name,
    matchedObjectTypes: p.matchedObjectTypes,
    checks: p.checks,
    rules: p.rules.map((r) => evaluateRule(r, input, liveByReviewer)),
  }));
  const rules = policies.flatMap((p) => p.rules);
  const eligible = new Set(rules.flatMap((r) => r.eligibleUserIds));
  const rejections = live.filter((r) => r.decision === 'reject' && eligible.has(r.reviewerId));
  const approved = rules.length > 0 && rules.every((r) => r.satisfied);

  const reasons: string[] = [];
  if (rules.length === 0) reasons.push(NO_RULES_REASON);
  for (const policy of policies) {
    for (const rule of policy.rules) {
      for (const group of rule.emptyGroups) {
        reasons.push(`Group "${group}" of rule "${rule.name}" (policy "${policy.name}") has no members and can never approve.`);
      }
      if (!rule.satisfied) {
        const who = rule.eligibleUserIds.length === 0 ? ' Nobody may approve it.' : '';
        reasons.push(`Rule "${rule.name}" of policy "${policy.name}" has ${rule.approvals} of ${plural(rule.minReviews, 'required approval', 'required approvals')}.${who}`);
      }
    }
  }
  for (const r of rejections) {
    reasons.push(`Changes requested by ${input.users.get(r.reviewerId)?.username ?? `user ${r.reviewerId}`}.`);
  }
  return {
    approved,
    rejected: rejections.length > 0,
    policies,
    staleReviews: input.reviews.filter((r) => r.stale),
    rejections,
    outstandingReviewerIds: [...new Set(rules.flatMap((r) => r.outstandingReviewerIds))].sort((a, b) => a - b),
    eligibleReviewerIds: [...eligible].sort((a, b) => a - b),
    reasons,
  };
}
