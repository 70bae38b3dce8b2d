// Times as people read them, in the extension and the webview alike: one format, in the reader's
// time zone, without seconds ("29 Nov 2026, 04:03 GMT+5:30"); relative ("3 minutes ago") where
// they are listed, the exact time on hover. The service keeps ISO instants; nothing the
// extension shows a person carries one (`readableTimes`).

const UNITS: [limitSeconds: number, unitSeconds: number, name: string][] = [
  [60 * 60, 60, 'minute'],
  [24 * 60 * 60, 60 * 60, 'hour'],
  [7 * 24 * 60 * 60, 24 * 60 * 60, 'day'],
  [30 * 24 * 60 * 60, 7 * 24 * 60 * 60, 'week'],
  [365 * 24 * 60 * 60, 30 * 24 * 60 * 60, 'month'],
  [Number.POSITIVE_INFINITY, 365 * 24 * 60 * 60, 'year'],
];

/** "just now", "3 minutes ago", "yesterday", "in 2 hours"; an unreadable time as it came. */
export function relativeTime(iso: string, now: Date | number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round(((typeof now === 'number' ? now : now.getTime()) - then) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return 'just now';
  for (const [limit, unit, name] of UNITS) {
    if (abs >= limit) continue;
    const n = Math.max(1, Math.round(abs / unit));
    if (name === 'day' && n === 1) return seconds >= 0 ? 'yesterday' : 'tomorrow';
    const words = `${n} ${name}${n === 1 ? '' : 's'}`;
    return seconds >= 0 ? `${words} ago` : `in ${words}`;
  }
  return iso;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? '';
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
      timeZone,
    });
    formats.set(key, f);
  }
  return f;
}

/**
 * The one way a time is written for a person: "29 Nov 2026, 04:03 GMT+5:30", in `timeZone`
 * (default: the reader's, the machine's or the window's), without seconds. An unreadable time as it came.
 */
export function exactTime(iso: string, timeZone?: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return formatIn(timeZone).format(d);
}

/** ISO 8601 instants as the service writes them in its words ("until 2026-11-28T22:33:06.952Z"). */
const ISO_INSTANT = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/g;

/** A text of the service (a blocking reason) with every ISO instant in it written as `exactTime` writes it. */
export function readableTimes(text: string, timeZone?: string): string {
  return text.replace(ISO_INSTANT, (iso) => exactTime(iso, timeZone));
}

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** ISO weekdays (1 Monday … 7 Sunday) in words: "Monday", "Monday to Friday", "Saturday and Sunday", "day". */
export function weekdaysPhrase(weekdays: readonly number[]): string {
  const days = [...new Set(weekdays)].filter((d) => d >= 1 && d <= 7).sort((a, b) => a - b);
  if (days.length === 7) return 'day';
  const run = days.length >= 3 && days.every((d, i) => i === 0 || d === days[i - 1]! + 1);
  const names = days.map((d) => WEEKDAYS[d - 1]!);
  if (run) return `${names[0]} to ${names[names.length - 1]}`;
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** An IANA time zone as people say it: "New York time", "Berlin time", "UTC". */
export function zonePhrase(timeZone: string): string {
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC' || timeZone === 'GMT') return 'UTC';
  const city = timeZone.split('/').pop() ?? timeZone;
  return `${city.replace(/_/g, ' ')} time`;
}

/**
 * A recurring freeze as written, in its own zone: "every Monday 08:00–12:00 New York time";
 * an end not after the start ends the next day ("every Saturday 22:00–04:00 (into the next day) UTC").
 */
export function freezeRule(f: {
  weekdays: readonly number[];
  start_time: string | null;
  end_time: string | null;
  time_zone: string;
}): string {
  const start = f.start_time ?? '00:00';
  const end = f.end_time ?? '00:00';
  const overnight = end <= start;
  return `every ${weekdaysPhrase(f.weekdays)} ${start}–${end}${overnight ? ' (into the next day)' : ''} ${zonePhrase(f.time_zone)}`;
}
