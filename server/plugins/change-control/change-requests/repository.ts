import { compiledSelect, recordChange, type Ctx, ValidationError, grantAllows, type BranchRow } from '../../../host';
import type { ChangeRequestStatus } from '../../../../contract/api/change-control';
import { ccDb, ccTables, nowIso } from '../db/database';
import type { ChangeRequestRow, ChangeRequestsTable } from '../db/tables';
import { CHANGE_REQUEST_TYPE } from '../names';
import { announceRequestCacheWritten } from '../stream/announce';
import { displayOfChangeRequest, snapshotChangeRequest } from './snapshot';
import type { Insertable, Updateable } from 'kysely';
import { findBranch } from '../../branching';

const changeRequestById = compiledSelect((db, id: number) =>
  ccTables(db).selectFrom('cc_change_requests').selectAll().where('id', '=', id),
);

export async function getChangeRequestRow(ctx: Ctx, id: number): Promise<ChangeRequestRow | undefined> {
  return (await changeRequestById(ctx.db, id))[0];
}

/** The tables a request's row references with `on delete set null`. */
const REQUEST_ROW_PARENTS: readonly string[] = ['branches', 'users'];

/**
 * The same row, kept in the read memo until a write of its table, or of the tables whose
 * deletes clear its references (`branch_id`, `requester_id`, `override_by_id`: a cascade no
 * statement of this table says). Every detail read starts with it. Frozen: the answer is shared
 * by every read until then.
 */
export async function keptChangeRequestRow(ctx: Ctx, id: number): Promise<ChangeRequestRow | undefined> {
  return ctx.host.readMemo.get(
    ctx,
    `cc-request-row|${id}`,
    async () => {
      const row = await getChangeRequestRow(ctx, id);
      return row === undefined ? undefined : Object.freeze(row);
    },
    ['cc_change_requests', ...REQUEST_ROW_PARENTS],
  );
}

/** Stores a change request; answers the stored row. */
export function insertChangeRequest(ctx: Ctx, values: Insertable<ChangeRequestsTable>): Promise<ChangeRequestRow> {
  return ccDb(ctx).insertInto('cc_change_requests').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function deleteChangeRequestRow(ctx: Ctx, id: number): Promise<void> {
  await ccDb(ctx).deleteFrom('cc_change_requests').where('id', '=', id).execute();
}

/** Change requests by id (unknown ids are left out), by id. */
export async function changeRequestRowsByIds(ctx: Ctx, ids: readonly number[]): Promise<Map<number, ChangeRequestRow>> {
  if (ids.length === 0) return new Map();
  const rows = await ccDb(ctx)
    .selectFrom('cc_change_requests')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The change request a request body names (a review, comment or check points at it), when the
 * caller may view it; otherwise a 400 on `change_request` (a hidden request does not exist).
 */
export async function changeRequestNamedInBody(ctx: Ctx, id: number): Promise<ChangeRequestRow> {
  const cr = await getChangeRequestRow(ctx, id);
  const perms = ctx.user ? await ctx.host.permissions.forUser(ctx.user, ctx.db) : null;
  if (
    !cr ||
    !ctx.user ||
    !perms ||
    !grantAllows(perms.grant(CHANGE_REQUEST_TYPE, 'view'), snapshotChangeRequest(ctx, cr), ctx.user)
  ) {
    throw ValidationError.field('change_request', `Change request ${id} does not exist.`);
  }
  return cr;
}

/** The request's branch as the host has it now, or null once it is deleted. */
export async function branchOf(ctx: Ctx, cr: Pick<ChangeRequestRow, 'branch_id'>): Promise<BranchRow | null> {
  return cr.branch_id === null ? null : ((await findBranch(ctx, cr.branch_id)) ?? null);
}

export async function findChangeRequestForBranch(ctx: Ctx, branchId: number): Promise<ChangeRequestRow | undefined> {
  return ccDb(ctx).selectFrom('cc_change_requests').selectAll().where('branch_id', '=', branchId).executeTakeFirst();
}

/** Who requested a change request (undefined: no such request). */
export function requesterOf(ctx: Ctx, id: number): Promise<Pick<ChangeRequestRow, 'requester_id'> | undefined> {
  return ccDb(ctx).selectFrom('cc_change_requests').select(['requester_id']).where('id', '=', id).executeTakeFirst();
}

/** The approved requests with a branch that ask for automatic merge. */
export async function autoMergeCandidateIds(ctx: Ctx): Promise<number[]> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_change_requests')
    .select('id')
    .where('auto_merge', '=', 1)
    .where('status', '=', 'approved')
    .where('branch_id', 'is not', null)
    .execute();
  return rows.map((r) => r.id);
}

export async function listOpenChangeRequestIds(ctx: Ctx): Promise<number[]> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_change_requests')
    .select('id')
    .where('status', 'not in', ['completed', 'abandoned'])
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** The open change requests of these branches (asked 500 branches at a time). */
export async function openChangeRequestIdsOfBranches(ctx: Ctx, branchIds: readonly number[]): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < branchIds.length; i += 500) {
    const rows = await ccDb(ctx)
      .selectFrom('cc_change_requests')
      .select('id')
      .where('branch_id', 'in', branchIds.slice(i, i + 500))
      .where('status', 'not in', ['completed', 'abandoned'])
      .execute();
    for (const r of rows) ids.push(r.id);
  }
  return ids.sort((a, b) => a - b);
}

