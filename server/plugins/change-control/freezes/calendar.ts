/**
 * Freeze calendars (pure): when a freeze is in force. A one-off freeze runs from `start` to
 * `end`. A recurring freeze starts on each of its ISO weekdays at `start_time` and ends at
 * `end_time` the same day, or the next day when `end_time` is not after `start_time`, both
 * read as wall-clock time in its time zone (so it follows daylight saving time). Periods that
 * touch or overlap are one period: a freeze every Saturday and Sunday from 00:00 to 00:00
 * runs from Saturday 00:00 to Monday 00:00.
 *
 * Wall-clock times that do not exist (the hour skipped when clocks go forward) fall on the
 * instant just after the gap; times that occur twice (clocks going back) take the later one.
 */
export interface FreezeSchedule {
  kind: 'once' | 'recurring';
  start: string | null;
  end: string | null;
  weekdays: readonly number[];
  startTime: string | null;
  endTime: string | null;
  timeZone: string;
}

export interface Period {
  start: Date;
  end: Date;
}

/** How far ahead a recurring freeze's periods are followed (a chain of touching periods too). */
const HORIZON_DAYS = 15;
const DAY_MS = 86_400_000;

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, f);
  }
  return f;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall clock in `timeZone` at an instant. */
export function wallClock(instant: number, timeZone: string): WallClock {
  const parts: Record<string, number> = {};
  for (const p of formatIn(timeZone).formatToParts(new Date(instant)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

/** How far `timeZone`'s wall clock is ahead of UTC at an instant, in ms. */
function offsetAt(instant: number, timeZone: string): number {
  const w = wallClock(instant, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The instant at which `timeZone`'s wall clock shows this date and time. */
export function zonedInstant(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  timeZone: string,
): Date {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = offsetAt(guess, timeZone);
  let t = guess - first;
  const second = offsetAt(t, timeZone);
  if (second !== first) t = guess - second;
  return new Date(t);
}

function hm(time: string): [number, number] {
  const [h, m] = time.split(':').map(Number);
  return [h ?? 0, m ?? 0];
}

/** The periods of a recurring freeze that start between `from` (minus a day) and the horizon, in order. */
function recurringPeriods(s: FreezeSchedule, from: Date): Period[] {
  if (!s.startTime || !s.endTime || s.weekdays.length === 0) return [];
  const [sh, sm] = hm(s.startTime);
  const [eh, em] = hm(s.endTime);
  const overnight = eh * 60 + em <= sh * 60 + sm;
  const today = wallClock(from.getTime(), s.timeZone);
  const days = new Set(s.weekdays);
  const out: Period[] = [];
  for (let k = -2; k <= HORIZON_DAYS; k++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + k));
    const isoWeekday = date.getUTCDay() === 0 ? 7 : date.getUTCDay();
    if (!days.has(isoWeekday)) continue;
    const y = date.getUTCFullYear();
    const mo = date.getUTCMonth() + 1;
    const d = date.getUTCDate();
    const start = zonedInstant(y, mo, d, sh, sm, s.timeZone);
    const endDate = new Date(Date.UTC(y, mo - 1, d + (overnight ? 1 : 0)));
    const end = zonedInstant(
      endDate.getUTCFullYear(),
      endDate.getUTCMonth() + 1,
      endDate.getUTCDate(),
      eh,
      em,
      s.timeZone,
    );
    if (end > start) out.push({ start, end });
  }
  return out;
}

/** Periods that touch or overlap become one. */
function joined(periods: Period[]): Period[] {
  const sorted = [...periods].sort((a, b) => a.start.getTime() - b.start.getTime());
  const out: Period[] = [];
  for (const p of sorted) {
    const last = out[out.length - 1];
    if (last && p.start <= last.end) {
      if (p.end > last.end) last.end = p.end;
    } else out.push({ start: p.start, end: p.end });
  }
  return out;
}

function periodsAround(s: FreezeSchedule, now: Date): Period[] {
  if (s.kind === 'once') {
    if (!s.start || !s.end) return [];
    const start = new Date(s.start);
    const end = new Date(s.end);
    return end > start ? [{ start, end }] : [];
  }
  return joined(recurringPeriods(s, now));
}

/** The period in force at `now`, or null. */
export function activePeriod(s: FreezeSchedule, now: Date): Period | null {
  return periodsAround(s, now).find((p) => p.start <= now && now < p.end) ?? null;
}

/** The first period that starts after `now`, or null. */
export function nextPeriod(s: FreezeSchedule, now: Date): Period | null {
  return periodsAround(s, now).find((p) => p.start > now) ?? null;
}

/** What is wrong with a schedule (its fields taken together), or null. */
export function scheduleProblem(s: FreezeSchedule): { field: string; message: string } | null {
  if (s.kind === 'once') {
    if (!s.start) return { field: 'start', message: 'A one-off freeze needs a start.' };
    if (!s.end) return { field: 'end', message: 'A one-off freeze needs an end.' };
    if (Date.parse(s.end) <= Date.parse(s.start)) return { field: 'end', message: 'end must be after start.' };
    return null;
  }
  if (s.weekdays.length === 0)
    return { field: 'weekdays', message: 'A recurring freeze needs at least one weekday (1 is Monday, 7 is Sunday).' };
  if (!s.startTime) return { field: 'start_time', message: 'A recurring freeze needs a start_time.' };
  if (!s.endTime) return { field: 'end_time', message: 'A recurring freeze needs an end_time.' };
  return null;
}

export const FREEZE_NOTICE_DAYS = 7;

/** Whether a period is worth showing on a request now: in force, or starting within the notice days. */
export function noticeOf(s: FreezeSchedule, now: Date): { active: boolean; period: Period } | null {
  const active = activePeriod(s, now);
  if (active) return { active: true, period: active };
  const next = nextPeriod(s, now);
  if (next && next.start.getTime() - now.getTime() <= FREEZE_NOTICE_DAYS * DAY_MS)
    return { active: false, period: next };
  return null;
}

/**
 * The next instant after `now` at which what a freeze shows on the requests it applies to
 * changes: a period in force ends, the next one comes within the notice days, or starts.
 */
export function nextFreezeChange(s: FreezeSchedule, now: Date): Date | null {
  const t = now.getTime();
  const candidates: number[] = [];
  const active = activePeriod(s, now);
  if (active) candidates.push(active.end.getTime());
  const next = nextPeriod(s, now);
  if (next) candidates.push(next.start.getTime() - FREEZE_NOTICE_DAYS * DAY_MS, next.start.getTime());
  const after = candidates.filter((c) => c > t);
  return after.length === 0 ? null : new Date(Math.min(...after));
}

/** Whether what a freeze shows changed between `from` (excluded) and `to` (included). */
export function freezeChangedBetween(s: FreezeSchedule, from: Date, to: Date): boolean {
  const next = nextFreezeChange(s, from);
  return next !== null && next <= to;
}
