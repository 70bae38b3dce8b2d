import { ensureBranchState, type Ctx } from '../../../host';
import { branchChangesView } from '../../branching';
import { parseJson } from '../db/database';
import { attachedPolicyRows, replaceAttachedPolicies } from './attached-repository';
import type { GoverningPolicy } from '../evaluation/load';
import { ensurePolicyMatches, POLICY_MATCHES_KEEPER, POLICY_MATCH_TABLES } from './kept-matches';
import { matchesFromCounts, matchPolicies, type MatchableChange } from './matching';
import { matchedTypesOf, unconditionalPolicyIds } from './matches-repository';
import { loadPolicies } from './repository';

const POLICY_TABLES = ['cc_policies', 'cc_policy_rules'];

/** What `matchBranch` reads (a cached answer around it names these too). */
export const MATCH_TABLES: readonly string[] = [
  'branches',
  'branch_changes',
  'branch_state_revisions',
  ...POLICY_MATCH_TABLES,
  ...POLICY_TABLES,
];

/** What `attachedPolicies` reads. */
export const ATTACHED_TABLES: readonly string[] = ['cc_change_request_policies', ...POLICY_TABLES];

/** The changed objects of a branch, as matching reads them. */
export async function branchMatchables(ctx: Ctx, branchId: number): Promise<MatchableChange[]> {
  return (await branchChangesView(ctx, branchId)).map((c) => ({
    objectType: c.object_type,
    action: c.action,
    original: c.original,
    modified: c.modified,
  }));
}

/**
 * The enabled policies that match what the branch touches now (the merge gate re-matches with
 * this), read from the counts kept per branch (`kept-matches.ts`): O(policies), whatever the
 * branch's size. The counts are brought up to date first when they are behind (a policy written
 * by other means, a branch seeded in bulk).
 */
export function matchBranch(ctx: Ctx, branchId: number): Promise<GoverningPolicy[]> {
  return ctx.host.readMemo.get(ctx, `branch-data:match|${branchId}`, () => matchBranchNow(ctx, branchId), MATCH_TABLES);
}

async function matchBranchNow(ctx: Ctx, branchId: number): Promise<GoverningPolicy[]> {
  await ensurePolicyMatches(ctx);
  await ensureBranchState(ctx, POLICY_MATCHES_KEEPER, branchId);
  // Only the policies with a count in the branch, and those without conditions (one naming no
  // object type matches every branch), are read.
  const types = await matchedTypesOf(ctx, branchId);
  const policies = await loadPolicies(ctx, {
    enabledOnly: true,
    ids: [...new Set([...types.keys(), ...(await unconditionalPolicyIds(ctx))])],
  });
  if (policies.length === 0) return [];
  const matches = matchesFromCounts(policies, types);
  const byId = new Map(policies.map((p) => [p.id, p]));
  return matches.map((m) => ({ policy: byId.get(m.policyId)!, matchedObjectTypes: m.matchedObjectTypes }));
}

/** `matchBranch` from every change of the branch (the full computation the kept counts are tested against). */
export async function matchBranchFully(ctx: Ctx, branchId: number): Promise<GoverningPolicy[]> {
  const policies = await loadPolicies(ctx, { enabledOnly: true });
  if (policies.length === 0) return [];
  const matches = matchPolicies(policies, await branchMatchables(ctx, branchId));
  const byId = new Map(policies.map((p) => [p.id, p]));
  return matches.map((m) => ({ policy: byId.get(m.policyId)!, matchedObjectTypes: m.matchedObjectTypes }));
}

/** The policies attached to a change request at its last refresh, by weight. */
export function attachedPolicies(ctx: Ctx, changeRequestId: number): Promise<GoverningPolicy[]> {
  return ctx.host.readMemo.get(
    ctx,
    `branch-data:attached|${changeRequestId}`,
    () => attachedPoliciesNow(ctx, changeRequestId),
    ATTACHED_TABLES,
  );
}

async function attachedPoliciesNow(ctx: Ctx, changeRequestId: number): Promise<GoverningPolicy[]> {
  const rows = await attachedPolicyRows(ctx, changeRequestId);
  if (rows.length === 0) return [];
  const types = new Map(rows.map((r) => [r.policy_id, parseJson<string[]>(r.matched_object_types, [])]));
  const policies = await loadPolicies(ctx, { ids: rows.map((r) => r.policy_id) });
  return policies.map((p) => ({ policy: p, matchedObjectTypes: types.get(p.id) ?? [] }));
}

/** Stores the attached set; returns whether any policy attached or detached. */
export async function saveAttachedPolicies(
  ctx: Ctx,
  changeRequestId: number,
  governing: readonly GoverningPolicy[],
): Promise<boolean> {
  const before = await attachedPolicyRows(ctx, changeRequestId);
  const beforeIds = new Set(before.map((r) => r.policy_id));
  const afterIds = new Set(governing.map((g) => g.policy.id));
  const moved = beforeIds.size !== afterIds.size || [...afterIds].some((id) => !beforeIds.has(id));
  const typesBefore = new Map(before.map((r) => [r.policy_id, r.matched_object_types]));
  const typesChanged = governing.some((g) => typesBefore.get(g.policy.id) !== JSON.stringify(g.matchedObjectTypes));
  if (!moved && !typesChanged) return false;
  await replaceAttachedPolicies(
    ctx,
    changeRequestId,
    governing.map((g) => ({ policy_id: g.policy.id, matched_object_types: JSON.stringify(g.matchedObjectTypes) })),
  );
  return moved;
}
