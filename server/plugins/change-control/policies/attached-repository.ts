import type { Ctx } from '../../../host';
import { ccDb, jsonArrayHasAny } from '../db/database';

/** A policy attached to a change request, with the object types (JSON) through which it matched. */
export interface AttachedPolicyRow {
  policy_id: number;
  matched_object_types: string;
}

/** The policies attached to a change request at its last refresh (unordered). */
export function attachedPolicyRows(ctx: Ctx, changeRequestId: number): Promise<AttachedPolicyRow[]> {
  return ccDb(ctx)
    .selectFrom('cc_change_request_policies')
    .select(['policy_id', 'matched_object_types'])
    .where('change_request_id', '=', changeRequestId)
    .execute();
}

/** Replaces the policies attached to a change request. */
export async function replaceAttachedPolicies(
  ctx: Ctx,
  changeRequestId: number,
  rows: readonly AttachedPolicyRow[],
): Promise<void> {
  const db = ccDb(ctx);
  await db.deleteFrom('cc_change_request_policies').where('change_request_id', '=', changeRequestId).execute();
  if (rows.length > 0) {
    await db
      .insertInto('cc_change_request_policies')
      .values(
        rows.map((r) => ({
          change_request_id: changeRequestId,
          policy_id: r.policy_id,
          matched_object_types: r.matched_object_types,
        })),
      )
      .execute();
  }
}

/** The policies attached to these change requests, by weight then id (none for no ids). */
export async function attachedPolicySummaries(ctx: Ctx, changeRequestIds: readonly number[]) {
  if (changeRequestIds.length === 0) return [];
  return ccDb(ctx)
    .selectFrom('cc_change_request_policies')
    .innerJoin('cc_policies', 'cc_policies.id', 'cc_change_request_policies.policy_id')
    .select([
      'cc_change_request_policies.change_request_id as cr',
      'cc_policies.id as id',
      'cc_policies.name as name',
      'cc_policies.weight as weight',
      'cc_policies.enforcement as enforcement',
      'cc_change_request_policies.matched_object_types as types',
    ])
    .where('cc_change_request_policies.change_request_id', 'in', [...changeRequestIds])
    .orderBy('cc_policies.weight')
    .orderBy('cc_policies.id')
    .execute();
}

/** The open change requests with an attached policy whose rule names one of these users or groups. */
export async function openRequestsGovernedByPeople(
  ctx: Ctx,
  userIds: readonly number[],
  groupIds: readonly number[],
): Promise<number[]> {
  const db = ccDb(ctx);
  const conditions = [
    ...(userIds.length ? [jsonArrayHasAny(db, 'cc_policy_rules.users', [...userIds])] : []),
    ...(groupIds.length ? [jsonArrayHasAny(db, 'cc_policy_rules.groups', [...groupIds])] : []),
  ];
  if (conditions.length === 0) return [];
  const rows = await db
    .selectFrom('cc_change_request_policies')
    .innerJoin('cc_change_requests', 'cc_change_requests.id', 'cc_change_request_policies.change_request_id')
    .select('cc_change_requests.id as id')
    .distinct()
    .where('cc_change_requests.status', 'not in', ['completed', 'abandoned'])
    .where(
      'cc_change_request_policies.policy_id',
      'in',
      db
        .selectFrom('cc_policy_rules')
        .select('policy_id')
        .where((eb) => eb.or(conditions)),
    )
    .execute();
  return rows.map((r) => r.id);
}
