import type { Freeze, FreezeNotice } from '../../../../contract/api/freezes';
import { briefObject, fieldsOf, type Ctx, tableRows } from '../../../host';
import { ccDb, parseJson, toBool } from '../db/database';
import type { FreezeRow } from '../db/tables';
import { MODELS } from '../names';
import { activePeriod, nextPeriod, noticeOf, type FreezeSchedule, type Period } from './calendar';

export type FreezeOut = Freeze;

export function scheduleOf(row: FreezeRow): FreezeSchedule {
  return {
    kind: row.kind,
    start: row.start_at,
    end: row.end_at,
    weekdays: parseJson<number[]>(row.weekdays, []),
    startTime: row.start_time,
    endTime: row.end_time,
    timeZone: row.time_zone,
  };
}

const iso = (p: Period | null) => (p ? { start: p.start.toISOString(), end: p.end.toISOString() } : null);

export function presentFreeze(ctx: Ctx, row: FreezeRow): FreezeOut {
  const now = ctx.host.clock.now();
  const schedule = scheduleOf(row);
  const enabled = toBool(row.enabled);
  return {
    ...briefObject(ctx, MODELS.freeze.path, row.id, row.name),
    name: row.name,
    description: row.description,
    enabled,
    kind: row.kind,
    start: row.start_at,
    end: row.end_at,
    weekdays: schedule.weekdays as number[],
    ...fieldsOf(row, ['start_time', 'end_time', 'time_zone']),
    policy: row.policy_id,
    active: enabled ? iso(activePeriod(schedule, now)) : null,
    next: enabled ? iso(nextPeriod(schedule, now)) : null,
    created: row.created,
    last_updated: row.last_updated,
  };
}

/** What the changelog keeps of a freeze: its stored fields, not what the time of asking computes. */
export function snapshotFreeze(obj: FreezeOut): Record<string, unknown> {
  const { active: _active, next: _next, ...stored } = obj;
  return stored;
}

/** Freezes by id: read, name taken, insert, update, delete. */
export const freezeTable = tableRows(ccDb, 'cc_freezes');

/** What `enabledFreezes` reads. */
export const FREEZE_TABLES: readonly string[] = ['cc_freezes'];

/**
 * The enabled freezes with their schedules (a short table), reused while the table is not written. What is in
 * force is computed from them at every call: it depends on the time of asking.
 */
export async function enabledFreezes(ctx: Ctx): Promise<Array<{ row: FreezeRow; schedule: FreezeSchedule }>> {
  return ctx.host.readMemo.get(
    ctx,
    'cc-freezes:enabled',
    async () => {
      const rows = await ccDb(ctx)
        .selectFrom('cc_freezes')
        .selectAll()
        .where('enabled', '=', 1)
        .orderBy('id')
        .execute();
      return rows.map((row) => ({ row, schedule: scheduleOf(row) }));
    },
    FREEZE_TABLES,
  );
}

export type LoadedFreezes = Awaited<ReturnType<typeof enabledFreezes>>;

/**
 * The freezes that apply to a request governed by `policyIds` (global ones and those of its
 * policies), in force at `now` or starting within the notice days: in force first, then by start.
 */
export function freezeNotices(freezes: LoadedFreezes, policyIds: readonly number[], now: Date): FreezeNotice[] {
  const out: FreezeNotice[] = [];
  for (const { row, schedule } of freezes) {
    if (row.policy_id !== null && !policyIds.includes(row.policy_id)) continue;
    const notice = noticeOf(schedule, now);
    if (notice)
      out.push({
        id: row.id,
        name: row.name,
        active: notice.active,
        start: notice.period.start.toISOString(),
        end: notice.period.end.toISOString(),
        kind: schedule.kind,
        weekdays: [...schedule.weekdays],
        start_time: schedule.startTime,
        end_time: schedule.endTime,
        time_zone: schedule.timeZone,
      });
  }
  return out.sort((a, b) => Number(b.active) - Number(a.active) || a.start.localeCompare(b.start) || a.id - b.id);
}

/** The gate's words for a freeze in force. */
export function freezeReason(notice: FreezeNotice): string {
  return `Merging is frozen by "${notice.name}" until ${notice.end}.`;
}

/**
 * Until when the freezes that apply to a request governed by `policyIds` hold it, from `from`:
 * the end of those in force, and of any in force at that end, and so on (periods of several
 * freezes in a row); null when none is in force at `from`.
 */
export function frozenUntil(freezes: LoadedFreezes, policyIds: readonly number[], from: Date): Date | null {
  const applying = freezes.filter(({ row }) => row.policy_id === null || policyIds.includes(row.policy_id));
  let t = from;
  for (let round = 0; round < 50; round++) {
    let moved = false;
    for (const { schedule } of applying) {
      const p = activePeriod(schedule, t);
      if (p && p.end > t) {
        t = p.end;
        moved = true;
      }
    }
    if (!moved) break;
  }
  return t > from ? t : null;
}

/**
 * Every enabled freeze that applies to a request governed by `policyIds`, with its period in
 * force at `now` or else its next one (however far ahead): what a preview says would apply.
 */
export function applyingFreezes(freezes: LoadedFreezes, policyIds: readonly number[], now: Date): FreezeNotice[] {
  const out: FreezeNotice[] = [];
  for (const { row, schedule } of freezes) {
    if (row.policy_id !== null && !policyIds.includes(row.policy_id)) continue;
    const active = activePeriod(schedule, now);
    const period = active ?? nextPeriod(schedule, now);
    if (!period) continue;
    out.push({
      id: row.id,
      name: row.name,
      active: active !== null,
      start: period.start.toISOString(),
      end: period.end.toISOString(),
      kind: schedule.kind,
      weekdays: [...schedule.weekdays],
      start_time: schedule.startTime,
      end_time: schedule.endTime,
      time_zone: schedule.timeZone,
    });
  }
  return out.sort((a, b) => Number(b.active) - Number(a.active) || a.start.localeCompare(b.start) || a.id - b.id);
}
