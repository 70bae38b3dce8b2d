// Sentences the commands show after they ran: what Re-run Checks did and why a check did not run,
// how many search results there are and whether the service capped them. No VS Code here.
import type { MergeCheck } from '../../contract/api/change-control';
import { CHECK_STATUS_VIEW } from '../../contract/labels';

const name = (c: MergeCheck) => c.label || c.name;

/** Why one check has no fresh result after a re-run, or null when it ran. */
export function whyNotRun(check: MergeCheck): string | null {
  switch (check.status) {
    case 'pending':
      return `${name(check)}: not run here, its result is reported from outside (a pipeline) and none came yet`;
    case 'running':
      return `${name(check)}: reported from outside, still running`;
    case 'skipped':
      return `${name(check)}: skipped${check.summary ? ` (${check.summary})` : ', it does not apply to this change'}`;
    case 'error':
      return `${name(check)}: the check itself broke${check.summary ? ` (${check.summary})` : ''}`;
    default:
      return null;
  }
}

/** The message after Re-run Checks: the tally, then each check that did not run and why. */
export function checkRunSummary(title: string, checks: readonly MergeCheck[]): string {
  if (checks.length === 0) return `Checks re-run on "${title}": it has no checks.`;
  const counts = new Map<string, number>();
  for (const c of checks)
    counts.set(CHECK_STATUS_VIEW[c.status].label, (counts.get(CHECK_STATUS_VIEW[c.status].label) ?? 0) + 1);
  const tally = [...counts.entries()].map(([label, n]) => `${n} ${label.toLowerCase()}`).join(', ');
  const reasons = checks.map(whyNotRun).filter((r): r is string => r !== null);
  return `Checks re-run on "${title}": ${tally}.${reasons.length ? ` Did not run: ${reasons.join('; ')}.` : ''}`;
}

/** The QuickPick's placeholder for search results, saying when the service capped them. */
export function searchPlaceholder(q: string, count: number, truncated: boolean): string {
  const found = `${count} result${count === 1 ? '' : 's'} for "${q}"`;
  return truncated ? `${found}: more matched than the service returns; refine the search to see them` : found;
}
