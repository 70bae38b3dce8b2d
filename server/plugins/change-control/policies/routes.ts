import type { z } from 'zod';
import {
  CONDITION_OPS,
  policy as policyOutput,
  policyRule as policyRuleOutput,
  policyRuleWrite,
  policyWrite,
} from '../../../../contract/api/change-control';
import {
  branchesTouching,
  clearTags,
  conditionSetProblem,
  Conflict,
  givenFields,
  recordChange,
  setTags,
  type Ctx,
  ValidationError,
  type Host,
  requireExistingIds,
} from '../../../host';
import { presentedById, registerResource, type QueryParams } from '../../../host/http';
import { policyList, ruleList } from './list';
import { requestRefresh, requestRefreshOfOpen } from '../change-requests/refresh';
import { ensurePolicyMatches } from './kept-matches';
import { openChangeRequestIdsOfBranches } from '../change-requests/repository';
import { visibleRequestsAmong } from '../change-requests/visibility-repository';
import { fromBool, nowIso } from '../db/database';
import { CHANGE_REQUEST_TYPE, MODELS, POLICY_RULE_TYPE, POLICY_TYPE } from '../names';
import {
  openRequestsGovernedBy,
  policyTable,
  presentPolicy,
  presentRule,
  requestsGovernedBy,
  ruleNameTaken,
  ruleTable,
  withPolicyTags,
  withRuleTags,
} from './repository';

type PolicyWrite = z.infer<typeof policyWrite>;
type RuleWrite = z.infer<typeof policyRuleWrite>;

function validatePolicy(ctx: Ctx, input: Partial<PolicyWrite>): void {
  for (const type of input.object_types ?? []) {
    if (!ctx.host.objectTypes.has(type)) throw ValidationError.field('object_types', `Unknown object type "${type}".`);
  }
  if (input.conditions) {
    const problem = conditionSetProblem(input.conditions, CONDITION_OPS);
    if (problem) throw ValidationError.field('conditions', problem);
  }
}

async function requireUniquePolicyName(ctx: Ctx, name: string, exceptId?: number): Promise<void> {
  if (await policyTable.taken(ctx, 'name', name, exceptId))
    throw ValidationError.field('name', 'A policy with this name already exists.');
}

const dedupe = (names: readonly string[]): string[] => [...new Set(names)];

function policyColumns(input: Partial<PolicyWrite>) {
  return {
    ...givenFields(input, ['name', 'description', 'weight', 'condition_state', 'enforcement', 'comments']),
    ...(input.enabled !== undefined ? { enabled: fromBool(input.enabled) } : {}),
    ...(input.object_types !== undefined ? { object_types: JSON.stringify(dedupe(input.object_types)) } : {}),
    ...(input.conditions !== undefined
      ? { conditions: input.conditions === null ? null : JSON.stringify(input.conditions) }
      : {}),
    // A write replaces the whole list.
    ...(input.checks !== undefined ? { checks: JSON.stringify(dedupe(input.checks)) } : {}),
    ...(input.check_settings !== undefined ? { check_settings: JSON.stringify(input.check_settings) } : {}),
    // The whole object: a write replaces it.
    ...(input.custom_fields !== undefined ? { custom_fields: JSON.stringify(input.custom_fields) } : {}),
  };
}

/** `check_settings` names only checks of the policy (its `checks` after the write), and existing users and groups. */
async function validateCheckSettings(
  ctx: Ctx,
  input: Partial<PolicyWrite>,
  existingChecks: readonly string[],
): Promise<void> {
  if (!input.check_settings) return;
  const checks = new Set(input.checks ?? existingChecks);
  for (const [name, settings] of Object.entries(input.check_settings)) {
    if (!checks.has(name))
      throw ValidationError.field('check_settings', `"${name}" is not one of the policy's checks.`);
    await requireExistingIds(ctx, 'users', 'check_settings', settings.reporter?.users ?? []);
    await requireExistingIds(ctx, 'groups', 'check_settings', settings.reporter?.groups ?? []);
  }
}

/** How many governed requests a 409 names (the count says how many there are). */
const NAMED_IN_REFUSAL = 20;

const FORCE_DOC = [
  {
    name: 'force',
    description: 'true: delete even though open change requests are governed by it; they are detached and refreshed.',
  },
];

function forced(query: QueryParams): boolean {
  const raw = query.force?.[0];
  if (raw === undefined || raw === '') return false;
  const v = raw.toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw ValidationError.field('force', `"${raw}" is not a valid boolean (use true or false).`);
}

/**
 * Deleting what governs open change requests: refused (409 naming those the caller may view, at
 * most NAMED_IN_REFUSAL, with the count of all) unless forced; forced, each request records in its
 * changelog what was detached and by whom. Returns the open requests concerned.
 */
