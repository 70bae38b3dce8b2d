// How a check's result reads, in the tree and on the review page alike (types only from the
// contract, so that the webview bundle stays free of zod).
import type { MergeCheck } from './api/change-control';
import { CHECK_STATUS_VIEW, type IconRef } from './labels';

export interface CheckStateView {
  /** "Passed", "Outdated (passed, no longer counts)", "Timed out", … */
  label: string;
  /** A text symbol for the webview (no icon font there). */
  symbol: string;
  icon: IconRef;
}

/**
 * A result that does not count never shows a pass mark: an outdated result (an earlier version of
 * the branch, or not its declared reporter) and the timeout's failure read as what they are.
 */
export function checkState(c: Pick<MergeCheck, 'status' | 'outdated' | 'timed_out'>): CheckStateView {
  // ◷, not ⏱: common text fonts have it (⏱ is in emoji fonts only, a blank box without one).
  if (c.timed_out) return { label: 'Timed out', symbol: '◷', icon: { id: 'watch', color: 'testing.iconFailed' } };
  if (c.outdated)
    return {
      label: `Outdated (${CHECK_STATUS_VIEW[c.status].label.toLowerCase()}, no longer counts)`,
      symbol: '⚠',
      icon: { id: 'history', color: 'testing.iconErrored' },
    };
  const v = CHECK_STATUS_VIEW[c.status];
  return { label: v.label, symbol: v.symbol, icon: v.icon };
}

/** The one order of checks (tree and page): those blocking the merge first, then required ones, then by name. */
export function sortChecks<T extends Pick<MergeCheck, 'blocks_merge' | 'required' | 'name'>>(
  checks: readonly T[],
): T[] {
  return [...checks].sort(
    (a, b) =>
      Number(b.blocks_merge) - Number(a.blocks_merge) ||
      Number(b.required) - Number(a.required) ||
      a.name.localeCompare(b.name),
  );
}