type Fields = Omit<Updateable<ChangeRequestsTable>, 'id' | 'created' | 'last_updated'>;

/**
 * Writes fields of a change request and records the write in the changelog (with its object
 * event). Returns the row after the write; nothing is written when nothing changes.
 */
export async function updateChangeRequest(
  ctx: Ctx,
  before: ChangeRequestRow,
  fields: Fields,
  options: { changelog?: boolean } = {},
): Promise<ChangeRequestRow> {
  const changed = Object.entries(fields).some(
    ([k, v]) => v !== undefined && (before as unknown as Record<string, unknown>)[k] !== v,
  );
  if (!changed) return before;
  // Cached values (changelog: false) are not edits of the request: they leave last_updated alone.
  const stamp = options.changelog === false ? {} : { last_updated: nowIso(ctx) };
  await ccDb(ctx)
    .updateTable('cc_change_requests')
    .set({ ...fields, ...stamp })
    .where('id', '=', before.id)
    .execute();
  const after = (await getChangeRequestRow(ctx, before.id))!;
  if (options.changelog !== false) {
    await recordChange(ctx, {
      action: 'update',
      objectType: CHANGE_REQUEST_TYPE,
      objectId: before.id,
      repr: displayOfChangeRequest(after),
      prechange: snapshotChangeRequest(ctx, before),
      postchange: snapshotChangeRequest(ctx, after),
    });
  } else {
    // No changelog entry, so no object event: the stream still hears that the request moved.
    await announceRequestCacheWritten(ctx, before.id);
  }
  return after;
}

/** Sets the status (any move: lifecycle, evaluation, merge) with its changelog entry. */
export async function writeStatus(
  ctx: Ctx,
  before: ChangeRequestRow,
  status: ChangeRequestStatus,
): Promise<ChangeRequestRow> {
  return updateChangeRequest(ctx, before, { status });
}

/**
 * Replaces who waits to review the request (a request under review, approved or with changes
 * requested; a draft or a closed request has nobody); returns who starts waiting.
 */
export async function saveOutstandingReviewers(
  ctx: Ctx,
  changeRequestId: number,
  userIds: readonly number[],
): Promise<number[]> {
  const db = ccDb(ctx);
  const before = await db
    .selectFrom('cc_outstanding_reviewers')
    .select('user_id')
    .where('change_request_id', '=', changeRequestId)
    .execute();
  const had = new Set(before.map((r) => r.user_id));
  const want = new Set(userIds);
  const added = [...want].filter((id) => !had.has(id));
  if (had.size === want.size && added.length === 0) return [];
  await db.deleteFrom('cc_outstanding_reviewers').where('change_request_id', '=', changeRequestId).execute();
  // Who waits to review shows with the request ("waiting for my review").
  await announceRequestCacheWritten(ctx, changeRequestId);
  if (want.size > 0) {
    await db
      .insertInto('cc_outstanding_reviewers')
      .values([...want].map((user_id) => ({ change_request_id: changeRequestId, user_id })))
      .execute();
  }
  return added.sort((a, b) => a - b);
}
