import { evaluateConditionSet, readPath, sameJson, type ConditionSet, type ConditionSubject } from '../../core/conditions';
import type { ConditionState } from '../../contract/change-control';

/**
 * Which policies govern a branch, from what it touches (pure). A policy matches when any one
 * changed object of its object types (all types when the list is empty) satisfies its
 * condition set; a policy without conditions and without object types matches every branch.
 */
export interface MatchablePolicy {
  id: number;
  objectTypes: string[];
  conditions: ConditionSet | null;
  conditionState: ConditionState;
}

/** One changed object of the branch: its type and the two sides of the change. */
export interface MatchableChange {
  objectType: string;
  action: 'create' | 'update' | 'delete';
  /** Main's state at the branch's baseline (null for a create). */
  original: Record<string, unknown> | null;
  /** The branch's state (null for a delete). */
  modified: Record<string, unknown> | null;
}

export interface PolicyMatch {
  policyId: number;
  /** The touched object types through which the policy matched, sorted. */
  matchedObjectTypes: string[];
}

/**
 * What a condition reads on one change. `condition_state` decides which sides a plain
 * attribute reads (`either`: both, `before`: original, `after`: modified; a create has only
 * modified and a delete only original); `snapshots.*` and `changed`/`unchanged` ignore it.
 */
export function changeSubject(change: MatchableChange, state: ConditionState): ConditionSubject {
  const sides: Array<Record<string, unknown>> = [];
  if (state !== 'after' && change.original) sides.push(change.original);
  if (state !== 'before' && change.modified) sides.push(change.modified);
  return {
    values: (attr) => sides.map((side) => readPath(side, attr)),
    side: (side, attr) => readPath(side === 'prechange' ? change.original : change.modified, attr),
    changed: (attr) => !sameJson(readPath(change.original, attr), readPath(change.modified, attr)),
  };
}

function appliesTo(policy: MatchablePolicy, objectType: string): boolean {
  return policy.objectTypes.length === 0 || policy.objectTypes.includes(objectType);
}

/** The types through which `policy` matches `changes`, or null when it does not match. */
export function matchPolicy(policy: MatchablePolicy, changes: readonly MatchableChange[]): string[] | null {
  const matched = new Set<string>();
  for (const change of changes) {
    if (!appliesTo(policy, change.objectType) || matched.has(change.objectType)) continue;
    if (policy.conditions === null || evaluateConditionSet(policy.conditions, changeSubject(change, policy.conditionState))) {
      matched.add(change.objectType);
    }
  }
  if (matched.size > 0) return [...matched].sort();
  // An empty set of object types with no conditions matches every branch, even one with no changes yet.
  if (policy.objectTypes.length === 0 && policy.conditions === null) return [];
  return null;
}

/** Every policy of `policies` that matches, in the order given. */
export function matchPolicies(policies: readonly MatchablePolicy[], changes: readonly MatchableChange[]): PolicyMatch[] {
  const out: PolicyMatch[] = [];
  for (const policy of policies) {
    const types = matchPolicy(policy, changes);
    if (types) out.push({ policyId: policy.id, matchedObjectTypes: types });
  }
  return out;
}
