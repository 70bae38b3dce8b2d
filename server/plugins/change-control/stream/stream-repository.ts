import { sql } from 'kysely';
import type { StreamEventType } from '../../../../contract/api/change-control';
import { commitSignal, type CommitSignal, type Ctx, type HostServices, type VisibleIds } from '../../../host';
import { ccDb, nowIso, type CcDb } from '../db/database';
import type { StreamEventRow } from '../db/tables';
import { stateSlot } from '../state';

/**
 * The stream's events, kept in the database: written in the transaction of the change they
 * announce (so nothing is announced that did not commit), read by every open stream from its
 * own position, and kept in a bounded window so that a client can resume after a disconnect or
 * a restart of the service.
 */
export const STREAM_RETENTION = {
  /** Events older than this are pruned. */
  maxAgeMs: 24 * 60 * 60 * 1000,
  /** At most this many events are kept (the newest). */
  maxRows: 100_000,
};

/** The write path of each instance prunes every this many events it writes, so a burst never outgrows the window. */
const PRUNE_EVERY = 1000;

/** The signal that new events committed; one per service instance, heard by every instance on PostgreSQL (see `CommitSignal`). */
export function streamSignal(host: HostServices): CommitSignal {
  return stateSlot(host, 'stream-signal', () => commitSignal(host.db, 'change_control_stream', host.unawaited));
}

/**
 * The `change_request_id` of an event that names no one request but a freeze (`gate_changed`):
 * every open request the freeze applies to; its `subject` holds the freeze's scope
 * (`{"policy": id | null}`), which decides who receives it (`stream/visibility.ts`).
 */
export const FREEZE_SCOPE = 0;

export interface Announcement {
  event: StreamEventType;
  /** The change request, or FREEZE_SCOPE. */
  changeRequestId: number;
  /** What changed, as `app_label.model` and id (the change request itself for its own events). */
  objectType: string;
  objectId: number;
  /** For a deletion: the removed object's stored fields, which permission constraints are checked against. */
  subject?: Record<string, unknown> | null;
  /** Announce this event for this request at most once per transaction (later ones add nothing a client would not re-read). */
  oncePerTransaction?: boolean;
}

/** What each transaction announced so far (keys `event:request`), and whether it asked for a signal after commit. */
const announcedByTransaction = new WeakMap<object, { keys: Set<string>; signalled: boolean }>();

/** Records one stream event in the caller's transaction; open streams hear of it once the transaction commits. */
/** The id of the change request of a branch, if it has one. */
export async function changeRequestIdOfBranch(ctx: Ctx, branchId: number): Promise<number | undefined> {
  const cr = await ccDb(ctx)
    .selectFrom('cc_change_requests')
    .select('id')
    .where('branch_id', '=', branchId)
    .executeTakeFirst();
  return cr?.id;
}

export async function announce(ctx: Ctx, a: Announcement): Promise<void> {
  let seen = ctx.inTransaction ? announcedByTransaction.get(ctx.db) : undefined;
  if (ctx.inTransaction && !seen) {
    seen = { keys: new Set(), signalled: false };
    announcedByTransaction.set(ctx.db, seen);
  }
  const key = `${a.event}:${a.changeRequestId}`;
  if (a.oncePerTransaction && seen) {
    if (seen.keys.has(key)) return;
    seen.keys.add(key);
  }
  await ccDb(ctx)
    .insertInto('cc_stream_events')
    .values({
      time: nowIso(ctx),
      event: a.event,
      change_request_id: a.changeRequestId,
      object_type: a.objectType,
      object_id: a.objectId,
      subject: a.subject ? JSON.stringify(a.subject) : null,
    })
    .execute();
  const signal = streamSignal(ctx.host);
  if (!seen) await signal.notify();
  else if (!seen.signalled) {
    seen.signalled = true;
    await signal.notifyOnCommit(ctx.db, (task) => ctx.afterCommit(task));
  }
  const written = stateSlot(ctx.host, 'stream-events-written', () => ({ count: 0 }));
  if (++written.count % PRUNE_EVERY === 0) await pruneStreamEvents(ctx);
}

