import {
  createCtx,
  inTransaction,
  recordChange,
  type BackgroundTask,
  type ClockTimer,
  type Ctx,
  type HostServices,
} from '../../../host';
import { requestRefresh } from '../change-requests/refresh';
import { deadlineOf } from '../checks/deadlines';
import { snapshotCheck } from '../checks/present';
import { declaredFor } from '../checks/state';
import { freezeChangedBetween, nextFreezeChange } from '../freezes/calendar';
import { enabledFreezes } from '../freezes/repository';
import { MERGE_CHECK_TYPE } from '../names';
import { attachedPolicies } from '../policies/governing';
import { stateSlot } from '../state';
import { announceFreezeChanged, announceGateChanged } from '../stream/announce';
import { drainMergeQueue, sweepAutoMerge } from './auto-merge';
import { onTimeMoved } from './clock-signal';
import {
  announcedThrough,
  claimAnnouncing,
  earliestCheckDeadline,
  expireCheck,
  nextWindowInstant,
  overdueChecks,
  setCheckDeadline,
  windowsCrossed,
} from './gate-clock-repository';
import { checkRowsOf, requestsWithPendingReportedChecks } from '../checks/repository';

/**
 * The gate's clock: time alone moves a request's gate when a freeze begins or ends (or comes
 * within its notice days), a change window opens or closes, or a pending check reaches its
 * deadline. At that instant the service says so on the event stream, as a write would:
 *
 * - One timer, for the next such instant: the earliest deadline of a pending check and the
 *   earliest window start or end after now are each the first row of an index; the freezes are a
 *   short table whose periods are computed. Never a timer per request, never a scan per tick. The
 *   timer waits at most `MAX_WAIT_MS`, so an instant another instance's write brought forward
 *   is found within that time even if that instance stops; a write on this instance that may
 *   bring one forward (a freeze, a window, a deadline: `timeMoved`) reads it again at once.
 * - At the instant, overdue checks fail as never reported (each in its own transaction, only
 *   while still pending with that deadline: a report or another instance may get there first),
 *   with their changelog entry and the refresh of their request, whose events follow.
 * - Windows and freezes write nothing: the gate is computed at the time of asking. Their events
 *   are announced once for each stretch of time (`cc_gate_clock`, claimed in the database, so of
 *   several instances exactly one announces it): `gate_changed` naming each request whose
 *   window opened or closed, and one `gate_changed` per freeze that changed, naming the freeze,
 *   for every open request it applies to (stream/visibility.ts decides who receives it), not
 *   one event per request (a global freeze concerns them all).
 * - A window that opened or a freeze that ended may let requests set to merge automatically go:
 *   the automatic-merge sweep runs then, by the instance that announced it.
 */
export const MAX_WAIT_MS = 60_000;
/** Overdue checks expired per round (more wait for the next round, at once). */
const EXPIRE_BATCH = 200;

export class GateClock {
  private timer: ClockTimer | null = null;
  /** The instant the timer is set for. */
  private armedFor: number | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = true;
  private rearmQueued = false;
  /** Before this instance announced anything on a new database, it announces what happens after its start. */
  private startedAt = '';

  constructor(private readonly host: HostServices) {}

  private ctx(what: string): Ctx {
    return createCtx({ host: this.host, user: null, requestId: `gate-clock-${what}`, baseUrl: '' });
  }

