import { sql } from 'kysely';
import type { ConditionSet, ConditionState } from '../../../../contract/api/change-control';
import type { Ctx } from '../../../host';
import { ccDb, parseJson } from '../db/database';
import type { MatchableChange, MatchablePolicy } from './matching';

/** Change rows read per page when a branch is counted whole (memory stays bounded whatever its size). */
const CHANGE_PAGE = 2000;

/** Count rows written per statement (four parameters each: far from either database's limit). */
const ROW_BATCH = 500;

/** One count: a policy, an object type, and how many of the branch's changes of it count (or by how much that moves). */
export interface MatchCountRow {
  policyId: number;
  objectType: string;
  matches: number;
}

/**
 * What matching reads of every policy, enabled or not (the counts are kept for all of them), by
 * id; reused until a policy is written (shared: read-only).
 */
export function matchingDefinitions(ctx: Ctx): Promise<readonly MatchablePolicy[]> {
  return ctx.host.readMemo.get(ctx, 'policy-matching-definitions', () => readMatchingDefinitions(ctx), ['cc_policies']);
}

async function readMatchingDefinitions(ctx: Ctx): Promise<MatchablePolicy[]> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_policies')
    .select(['id', 'object_types', 'conditions', 'condition_state'])
    .orderBy('id')
    .execute();
  return rows.map(toMatchable);
}

function toMatchable(r: {
  id: number;
  object_types: string;
  conditions: string | null;
  condition_state: string;
}): MatchablePolicy {
  return {
    id: r.id,
    objectTypes: parseJson<string[]>(r.object_types, []),
    conditions: parseJson<ConditionSet | null>(r.conditions, null),
    conditionState: r.condition_state as ConditionState,
  };
}

/** Per policy id, the object types through which it has at least one counted change in the branch. */
export async function matchedTypesOf(ctx: Ctx, branchId: number): Promise<Map<number, string[]>> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_branch_policy_matches')
    .select(['policy_id', 'object_type'])
    .where('branch_id', '=', branchId)
    .where('matches', '>', 0)
    .execute();
  const out = new Map<number, string[]>();
  for (const r of rows) {
    const list = out.get(r.policy_id);
    if (list) list.push(r.object_type);
    else out.set(r.policy_id, [r.object_type]);
  }
  return out;
}

/** Every count of a branch (for tests comparing them with a full count). */
export async function branchMatchCounts(ctx: Ctx, branchId: number): Promise<MatchCountRow[]> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_branch_policy_matches')
    .select(['policy_id', 'object_type', 'matches'])
    .where('branch_id', '=', branchId)
    .execute();
  return rows.map((r) => ({ policyId: r.policy_id, objectType: r.object_type, matches: r.matches }));
}

async function upsertCounts(
  ctx: Ctx,
  branchId: number,
  rows: readonly MatchCountRow[],
  mode: 'set' | 'add',
): Promise<void> {
  const db = ccDb(ctx);
  for (let i = 0; i < rows.length; i += ROW_BATCH) {
    await db
      .insertInto('cc_branch_policy_matches')
      .values(
        rows
          .slice(i, i + ROW_BATCH)
          .map((r) => ({ branch_id: branchId, policy_id: r.policyId, object_type: r.objectType, matches: r.matches })),
      )
      .onConflict((oc) =>
        oc.columns(['branch_id', 'policy_id', 'object_type']).doUpdateSet({
          matches:
            mode === 'set'
              ? sql<number>`excluded.matches`
              : sql<number>`cc_branch_policy_matches.matches + excluded.matches`,
        }),
      )
      .execute();
  }
}

/** Moves a branch's counts by the deltas given; counts reaching zero are deleted. */
export async function addToMatchCounts(ctx: Ctx, branchId: number, deltas: readonly MatchCountRow[]): Promise<void> {
  if (deltas.length === 0) return;
  await upsertCounts(ctx, branchId, deltas, 'add');
  if (deltas.some((d) => d.matches < 0)) {
    await ccDb(ctx)
      .deleteFrom('cc_branch_policy_matches')
      .where('branch_id', '=', branchId)
      .where('matches', '<=', 0)
      .execute();
  }
}

/** Replaces all of a branch's counts. */
export async function replaceBranchMatchCounts(
  ctx: Ctx,
  branchId: number,
  rows: readonly MatchCountRow[],
): Promise<void> {
  await dropBranchMatchCounts(ctx, branchId);
  await upsertCounts(ctx, branchId, rows, 'set');
}

export async function dropBranchMatchCounts(ctx: Ctx, branchId: number): Promise<void> {
  await ccDb(ctx).deleteFrom('cc_branch_policy_matches').where('branch_id', '=', branchId).execute();
}