/** Where the stream stands: the newest id handed out, and the newest id pruned (a resume from before it missed events). */
export async function streamPosition(db: CcDb): Promise<{ last: number; prunedThrough: number }> {
  const { rows } = await sql<{ last: number | null; pruned: number }>`
    select (select max(id) from cc_stream_events) as last, (select pruned_through from cc_stream_state where id = 1) as pruned`.execute(
    db,
  );
  const pruned = rows[0]?.pruned ?? 0;
  return { last: Math.max(rows[0]?.last ?? 0, pruned), prunedThrough: pruned };
}

/**
 * Kept events after `afterId`, oldest first, only of these requests when given, and only of the
 * requests among `visible` (the caller's; null: every request) and deletions of requests (judged
 * on the deleted request's fields by the caller of this): events a caller may not see are skipped
 * by the database, whatever their number.
 */
export async function eventsAfter(
  db: CcDb,
  afterId: number,
  limit: number,
  changeRequestIds: readonly number[] | null,
  visible: VisibleIds | null = null,
): Promise<StreamEventRow[]> {
  let q = db.selectFrom('cc_stream_events').selectAll().where('id', '>', afterId);
  // A freeze's event names no request: who receives it is decided per caller (its scope).
  if (changeRequestIds) q = q.where('change_request_id', 'in', [...changeRequestIds, FREEZE_SCOPE]);
  if (visible)
    q = q.where((eb) =>
      eb.or([
        eb('change_request_id', 'in', visible),
        eb('event', '=', 'change_request_deleted'),
        eb('change_request_id', '=', FREEZE_SCOPE),
      ]),
    );
  return q.orderBy('id').limit(limit).execute();
}

/**
 * Whether a client resuming after `afterId` missed events: the first kept event after it is older
 * than the window (`maxAgeMs` before `now`), though the sweep has not pruned it yet.
 */
export async function resumesTooOld(db: CcDb, afterId: number, now: Date): Promise<boolean> {
  const next = await db
    .selectFrom('cc_stream_events')
    .select('time')
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return next !== undefined && next.time < new Date(now.getTime() - STREAM_RETENTION.maxAgeMs).toISOString();
}

/**
 * Prunes the window: events older than `maxAgeMs`, and all but the newest `maxRows`. Remembers
 * the newest id pruned, so that a client resuming from before it is told to reload (`reset`).
 */
export async function pruneStreamEvents(ctx: Ctx): Promise<number> {
  const db = ccDb(ctx);
  const cutoff = new Date(ctx.host.clock.now().getTime() - STREAM_RETENTION.maxAgeMs).toISOString();
  const { last, prunedThrough } = await streamPosition(db);
  const old = await db
    .selectFrom('cc_stream_events')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('time', '<', cutoff)
    .executeTakeFirst();
  const through = Math.max(last - STREAM_RETENTION.maxRows, Number(old?.id ?? 0));
  if (through <= prunedThrough) return 0;
  const deleted = await db.deleteFrom('cc_stream_events').where('id', '<=', through).executeTakeFirst();
  await db.updateTable('cc_stream_state').set({ pruned_through: through }).where('id', '=', 1).execute();
  return Number(deleted.numDeletedRows);
}

/**
 * Whether the caller may view an open change request a freeze of this scope applies to: any open
 * request for a global freeze (`policyId` null), else one its policy governs actively (a policy on
 * trial never freezes). Among `among` only when given (a stream of some requests); `visible` the
 * caller's requests (null: all).
 */
export async function viewsRequestOfFreezeScope(
  db: CcDb,
  policyId: number | null,
  visible: VisibleIds | null,
  among: readonly number[] | null,
): Promise<boolean> {
  let q = db
    .selectFrom('cc_change_requests as cr')
    .select('cr.id')
    .where('cr.status', 'not in', ['completed', 'abandoned']);
  if (visible) q = q.where('cr.id', 'in', visible);
  if (among) q = q.where('cr.id', 'in', among.length > 0 ? [...among] : [FREEZE_SCOPE]);
  if (policyId !== null)
    q = q.where('cr.id', 'in', (eb) =>
      eb
        .selectFrom('cc_change_request_policies as a')
        .innerJoin('cc_policies as p', 'p.id', 'a.policy_id')
        .select('a.change_request_id')
        .where('a.policy_id', '=', policyId)
        .where('p.enforcement', '<>', 'evaluate'),
    );
  return (await q.limit(1).executeTakeFirst()) !== undefined;
}
