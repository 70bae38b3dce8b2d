import {
  inTransaction,
  type BranchChange,
  type BranchChangeWrite,
  type BranchStateKeeper,
  type Ctx,
} from '../../../host';
import { stateSlot } from '../state';
import {
  addMatches,
  changeMatcher,
  countsFor,
  matchingDefinition,
  type ChangeMatcher,
  type MatchableChange,
  type MatchablePolicy,
  type MatchCounts,
} from './matching';
import {
  addToMatchCounts,
  currentBranchesTouching,
  dropBranchMatchCounts,
  dropPolicyMatchCounts,
  forEachChangePage,
  matchingDefinitions,
  recordDefinition,
  stalePolicies,
  replaceBranchMatchCounts,
  type MatchCountRow,
} from './matches-repository';

/**
 * Policy matching kept per branch. For every branch, policy (enabled or not) and object type,
 * `cc_branch_policy_matches` holds how many of the branch's changes of that type the policy's
 * condition set holds for. A change write moves the counts of the policies whose types cover
 * the change's type (the row before and after it is evaluated, nothing else is read); a policy
 * whose matching definition moved is recomputed in the branches touching its types. Which
 * policies match a branch is then read from the counts: O(policies), whatever the branch's size.
 */
export const POLICY_MATCHES_KEEPER = 'change-control:policy-matches';

/** The tables the kept matches are read from (for the read memo). */
export const POLICY_MATCH_TABLES: readonly string[] = ['cc_branch_policy_matches', 'cc_policy_match_definitions'];

function matchable(change: BranchChange): MatchableChange {
  return { objectType: change.objectType, action: change.action, original: change.original, modified: change.modified };
}

/** Compiled matchers, kept per host while a policy's definition stays the same (regular expressions compiled once). */
function compiledMatchers(ctx: Ctx): Map<number, { definition: string; matcher: ChangeMatcher }> {
  return stateSlot(
    ctx.host,
    'policy-matchers',
    () => new Map<number, { definition: string; matcher: ChangeMatcher }>(),
  );
}

/** The matcher of a policy as read (the memoized read hands the same objects to every write of a transaction). */
const matcherByRead = new WeakMap<MatchablePolicy, ChangeMatcher>();

function matcherOf(ctx: Ctx, policy: MatchablePolicy): ChangeMatcher {
  const read = matcherByRead.get(policy);
  if (read) return read;
  const cache = compiledMatchers(ctx);
  const definition = matchingDefinition(policy);
  const kept = cache.get(policy.id);
  const matcher = kept && kept.definition === definition ? kept.matcher : changeMatcher(policy);
  if (matcher !== kept?.matcher) cache.set(policy.id, { definition, matcher });
  matcherByRead.set(policy, matcher);
  return matcher;
}

function countRows(counts: MatchCounts): MatchCountRow[] {
  const rows: MatchCountRow[] = [];
  for (const [policyId, byType] of counts)
    for (const [objectType, matches] of byType) rows.push({ policyId, objectType, matches });
  return rows;
}

/** Change rows written: the counts of the policies covering their types move by what each took and what it brings. */
async function applyWrites(ctx: Ctx, writes: readonly BranchChangeWrite[]): Promise<void> {
  const deltas = new Map<string, MatchCountRow>();
  const move = (policyId: number, objectType: string, by: number) => {
    const key = `${policyId}|${objectType}`;
    const row = deltas.get(key);
    if (row) row.matches += by;
    else deltas.set(key, { policyId, objectType, matches: by });
  };
  const policies = (await matchingDefinitions(ctx)).map((policy) => ({
    id: policy.id,
    matcher: matcherOf(ctx, policy),
  }));
  for (const write of writes) {
    const before = write.before && matchable(write.before);
    const after = write.after && matchable(write.after);
    for (const { id, matcher } of policies) {
      if (before && countsFor(matcher, before)) move(id, before.objectType, -1);
      if (after && countsFor(matcher, after)) move(id, after.objectType, +1);
    }
  }
  await addToMatchCounts(
    ctx,
    writes[0]!.branchId,
    [...deltas.values()].filter((d) => d.matches !== 0),
  );
}

/** Every count of the branch from its changes, read page by page. */
async function rebuildBranch(ctx: Ctx, branchId: number): Promise<void> {
  const matchers = (await matchingDefinitions(ctx)).map((p) => matcherOf(ctx, p));
  const counts: MatchCounts = new Map();
  if (matchers.length > 0)
    await forEachChangePage(ctx, branchId, null, (changes) => addMatches(counts, matchers, changes));
  await replaceBranchMatchCounts(ctx, branchId, countRows(counts));
}

/** The branch state keeper the plugin registers with the host. */
export function policyMatchesKeeper(): BranchStateKeeper {
  return {
    name: POLICY_MATCHES_KEEPER,
    apply: applyWrites,
    rebuild: rebuildBranch,
    drop: dropBranchMatchCounts,
  };
}

/**
 * One policy's counts recomputed in every branch touching its object types (all branches with
 * changes when it names none), from the branches' change rows of those types. Only branches
 * whose kept state is current are counted: the others are rebuilt whole when next read.
 */
async function recomputePolicy(ctx: Ctx, policy: MatchablePolicy): Promise<void> {
  await dropPolicyMatchCounts(ctx, policy.id);
  const branches = await currentBranchesTouching(
    ctx,
    POLICY_MATCHES_KEEPER,
    policy.objectTypes.length === 0 ? null : policy.objectTypes,
  );
  const matchers = [changeMatcher(policy)];
  for (const branchId of branches) {
    const counts: MatchCounts = new Map();
    await forEachChangePage(ctx, branchId, policy.objectTypes.length === 0 ? null : policy.objectTypes, (changes) =>
      addMatches(counts, matchers, changes),
    );
    const rows = countRows(counts);
    if (rows.length > 0) await addToMatchCounts(ctx, branchId, rows);
  }
  await recordDefinition(ctx, policy.id);
}

/**
 * Brings every policy's counts to its current definition: a policy created, or whose object
 * types, conditions or condition state moved since its counts were computed (through the API or
 * written by any other means), is recomputed. Enabling or disabling moves nothing (counts are
 * kept for every policy). A no-op read when nothing moved.
 */
export async function ensurePolicyMatches(ctx: Ctx): Promise<void> {
  if ((await stalePolicies(ctx)).length === 0) return;
  await inTransaction(ctx, async (tx) => {
    for (const policy of await stalePolicies(tx)) await recomputePolicy(tx, policy);
  });
}
