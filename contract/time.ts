// Times as people read them, in the extension and the webview alike: relative ("3 minutes ago")
// where they are listed, the exact time on hover.

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

/** The exact time, e.g. "1 Nov 2026, 09:30:05 UTC" (in `timeZone`, default the machine's). */
export function exactTime(iso: string, timeZone?: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'long', timeZone }).format(d);
}