async function guardGoverned(ctx: Ctx, what: string, policyId: number, query: QueryParams): Promise<number[]> {
  const rows = await openRequestsGovernedBy(ctx, policyId);
  if (rows.length === 0) return [];
  const force = forced(query);
  if (!force) {
    // A request the caller may not view is counted, never named.
    const visible = await visibleRequestsAmong(
      ctx,
      rows.map((r) => r.id),
    );
    const shown = rows.filter((r) => visible.has(r.id)).slice(0, NAMED_IN_REFUSAL);
    const hidden = rows.length - visible.size;
    const unnamed = visible.size - shown.length;
    const named = shown.map((r) => `#${r.id}`).join(', ');
    const tails = [
      ...(unnamed > 0 ? [`${unnamed} more`] : []),
      ...(hidden > 0 ? [`${hidden} ${named || unnamed > 0 ? 'more ' : ''}you cannot view`] : []),
    ];
    const words = named ? [named, ...tails].join(' and ') : tails.join(' and ');
    throw new Conflict(
      `${what} governs ${rows.length} open change request${rows.length === 1 ? '' : 's'} (${words}); delete with ?force=true to detach it and refresh them.`,
      { change_requests: shown.map((r) => r.id), count: rows.length },
    );
  }
  for (const r of rows) {
    await recordChange(ctx, {
      action: 'update',
      objectType: CHANGE_REQUEST_TYPE,
      objectId: r.id,
      repr: r.title || r.branch_name,
      prechange: { governed_by: what },
      postchange: { detached: what, forced_by: ctx.user?.username ?? null },
    });
  }
  return rows.map((r) => r.id);
}

async function refreshGovernedBy(ctx: Ctx, policyId: number): Promise<void> {
  for (const id of await requestsGovernedBy(ctx, policyId)) await requestRefresh(ctx, id, { rematch: false });
}

/**
 * Trigger 4 after a policy is created or edited: re-match the open requests it can move, those
 * whose branches touch one of its object types (before or after the write) and those it
 * governs now. A policy cannot match a branch that touches none of its types, so no other
 * request can gain or lose it. A policy naming no type can match any branch: then every open
 * request is re-matched.
 */
async function refreshAfterPolicyWrite(ctx: Ctx, policyId: number, typeLists: readonly string[][]): Promise<void> {
  if (typeLists.some((types) => types.length === 0)) {
    await requestRefreshOfOpen(ctx, { rematch: true });
    return;
  }
  const branches = await branchesTouching(ctx, [...new Set(typeLists.flat())]);
  const ids = new Set([
    ...(await requestsGovernedBy(ctx, policyId)),
    ...(await openChangeRequestIdsOfBranches(ctx, branches)),
  ]);
  for (const id of [...ids].sort((a, b) => a - b)) await requestRefresh(ctx, id, { rematch: true });
}

async function policyTypes(ctx: Ctx, id: number): Promise<string[]> {
  const row = await policyTable.byId(ctx, id);
  return row ? (JSON.parse(row.object_types) as string[]) : [];
}

async function validateRule(ctx: Ctx, input: Partial<RuleWrite>, policyId: number, exceptId?: number): Promise<void> {
  if (!(await policyTable.exists(ctx, policyId)))
    throw ValidationError.field('policy', `Policy ${policyId} does not exist.`);
  if (input.name !== undefined) {
    if (await ruleNameTaken(ctx, policyId, input.name, exceptId))
      throw ValidationError.field('name', 'This policy already has a rule with this name.');
  }
  await requireExistingIds(ctx, 'users', 'users', input.users ?? []);
  await requireExistingIds(ctx, 'groups', 'groups', input.groups ?? []);
}

function ruleColumns(input: Partial<RuleWrite>) {
  return {
    ...(input.policy !== undefined ? { policy_id: input.policy } : {}),
    ...givenFields(input, ['name', 'min_reviews']),
    ...(input.users !== undefined ? { users: JSON.stringify(dedupe(input.users.map(String)).map(Number)) } : {}),
    ...(input.groups !== undefined ? { groups: JSON.stringify(dedupe(input.groups.map(String)).map(Number)) } : {}),
    ...(input.custom_fields !== undefined ? { custom_fields: JSON.stringify(input.custom_fields) } : {}),
  };
}

/** One policy, one policy rule, as the API shows them (with their tags). */
const getPolicy = presentedById(
  policyTable.byId,
  async (ctx, row) => (await withPolicyTags(ctx, [presentPolicy(ctx, row)]))[0],
);
const getRule = presentedById(
  ruleTable.byId,
  async (ctx, row) => (await withRuleTags(ctx, [presentRule(ctx, row)]))[0],
);

