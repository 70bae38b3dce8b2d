import { compiledSelect, type Ctx, type HostTables } from '../../../host';
import { ccDb, ccTables } from '../db/database';
import type { ChangeControlTables, MergeJobRow, MergeJobsTable } from '../db/tables';
import type { ExpressionBuilder, Insertable } from 'kysely';

/**
 * The merge queue as stored: the live automatic-merge jobs (`pending` or `running`), in the
 * order they were queued (their id). The order is derived from persisted rows only, so every
 * service instance sees the same queue.
 */
export const LIVE_JOB_STATES = ['pending', 'running'] as const;

/** The place of job `j` in the queue (1: the head): how many live jobs were queued no later than it. */
function placeOf(eb: ExpressionBuilder<HostTables & ChangeControlTables & { j: MergeJobsTable }, 'j'>) {
  return eb
    .selectFrom('cc_merge_jobs as ahead')
    .select((e) => e.fn.countAll<number>().as('n'))
    .where('ahead.state', 'in', [...LIVE_JOB_STATES])
    .whereRef('ahead.id', '<=', 'j.id')
    .as('position');
}

/** One request's live job with its position: the select of `queuePositions` for one id, built and compiled once (every detail read asks it). */
const positionOf = compiledSelect((db, changeRequestId: number) =>
  ccTables(db)
    .selectFrom('cc_merge_jobs as j')
    .select((eb) => [placeOf(eb)])
    .where('j.state', 'in', [...LIVE_JOB_STATES])
    .where('j.change_request_id', '=', changeRequestId),
);

/** What a request's queue position is read from. */
const QUEUE_TABLES: readonly string[] = ['cc_merge_jobs'];

/**
 * A request's position in the queue (1: the head), or null when it has no live job: kept in the
 * read memo until the queue is written (every detail read asks it; the queue rarely moves).
 */
export async function queuePositionOf(ctx: Ctx, changeRequestId: number): Promise<number | null> {
  return ctx.host.readMemo.get(
    ctx,
    `cc-queue-position|${changeRequestId}`,
    async () => {
      const row = (await positionOf(ctx.db, changeRequestId))[0];
      return row === undefined ? null : Number(row.position);
    },
    QUEUE_TABLES,
  );
}

/** Each queued request's position (1: the head), for the given requests only. */
export async function queuePositions(ctx: Ctx, changeRequestIds: readonly number[]): Promise<Map<number, number>> {
  if (changeRequestIds.length === 0) return new Map();
  const rows = await ccDb(ctx)
    .selectFrom('cc_merge_jobs as j')
    .select((eb) => ['j.change_request_id as cr', placeOf(eb)])
    .where('j.state', 'in', [...LIVE_JOB_STATES])
    .where('j.change_request_id', 'in', [...changeRequestIds])
    .execute();
  return new Map(rows.map((r) => [r.cr, Number(r.position)]));
}

/** The queue, head first: one page of it and its length. */
export async function queuePage(
  ctx: Ctx,
  limit: number,
  offset: number,
): Promise<{ count: number; rows: MergeJobRow[] }> {
  const base = ccDb(ctx)
    .selectFrom('cc_merge_jobs')
    .where('state', 'in', [...LIVE_JOB_STATES]);
  const { count } = await base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  const rows = await base.selectAll().orderBy('id').limit(limit).offset(offset).execute();
  return { count: Number(count), rows };
}

/** The oldest pending jobs, at most `limit`. */
export async function pendingJobs(ctx: Ctx, limit: number): Promise<MergeJobRow[]> {
  return ccDb(ctx)
    .selectFrom('cc_merge_jobs')
    .selectAll()
    .where('state', '=', 'pending')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** A request merged another way (by hand, by an override) leaves the queue: its pending job is done, saying how. */
export async function leaveQueue(ctx: Ctx, changeRequestId: number, detail: string, at: string): Promise<void> {
  await ccDb(ctx)
    .updateTable('cc_merge_jobs')
    .set({ state: 'completed', detail, last_updated: at })
    .where('change_request_id', '=', changeRequestId)
    .where('state', '=', 'pending')
    .execute();
}

/**
 * Claims the right to run the queue for `holder` until `expires`, in the database: one row,
 * updated only when free or when the previous claim has expired. With several service
 * instances on one database, exactly one update succeeds (the row is the lock).
 */
export async function claimQueue(ctx: Ctx, holder: string, now: string, expires: string): Promise<boolean> {
  const result = await ccDb(ctx)
    .updateTable('cc_merge_queue_claim')
    .set({ holder, expires })
    .where('id', '=', 1)
    .where((eb) => eb.or([eb('holder', 'is', null), eb('expires', '<', now), eb('holder', '=', holder)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives the claim back (only the holder's own). */
export async function releaseQueue(ctx: Ctx, holder: string): Promise<void> {
  await ccDb(ctx)
    .updateTable('cc_merge_queue_claim')
    .set({ holder: null, expires: null })
    .where('id', '=', 1)
    .where('holder', '=', holder)
    .execute();
}

/** Queues a merge job; false when the branch already has a live one (the database refuses a second). */
export async function insertMergeJob(ctx: Ctx, values: Insertable<MergeJobsTable>): Promise<boolean> {
  const inserted = await ccDb(ctx)
    .insertInto('cc_merge_jobs')
    .values(values)
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export function mergeJobRow(ctx: Ctx, id: number): Promise<MergeJobRow | undefined> {
  return ccDb(ctx).selectFrom('cc_merge_jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Sets a job's state and what it says. */
export async function setMergeJobState(
  ctx: Ctx,
  id: number,
  state: MergeJobRow['state'],
  detail: string,
  at: string,
): Promise<void> {
  await ccDb(ctx).updateTable('cc_merge_jobs').set({ state, detail, last_updated: at }).where('id', '=', id).execute();
}

/** Marks the jobs left scheduled or running as failed: the service stopped while they ran. */
export async function failInterruptedMergeJobs(ctx: Ctx, at: string): Promise<void> {
  await ccDb(ctx)
    .updateTable('cc_merge_jobs')
    .set({ state: 'failed', detail: 'interrupted: the service stopped while the merge ran', last_updated: at })
    .where('state', 'in', ['scheduled', 'running'])
    .execute();
}

/** Who holds the claim on the queue, and until when (no row: nobody ever claimed it). */
export function queueClaimRow(ctx: Ctx) {
  return ccDb(ctx)
    .selectFrom('cc_merge_queue_claim')
    .select(['holder', 'expires'])
    .where('id', '=', 1)
    .executeTakeFirst();
}
