import type { Ctx } from '../../../host';
import { ccDb } from '../db/database';
import type { MergeCheckRow } from '../db/tables';

/**
 * What the gate's clock reads: the next instant at which time alone moves a request's gate (a
 * check's deadline, a change window opening or closing), each the first row of an index, never
 * a scan of the requests; and which requests an instant concerns.
 */
const CLOSED = ['completed', 'abandoned'] as const;

/** The earliest deadline of a pending check (one that passed included: it is due now), or null. */
export async function earliestCheckDeadline(ctx: Ctx): Promise<string | null> {
  const row = await ccDb(ctx)
    .selectFrom('cc_merge_checks')
    .select('deadline')
    .where('status', '=', 'pending')
    .where('deadline', 'is not', null)
    .orderBy('deadline')
    .limit(1)
    .executeTakeFirst();
  return row?.deadline ?? null;
}

/** The earliest start or end of an open request's change window after `after`, or null. */
export async function nextWindowInstant(ctx: Ctx, after: string): Promise<string | null> {
  const db = ccDb(ctx);
  const start = await db
    .selectFrom('cc_change_requests')
    .select('scheduled_start as at')
    .where('scheduled_start', '>', after)
    .where('status', 'not in', [...CLOSED])
    .orderBy('scheduled_start')
    .limit(1)
    .executeTakeFirst();
  const end = await db
    .selectFrom('cc_change_requests')
    .select('scheduled_end as at')
    .where('scheduled_end', '>', after)
    .where('status', 'not in', [...CLOSED])
    .orderBy('scheduled_end')
    .limit(1)
    .executeTakeFirst();
  const found = [start?.at, end?.at].filter((t): t is string => typeof t === 'string').sort();
  return found[0] ?? null;
}

/** The open requests whose change window opened or closed in (`from`, `to`] (two index ranges), and which of them opened. */
export async function windowsCrossed(
  ctx: Ctx,
  from: string,
  to: string,
): Promise<Array<{ id: number; opened: boolean }>> {
  const db = ccDb(ctx);
  const opened = await db
    .selectFrom('cc_change_requests')
    .select('id')
    .where('scheduled_start', '>', from)
    .where('scheduled_start', '<=', to)
    .where('status', 'not in', [...CLOSED])
    .execute();
  const closed = await db
    .selectFrom('cc_change_requests')
    .select('id')
    .where('scheduled_end', '>', from)
    .where('scheduled_end', '<=', to)
    .where('status', 'not in', [...CLOSED])
    .execute();
  const out = new Map<number, boolean>();
  for (const r of closed) out.set(r.id, false);
  for (const r of opened) out.set(r.id, true);
  return [...out].sort((a, b) => a[0] - b[0]).map(([id, o]) => ({ id, opened: o }));
}

/** Pending checks whose deadline has come (at most `limit`, earliest first). */
export async function overdueChecks(ctx: Ctx, now: string, limit: number): Promise<MergeCheckRow[]> {
  return ccDb(ctx)
    .selectFrom('cc_merge_checks')
    .selectAll()
    .where('status', '=', 'pending')
    .where('deadline', '<=', now)
    .orderBy('deadline')
    .limit(limit)
    .execute();
}

/**
 * Sets a pending check to its timeout's failure, only while it is pending with this deadline:
 * false when another writer (a report, another instance's clock) got there first.
 */
export async function expireCheck(
  ctx: Ctx,
  row: Pick<MergeCheckRow, 'id' | 'change_request_id' | 'deadline'>,
  fields: Pick<MergeCheckRow, 'summary' | 'completed' | 'last_updated'>,
): Promise<boolean> {
  if (row.deadline === null) return false;
  const result = await ccDb(ctx)
    .updateTable('cc_merge_checks')
    .set({ ...fields, status: 'failure', timed_out: 1, deadline: null })
    .where('id', '=', row.id)
    .where('change_request_id', '=', row.change_request_id)
    .where('status', '=', 'pending')
    .where('deadline', '=', row.deadline)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Sets the deadline of one pending check (null: none). */
export async function setCheckDeadline(
  ctx: Ctx,
  row: Pick<MergeCheckRow, 'id' | 'change_request_id'>,
  deadline: string | null,
): Promise<void> {
  await ccDb(ctx)
    .updateTable('cc_merge_checks')
    .set({ deadline })
    .where('id', '=', row.id)
    .where('change_request_id', '=', row.change_request_id)
    .execute();
}

/**
 * Takes the announcing of (`previous`, `through`] for this caller: the one row moves from what
 * it read to `through`, only if nobody moved it since. With several instances on one database
 * exactly one succeeds for each stretch of time (on PostgreSQL the second update waits for the
 * first and then finds the row moved).
 */
export async function claimAnnouncing(ctx: Ctx, previous: string | null, through: string): Promise<boolean> {
  const result = await ccDb(ctx)
    .updateTable('cc_gate_clock')
    .set({ announced_through: through })
    .where('id', '=', 1)
    .where((eb) => (previous === null ? eb('announced_through', 'is', null) : eb('announced_through', '=', previous)))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Up to which instant the time-driven changes were announced (null: never). */
export async function announcedThrough(ctx: Ctx): Promise<string | null> {
  const row = await ccDb(ctx)
    .selectFrom('cc_gate_clock')
    .select('announced_through')
    .where('id', '=', 1)
    .executeTakeFirst();
  return row?.announced_through ?? null;
}