/** `policies/` and `policy-rules/`. Every write re-matches or re-evaluates the requests it can move. */
export function registerPolicyRoutes(host: Host): void {
  registerResource(host.routes, {
    tag: 'change-control',
    objectType: POLICY_TYPE,
    path: MODELS.policy.path,
    output: policyOutput,
    list: policyList,
    get: getPolicy,
    create: {
      body: policyWrite,
      run: async (ctx, input: PolicyWrite) => {
        validatePolicy(ctx, input);
        await validateCheckSettings(ctx, input, []);
        await requireUniquePolicyName(ctx, input.name);
        const now = nowIso(ctx);
        const id = await policyTable.insert(ctx, {
          name: input.name,
          description: '',
          enabled: 1,
          weight: 1000,
          object_types: '[]',
          conditions: null,
          condition_state: 'either',
          checks: '[]',
          comments: '',
          ...policyColumns(input),
          created: now,
          last_updated: now,
        });
        if (input.tags !== undefined) await setTags(ctx, POLICY_TYPE, id, input.tags);
        // Its counts in the branches touching its types, before any request is re-matched.
        await ensurePolicyMatches(ctx);
        await refreshAfterPolicyWrite(ctx, id, [await policyTypes(ctx, id)]);
        return id;
      },
    },
    update: {
      body: policyWrite.partial(),
      put: policyWrite,
      run: async (ctx, existing, input: Partial<PolicyWrite>) => {
        validatePolicy(ctx, input);
        await validateCheckSettings(ctx, input, existing.checks);
        if (input.name !== undefined) await requireUniquePolicyName(ctx, input.name, existing.id);
        const before = await policyTypes(ctx, existing.id);
        await policyTable.update(ctx, existing.id, { ...policyColumns(input), last_updated: nowIso(ctx) });
        if (input.tags !== undefined) await setTags(ctx, POLICY_TYPE, existing.id, input.tags);
        // Recounted only when its types, conditions or condition state moved.
        await ensurePolicyMatches(ctx);
        await refreshAfterPolicyWrite(ctx, existing.id, [before, await policyTypes(ctx, existing.id)]);
      },
    },
    removeQuery: FORCE_DOC,
    remove: async (ctx, existing, query) => {
      await guardGoverned(ctx, `Policy "${existing.name}"`, existing.id, query);
      // The requests it governed lose it: trigger 4 (a policy detaches) for each.
      const governed = await requestsGovernedBy(ctx, existing.id);
      await policyTable.remove(ctx, existing.id);
      await clearTags(ctx, POLICY_TYPE, existing.id);
      // A policy that is gone matches nothing: no other request can move.
      for (const id of governed) await requestRefresh(ctx, id, { rematch: true, checks: true });
    },
  });

  registerResource(host.routes, {
    tag: 'change-control',
    objectType: POLICY_RULE_TYPE,
    path: MODELS.policyRule.path,
    output: policyRuleOutput,
    list: ruleList,
    get: getRule,
    create: {
      body: policyRuleWrite,
      run: async (ctx, input: RuleWrite) => {
        await validateRule(ctx, input, input.policy);
        const now = nowIso(ctx);
        const id = await ruleTable.insert(ctx, {
          policy_id: input.policy,
          name: input.name,
          min_reviews: 1,
          users: '[]',
          groups: '[]',
          ...ruleColumns(input),
          created: now,
          last_updated: now,
        });
        await refreshGovernedBy(ctx, input.policy);
        if (input.tags !== undefined) await setTags(ctx, POLICY_RULE_TYPE, id, input.tags);
        return id;
      },
    },
    update: {
      body: policyRuleWrite.partial(),
      put: policyRuleWrite,
      run: async (ctx, existing, input: Partial<RuleWrite>) => {
        const policyId = input.policy ?? existing.policy;
        await validateRule(ctx, input, policyId, existing.id);
        if (input.policy !== undefined && input.name === undefined)
          await validateRule(ctx, { name: existing.name }, policyId, existing.id);
        await ruleTable.update(ctx, existing.id, { ...ruleColumns(input), last_updated: nowIso(ctx) });
        if (input.tags !== undefined) await setTags(ctx, POLICY_RULE_TYPE, existing.id, input.tags);
        await refreshGovernedBy(ctx, existing.policy);
        if (policyId !== existing.policy) await refreshGovernedBy(ctx, policyId);
      },
    },
    removeQuery: FORCE_DOC,
    remove: async (ctx, existing, query) => {
      await guardGoverned(ctx, `Rule "${existing.name}"`, existing.policy, query);
      await ruleTable.remove(ctx, existing.id);
      await clearTags(ctx, POLICY_RULE_TYPE, existing.id);
      await refreshGovernedBy(ctx, existing.policy);
    },
  });
}
