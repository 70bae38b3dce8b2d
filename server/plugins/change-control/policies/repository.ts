import { briefObject, type Ctx, tableRows, tagsOf } from '../../../host';
import type { ConditionSet } from '../../../../contract/api/change-control';
import type { CheckSettings, Policy, PolicyEnforcement, PolicyRule } from '../../../../contract/api/change-control';
import { ccDb, nowIso, parseJson, toBool } from '../db/database';
import type { PolicyRow, PolicyRuleRow } from '../db/tables';
import { MODELS, POLICY_RULE_TYPE, POLICY_TYPE } from '../names';
import type { MatchablePolicy } from './matching';

export type PolicyOut = Policy;
export type PolicyRuleOut = PolicyRule;

/** A policy with its rules, as evaluation and matching read it. */
export interface PolicyWithRules extends MatchablePolicy {
  name: string;
  enabled: boolean;
  weight: number;
  checks: string[];
  enforcement: PolicyEnforcement;
  checkSettings: Record<string, CheckSettings>;
  rules: RuleDef[];
}

export interface RuleDef {
  id: number;
  policyId: number;
  name: string;
  minReviews: number;
  userIds: number[];
  groupIds: number[];
}

/** A policy row's JSON columns, read the same way for the API and for evaluation. */
function policyJson(row: PolicyRow) {
  return {
    objectTypes: parseJson<string[]>(row.object_types, []),
    conditions: parseJson<ConditionSet | null>(row.conditions, null),
    checks: parseJson<string[]>(row.checks, []),
    checkSettings: parseJson<Record<string, CheckSettings>>(row.check_settings, {}),
  };
}

export function presentPolicy(ctx: Ctx, row: PolicyRow): PolicyOut {
  const stored = policyJson(row);
  return {
    tags: [],
    ...briefObject(ctx, MODELS.policy.path, row.id, row.name),
    name: row.name,
    description: row.description,
    enabled: toBool(row.enabled),
    weight: row.weight,
    object_types: stored.objectTypes,
    conditions: stored.conditions,
    condition_state: row.condition_state,
    checks: stored.checks,
    enforcement: row.enforcement,
    check_settings: stored.checkSettings,
    comments: row.comments,
    custom_fields: parseJson<Record<string, unknown>>(row.custom_fields, {}),
    created: row.created,
    last_updated: row.last_updated,
  };
}

export function presentRule(ctx: Ctx, row: PolicyRuleRow): PolicyRuleOut {
  return {
    tags: [],
    ...briefObject(ctx, MODELS.policyRule.path, row.id, row.name),
    policy: row.policy_id,
    name: row.name,
    min_reviews: row.min_reviews,
    groups: parseJson<number[]>(row.groups, []),
    users: parseJson<number[]>(row.users, []),
    custom_fields: parseJson<Record<string, unknown>>(row.custom_fields, {}),
    created: row.created,
    last_updated: row.last_updated,
  };
}

export function ruleDef(row: PolicyRuleRow): RuleDef {
  return {
    id: row.id,
    policyId: row.policy_id,
    name: row.name,
    minReviews: row.min_reviews,
    userIds: parseJson<number[]>(row.users, []),
    groupIds: parseJson<number[]>(row.groups, []),
  };
}

function withRules(row: PolicyRow, rules: PolicyRuleRow[]): PolicyWithRules {
  return {
    id: row.id,
    name: row.name,
    enabled: toBool(row.enabled),
    weight: row.weight,
    conditionState: row.condition_state,
    enforcement: row.enforcement,
    ...policyJson(row),
    rules: rules.filter((r) => r.policy_id === row.id).map(ruleDef),
  };
}

/** Policies with their rules, ordered by weight then id; all of them, or the ids given. */
export async function loadPolicies(
  ctx: Ctx,
  options: { enabledOnly?: boolean; ids?: readonly number[] } = {},
): Promise<PolicyWithRules[]> {
  const db = ccDb(ctx);
  let q = db.selectFrom('cc_policies').selectAll();
  if (options.enabledOnly) q = q.where('enabled', '=', 1);
  if (options.ids) {
    if (options.ids.length === 0) return [];
    q = q.where('id', 'in', [...options.ids]);
  }
  const rows = await q.orderBy('weight').orderBy('id').execute();
  if (rows.length === 0) return [];
  const rules = await db
    .selectFrom('cc_policy_rules')
    .selectAll()
    .where(
      'policy_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('id')
    .execute();
  return rows.map((r) => withRules(r, rules));
}

/** The enabled policies' rows (unordered). */
export function enabledPolicyRows(ctx: Ctx): Promise<PolicyRow[]> {
  return ccDb(ctx).selectFrom('cc_policies').selectAll().where('enabled', '=', 1).execute();
}

/** Policies by id: read, exists, name taken, insert, update, delete. */
export const policyTable = tableRows(ccDb, 'cc_policies');

/** Policy rules by id: read, insert, update, delete (a rule's name is unique within its policy: `ruleNameTaken`). */
export const ruleTable = tableRows(ccDb, 'cc_policy_rules');

/** Whether another rule of the policy than `exceptId` holds this name. */
export async function ruleNameTaken(ctx: Ctx, policyId: number, name: string, exceptId?: number): Promise<boolean> {
  let q = ccDb(ctx)
    .selectFrom('cc_policy_rules')
    .select('id')
    .where('policy_id', '=', policyId)
    .where('name', '=', name);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** The change requests attached to the policy (the set it governs now). */
export async function requestsGovernedBy(ctx: Ctx, policyId: number): Promise<number[]> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_change_request_policies')
    .select('change_request_id')
    .where('policy_id', '=', policyId)
    .execute();
  return rows.map((r) => r.change_request_id);
}

/** The open change requests attached to the policy, by id. */
export function openRequestsGovernedBy(ctx: Ctx, policyId: number) {
  return ccDb(ctx)
    .selectFrom('cc_change_request_policies as crp')
    .innerJoin('cc_change_requests as cr', 'cr.id', 'crp.change_request_id')
    .select(['cr.id', 'cr.title', 'cr.branch_name', 'cr.ref', 'cr.status'])
    .where('crp.policy_id', '=', policyId)
    .where('cr.status', 'not in', ['completed', 'abandoned'])
    .orderBy('cr.id')
    .execute();
}

/** Every check name some enabled policy names. */
export async function policyCheckNames(ctx: Ctx): Promise<Set<string>> {
  const rows = await ccDb(ctx).selectFrom('cc_policies').select('checks').where('enabled', '=', 1).execute();
  return new Set(rows.flatMap((r) => parseJson<string[]>(r.checks, [])));
}

export function touch(ctx: Ctx): { last_updated: string } {
  return { last_updated: nowIso(ctx) };
}

/** Policies with their tags. */
export async function withPolicyTags(ctx: Ctx, items: PolicyOut[]): Promise<PolicyOut[]> {
  const tags = await tagsOf(
    ctx,
    POLICY_TYPE,
    items.map((p) => p.id),
  );
  return items.map((p) => ({ ...p, tags: tags.get(p.id) ?? [] }));
}

/** Rules with their tags. */
export async function withRuleTags(ctx: Ctx, items: PolicyRuleOut[]): Promise<PolicyRuleOut[]> {
  const tags = await tagsOf(
    ctx,
    POLICY_RULE_TYPE,
    items.map((r) => r.id),
  );
  return items.map((r) => ({ ...r, tags: tags.get(r.id) ?? [] }));
}
