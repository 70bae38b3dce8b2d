import type { Preview } from '../../../../contract/api/change-control';
import { ChangeVisibility, branchChanges, type BranchRow, type Ctx } from '../../../host';
import { branchDigest } from '../../branching';
import { declaredChecks } from '../checks/declared';
import { evaluateChangeRequest, type GoverningPolicy } from '../evaluation/load';
import { presentEvaluation } from '../evaluation/present';
import { checkStates } from '../checks/state';
import { POLICY_TYPE } from '../names';
import { matchPolicies } from '../policies/matching';
import { enabledPolicyRows, loadPolicies, presentPolicy } from '../policies/repository';
import { runtime } from '../runtime';
import { applyingFreezes, enabledFreezes, freezeReason } from '../freezes/repository';
import { branchConflictsNow, namedConflictsReason } from '../gate/merge-gate';

/**
 * What would govern a branch before a change request exists: the enabled policies that match
 * it (active and evaluating), their rules and who may approve, the checks a request would carry,
 * and what would block it as it stands (no review given, no check run yet).
 *
 * It shows only what the caller may see: the branch must be viewable (404 otherwise, as for a
 * branch that does not exist); policies are matched against the changed objects the caller may
 * view only (a condition never reveals an object they cannot see); policies whose view
 * permission's constraints exclude them are left out with their rules, checks and reasons.
 */
export async function previewBranch(ctx: Ctx, branch: BranchRow): Promise<Preview> {
  const visibility = await ChangeVisibility.load(ctx);
  const changes = await visibility.filter(await branchChanges(ctx, branch.id));
  const perms = ctx.user ? await ctx.host.permissions.forUser(ctx.user, ctx.db) : null;
  const viewPolicy = `${POLICY_TYPE.split('.')[0]}.view_policy`;
  const rows = perms === null ? [] : await enabledPolicyRows(ctx);
  const visible = rows.filter((row) => perms!.allows(viewPolicy, presentPolicy(ctx, row))).map((row) => row.id);
  const policies = await loadPolicies(ctx, { ids: visible });
  const matches = matchPolicies(
    policies,
    changes.map((c) => ({ objectType: c.objectType, action: c.action, original: c.original, modified: c.modified })),
  );
  const byId = new Map(policies.map((p) => [p.id, p]));
  const governing: GoverningPolicy[] = matches.map((m) => ({
    policy: byId.get(m.policyId)!,
    matchedObjectTypes: m.matchedObjectTypes,
  }));

  // A would-be request by the caller: no reviews (id 0 names none), checks not run.
  const wouldBe = { id: 0, requester_id: ctx.user?.id ?? null, branch_id: branch.id } as const;
  const evaluation = await evaluateChangeRequest(ctx, wouldBe, governing);
  const checks = await checkStates(ctx, 0, governing, [], null);
  const panel = await presentEvaluation(ctx, wouldBe, { status: 'needs-review', evaluation, checks });
  const declared = declaredChecks(
    runtime(ctx.host).registry,
    ctx.host.config,
    governing.map((g) => ({
      checks: g.policy.checks,
      enforcement: g.policy.enforcement,
      checkSettings: g.policy.checkSettings,
    })),
  );
  const reasons: string[] = [];
  if (branch.status !== 'ready') reasons.push(`Branch "${branch.name}" is ${branch.status}.`);
  reasons.push(...evaluation.reasons);
  // A registered check runs when the request is created (not a blocker yet); a reported one waits
  // for its pipeline. What would make `mergeable` fail can be said now: conflicts with main.
  for (const c of declared)
    if (c.required && !c.registered) reasons.push(`Required check "${c.label}" waits for a report.`);
  if (branch.status === 'ready' && (await branchConflictsNow(ctx, branch)))
    reasons.push(await namedConflictsReason(ctx, branch.id));
  const now = ctx.host.clock.now();
  const policyIds = governing.filter((g) => g.policy.enforcement !== 'evaluate').map((g) => g.policy.id);
  const freezes = applyingFreezes(await enabledFreezes(ctx), policyIds, now);
  for (const f of freezes) if (f.active) reasons.push(freezeReason(f));
  return {
    branch: { id: branch.id, name: branch.name, status: branch.status },
    digest: await branchDigest(ctx, branch.id),
    policies: panel.policies,
    checks: declared.map((c) => ({
      name: c.name,
      label: c.label,
      required: c.required,
      registered: c.registered !== undefined,
      reporter_restricted: (c.reporters?.length ?? 0) > 0,
      timeout_minutes: c.timeoutMinutes ?? null,
    })),
    reasons,
    freezes,
  };
}
