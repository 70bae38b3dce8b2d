import { conditionRegExp, sameJson, testOp, type ConditionSet } from '../../../host';
import type { ConditionState } from '../../../../contract/api/change-control';

/**
 * Which policies govern a branch, from what it touches (pure). A policy matches when any one
 * changed object of its object types (all types when the list is empty) satisfies its
 * condition set; a policy without conditions and without object types matches every branch.
 *
 * What a condition reads on one change: `condition_state` decides which sides a plain
 * attribute reads (`either`: both, `before`: original, `after`: modified; a create has only
 * modified and a delete only original), and the condition holds when any side read satisfies
 * it; `snapshots.prechange.<attr>` / `snapshots.postchange.<attr>` read one named side and
 * `changed`/`unchanged` compare the two sides, both ignoring `condition_state`.
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

type ChangeTest = (change: MatchableChange) => boolean;

const SNAPSHOT = /^snapshots\.(prechange|postchange)\.(.+)$/;

function reader(path: string): (obj: unknown) => unknown {
  const parts = path.split('.');
  return (obj) => {
    let value = obj;
    for (const part of parts) {
      // Own keys only: an attribute named `constructor` is data, never Object's.
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
      value = (value as Record<string, unknown>)[part];
    }
    return value;
  };
}

/** `testOp` with the expected value prepared once (a regular expression compiled once). */
function comparer(op: string, expected: unknown): (actual: unknown) => boolean {
  if (op === 'regex') {
    const re = typeof expected === 'string' ? conditionRegExp(expected) : null;
    if (re === null) return () => false;
    return (actual) => actual !== undefined && actual !== null && re.test(String(actual));
  }
  return (actual) => testOp(op, actual, expected);
}

/** Compiles a condition set, read on one change under a condition state, into one test. */
export function compileForChanges(set: ConditionSet, state: ConditionState): ChangeTest {
  if ('and' in set) {
    const parts = set.and.map((s) => compileForChanges(s, state));
    return (c) => parts.every((p) => p(c));
  }
  if ('or' in set) {
    const parts = set.or.map((s) => compileForChanges(s, state));
    return (c) => parts.some((p) => p(c));
  }
  const op = set.op ?? 'eq';
  const snap = SNAPSHOT.exec(set.attr);
  let test: ChangeTest;
  if (op === 'changed' || op === 'unchanged') {
    const read = reader(snap ? snap[2]! : set.attr);
    const wantMoved = op === 'changed';
    test = (c) => !sameJson(read(c.original), read(c.modified)) === wantMoved;
  } else if (snap) {
    const read = reader(snap[2]!);
    const compare = comparer(op, set.value);
    test = snap[1] === 'prechange' ? (c) => compare(read(c.original)) : (c) => compare(read(c.modified));
  } else {
    const read = reader(set.attr);
    const compare = comparer(op, set.value);
    const before = state !== 'after';
    const after = state !== 'before';
    test = (c) =>
      (before && c.original !== null && compare(read(c.original))) ||
      (after && c.modified !== null && compare(read(c.modified)));
  }
  return set.negate ? (c) => !test(c) : test;
}

/** A policy ready to be matched against many changes. */
export function compilePolicy(policy: MatchablePolicy): (changes: readonly MatchableChange[]) => string[] | null {
  const types = policy.objectTypes.length === 0 ? null : new Set(policy.objectTypes);
  const holds = policy.conditions === null ? null : compileForChanges(policy.conditions, policy.conditionState);
  return (changes) => {
    const matched = new Set<string>();
    for (const change of changes) {
      if ((types !== null && !types.has(change.objectType)) || matched.has(change.objectType)) continue;
      if (holds === null || holds(change)) matched.add(change.objectType);
    }
    if (matched.size > 0) return [...matched].sort();
    // An empty set of object types with no conditions matches every branch, even one with no changes yet.
    if (types === null && holds === null) return [];
    return null;
  };
}

/** The types through which `policy` matches `changes`, or null when it does not match. */
export function matchPolicy(policy: MatchablePolicy, changes: readonly MatchableChange[]): string[] | null {
  return compilePolicy(policy)(changes);
}

/** Every policy of `policies` that matches, in the order given. */
export function matchPolicies(
  policies: readonly MatchablePolicy[],
  changes: readonly MatchableChange[],
): PolicyMatch[] {
  const out: PolicyMatch[] = [];
  for (const policy of policies) {
    const types = matchPolicy(policy, changes);
    if (types) out.push({ policyId: policy.id, matchedObjectTypes: types });
  }
  return out;
}

/**
 * A policy's matching, one change at a time (what the counts kept per branch are made of): which
 * object types it looks at (null: all) and whether its condition set holds for one change (null:
 * no conditions, every change of its types counts).
 */
export interface ChangeMatcher {
  policyId: number;
  types: ReadonlySet<string> | null;
  holds: ChangeTest | null;
}

export function changeMatcher(policy: MatchablePolicy): ChangeMatcher {
  return {
    policyId: policy.id,
    types: policy.objectTypes.length === 0 ? null : new Set(policy.objectTypes),
    holds: policy.conditions === null ? null : compileForChanges(policy.conditions, policy.conditionState),
  };
}

/** Whether the change counts for the policy: of one of its types, and its condition set holds. */
export function countsFor(matcher: ChangeMatcher, change: MatchableChange): boolean {
  if (matcher.types !== null && !matcher.types.has(change.objectType)) return false;
  return matcher.holds === null || matcher.holds(change);
}

/** Per policy, per object type: how many of `changes` count for it (types without any left out). */
export type MatchCounts = Map<number, Map<string, number>>;

/** The counts from scratch (a rebuild, and the oracle the kept counts are tested against). */
export function countMatches(policies: readonly MatchablePolicy[], changes: readonly MatchableChange[]): MatchCounts {
  const out: MatchCounts = new Map();
  addMatches(out, policies.map(changeMatcher), changes);
  return out;
}

/** Adds what `changes` count for each matcher to `counts` (a branch counted page by page). */
export function addMatches(
  counts: MatchCounts,
  matchers: readonly ChangeMatcher[],
  changes: readonly MatchableChange[],
): void {
  for (const matcher of matchers) {
    let byType = counts.get(matcher.policyId);
    for (const change of changes) {
      if (!countsFor(matcher, change)) continue;
      if (!byType) {
        byType = new Map();
        counts.set(matcher.policyId, byType);
      }
      byType.set(change.objectType, (byType.get(change.objectType) ?? 0) + 1);
    }
  }
}

/**
 * `matchPolicies` read from counts: a policy matches through the types it has a count for; one
 * without object types and without conditions matches every branch, even one with no changes.
 * `typesWithMatches` gives, per policy id, the types whose count is above zero.
 */
export function matchesFromCounts(
  policies: readonly MatchablePolicy[],
  typesWithMatches: ReadonlyMap<number, readonly string[]>,
): PolicyMatch[] {
  const out: PolicyMatch[] = [];
  for (const policy of policies) {
    const types = typesWithMatches.get(policy.id);
    if (types && types.length > 0) out.push({ policyId: policy.id, matchedObjectTypes: [...types].sort() });
    else if (policy.objectTypes.length === 0 && policy.conditions === null)
      out.push({ policyId: policy.id, matchedObjectTypes: [] });
  }
  return out;
}

/** What a policy's counts depend on, as one string: counts computed under another are recomputed. */
export function matchingDefinition(policy: MatchablePolicy): string {
  return JSON.stringify([policy.objectTypes, policy.conditions, policy.conditionState]);
}