  start(): void {
    this.stopped = false;
    this.startedAt = this.host.clock.now().toISOString();
    onTimeMoved(this.host, () => this.rearm());
    this.run(async () => {
      await this.resetDeadlines();
      await this.tick();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    onTimeMoved(this.host, null);
    this.timer?.cancel();
    this.timer = null;
    await this.chain;
  }

  /** The instant the timer waits for (null when stopped). */
  get nextInstant(): Date | null {
    return this.armedFor === null ? null : new Date(this.armedFor);
  }

  /** Reads the next instant again (after a write that may have brought one forward); calls made together read once. */
  rearm(): void {
    if (this.stopped || this.rearmQueued) return;
    this.rearmQueued = true;
    this.run(async () => {
      this.rearmQueued = false;
      await this.arm();
    });
  }

  private run(work: () => Promise<void>): void {
    this.chain = this.host.unawaited.run(
      this.chain.then(work).catch((err) => this.host.log.error(`gate clock: ${(err as Error).stack ?? String(err)}`)),
    );
  }

  /** The next instant at which time moves some gate, or null. */
  async nextChange(now: Date): Promise<Date | null> {
    const ctx = this.ctx('next');
    const found: number[] = [];
    const deadline = await earliestCheckDeadline(ctx);
    if (deadline) found.push(Date.parse(deadline));
    const window = await nextWindowInstant(ctx, now.toISOString());
    if (window) found.push(Date.parse(window));
    for (const { schedule } of await enabledFreezes(ctx)) {
      const next = nextFreezeChange(schedule, now);
      if (next) found.push(next.getTime());
    }
    return found.length === 0 ? null : new Date(Math.min(...found));
  }

  private async arm(): Promise<void> {
    if (this.stopped) return;
    const now = this.host.clock.now();
    const next = await this.nextChange(now);
    const at = Math.min(next?.getTime() ?? Number.POSITIVE_INFINITY, now.getTime() + MAX_WAIT_MS);
    if (this.stopped) return;
    if (this.timer && this.armedFor === at) return;
    this.timer?.cancel();
    this.armedFor = at;
    this.timer = this.host.clock.at(new Date(at), () => {
      this.timer = null;
      this.armedFor = null;
      this.run(() => this.tick());
    });
  }

  /** What the instant now brings: overdue checks fail, the windows and freezes that moved are announced; then the next instant. */
  async tick(): Promise<void> {
    if (this.stopped) return;
    const now = this.host.clock.now();
    await this.expireOverdue(now);
    await this.announce(now);
    await this.arm();
  }

  private async expireOverdue(now: Date): Promise<void> {
    const ctx = this.ctx('deadlines');
    for (;;) {
      const rows = await overdueChecks(ctx, now.toISOString(), EXPIRE_BATCH);
      for (const row of rows) {
        try {
          await inTransaction(ctx, async (tx) => {
            const at = now.toISOString();
            const minutes = Math.max(
              1,
              Math.round((Date.parse(row.deadline!) - Date.parse(row.last_updated)) / 60_000),
            );
            const fields = {
              summary: `Never reported: still pending after ${minutes} minute${minutes === 1 ? '' : 's'}.`,
              completed: at,
              last_updated: at,
            };
            if (!(await expireCheck(tx, row, fields))) return;
            await recordChange(tx, {
              action: 'update',
              objectType: MERGE_CHECK_TYPE,
              objectId: row.id,
              repr: row.name,
              prechange: snapshotCheck(tx, row),
              postchange: snapshotCheck(tx, {
                ...row,
                ...fields,
                status: 'failure',
                timed_out: 1,
                deadline: null,
              }),
            });
            await requestRefresh(tx, row.change_request_id, { rematch: false, evaluate: false, staleChecks: true });
          });
        } catch (err) {
          this.host.log.error(`gate clock: check ${row.id}: ${(err as Error).message}`);
        }
      }
      if (rows.length < EXPIRE_BATCH) return;
    }
  }

  private async announce(now: Date): Promise<void> {
    const ctx = this.ctx('announce');
    const through = now.toISOString();
    // Nothing is written unless something is to be announced: the row moves only with an announcement.
    const previous = await announcedThrough(ctx);
    const from = previous ?? this.startedAt;
    if (from >= through) return;
    const windows = await windowsCrossed(ctx, from, through);
    const freezes = (await enabledFreezes(ctx)).filter(({ schedule }) =>
      freezeChangedBetween(schedule, new Date(from), now),
    );
    if (windows.length === 0 && freezes.length === 0) return;
    const announced = await inTransaction(ctx, async (tx) => {
      // Another instance announced it first (the row moved since it was read): nothing more to say.
      if (!(await claimAnnouncing(tx, previous, through))) return false;
      for (const w of windows) await announceGateChanged(tx, w.id);
      for (const { row } of freezes) await announceFreezeChanged(tx, row.id, row.policy_id);
      return true;
    });
    // A window that opened or a freeze that changed may let requests set to merge automatically go.
    if (announced && (windows.some((w) => w.opened) || freezes.length > 0)) {
      await sweepAutoMerge(this.host);
      await drainMergeQueue(this.host, 'gate-clock', '');
    }
  }

  /**
   * At start: every pending reported check of an open request gets the deadline its declarations
   * give now (the configuration's timeouts may have changed while the service was stopped).
   */
  private async resetDeadlines(): Promise<void> {
    const ctx = this.ctx('deadlines-at-start');
    for (const crId of await requestsWithPendingReportedChecks(ctx)) {
      const declared = declaredFor(ctx, await attachedPolicies(ctx, crId));
      const byName = new Map(declared.map((d) => [d.name, d]));
      for (const row of await checkRowsOf(ctx, crId)) {
        const want = deadlineOf(byName.get(row.name), row);
        if (want !== row.deadline) await inTransaction(ctx, (tx) => setCheckDeadline(tx, row, want));
      }
    }
  }
}

/** This instance's gate clock. */
export function gateClock(host: HostServices): GateClock {
  return stateSlot(host, 'gate-clock', () => new GateClock(host));
}

export function gateClockTask(host: HostServices): BackgroundTask {
  const clock = gateClock(host);
  return { start: () => clock.start(), stop: () => clock.stop() };
}
