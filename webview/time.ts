// Times as people read them: relative ("3 minutes ago"), with the exact time for a tooltip.

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

let formatter: Intl.RelativeTimeFormat | null = null;

/** "just now", "3 minutes ago", "in 2 hours", "last week"; the ISO text when it does not parse. */
export function relativeTime(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const seconds = Math.round((t - now) / 1000);
  if (Math.abs(seconds) < 45) return 'just now';
  const format = (formatter ??= new Intl.RelativeTimeFormat('en', { numeric: 'auto' }));
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size * 0.9 || unit === 'minute') return format.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

/** The exact time in the user's locale (the ISO text when it does not parse). */
export function exactTime(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return new Date(t).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