/** Deletes one policy's counts in every branch. */
export async function dropPolicyMatchCounts(ctx: Ctx, policyId: number): Promise<void> {
  await ccDb(ctx).deleteFrom('cc_branch_policy_matches').where('policy_id', '=', policyId).execute();
}

/**
 * A policy's matching definition, computed by SQL from its stored columns (`p`): the object
 * types, the conditions and the condition state, as stored. Its counts are recounted when it
 * differs from the one recorded with them.
 */
const DEFINITION = sql<string>`(p.object_types || '|' || coalesce(p.conditions, 'null') || '|' || p.condition_state)`;

/** The policies whose counts were computed under another definition than theirs, or never. */
export async function stalePolicies(ctx: Ctx): Promise<MatchablePolicy[]> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_policies as p')
    .leftJoin('cc_policy_match_definitions as d', 'd.policy_id', 'p.id')
    .select(['p.id', 'p.object_types', 'p.conditions', 'p.condition_state'])
    .where(sql<boolean>`d.definition IS NULL OR d.definition <> ${DEFINITION}`)
    .orderBy('p.id')
    .execute();
  return rows.map(toMatchable);
}

/** Records that the policy's counts reflect its definition as stored now. */
export async function recordDefinition(ctx: Ctx, policyId: number): Promise<void> {
  const db = ccDb(ctx);
  await db.deleteFrom('cc_policy_match_definitions').where('policy_id', '=', policyId).execute();
  await db
    .insertInto('cc_policy_match_definitions')
    .columns(['policy_id', 'definition'])
    .expression(
      db
        .selectFrom('cc_policies as p')
        .select(['p.id', DEFINITION.as('definition')])
        .where('p.id', '=', policyId),
    )
    .execute();
}

/**
 * The enabled policies that may have no conditions (those of them naming no object type match
 * every branch): stored as NULL, or as any text without `{` (a condition set is an object; text
 * without one reads as none).
 */
export async function unconditionalPolicyIds(ctx: Ctx): Promise<number[]> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_policies')
    .select('id')
    .where('enabled', '=', 1)
    .where((eb) => eb.or([eb('conditions', 'is', null), eb('conditions', 'not like', '%{%')]))
    .execute();
  return rows.map((r) => r.id);
}

/**
 * The branches whose kept state (`keeper`) is current and that have a change of one of these
 * object types (of any type: `objectTypes` null). The others are rebuilt when next read.
 */
export async function currentBranchesTouching(
  ctx: Ctx,
  keeper: string,
  objectTypes: readonly string[] | null,
): Promise<number[]> {
  if (objectTypes !== null && objectTypes.length === 0) return [];
  let q = ctx.db
    .selectFrom('branch_changes')
    .innerJoin('branches', 'branches.id', 'branch_changes.branch_id')
    .innerJoin('branch_state_revisions as r', (j) =>
      j.onRef('r.branch_id', '=', 'branches.id').on('r.keeper', '=', keeper),
    )
    .whereRef('r.revision', '=', 'branches.changes_revision')
    .select('branch_changes.branch_id')
    .distinct();
  if (objectTypes !== null) q = q.where('branch_changes.object_type', 'in', [...objectTypes]);
  return (await q.execute()).map((r) => r.branch_id);
}

/**
 * A branch's changes as matching reads them (type, action, the two sides), page by page in id
 * order: of these object types, or of all (`objectTypes` null).
 */
export async function forEachChangePage(
  ctx: Ctx,
  branchId: number,
  objectTypes: readonly string[] | null,
  visit: (changes: MatchableChange[]) => void,
): Promise<void> {
  if (objectTypes !== null && objectTypes.length === 0) return;
  let after = 0;
  for (;;) {
    let q = ctx.db
      .selectFrom('branch_changes')
      .select(['id', 'object_type', 'action', 'original', 'modified'])
      .where('branch_id', '=', branchId)
      .where('id', '>', after);
    if (objectTypes !== null) q = q.where('object_type', 'in', [...objectTypes]);
    const rows = await q.orderBy('id').limit(CHANGE_PAGE).execute();
    if (rows.length === 0) return;
    visit(
      rows.map((r) => ({
        objectType: r.object_type,
        action: r.action,
        original: r.original === null ? null : (JSON.parse(r.original) as Record<string, unknown>),
        modified: r.modified === null ? null : (JSON.parse(r.modified) as Record<string, unknown>),
      })),
    );
    if (rows.length < CHANGE_PAGE) return;
    after = rows[rows.length - 1]!.id;
  }
}
