/**
 * Change windows (pure): a request may merge only between `scheduled_start` and
 * `scheduled_end` when they are set. Holders of `override_window_changerequest` may merge outside.
 */
export interface WindowState {
  open: boolean;
  /** Why the window is closed, or null when open. */
  reason: string | null;
  /** The next moment the answer may change (the window opening or closing), or null. */
  changesAt: Date | null;
}

export function windowState(start: string | null, end: string | null, now: Date): WindowState {
  const t = now.getTime();
  const startMs = start ? Date.parse(start) : null;
  const endMs = end ? Date.parse(end) : null;
  if (startMs !== null && t < startMs) {
    return {
      open: false,
      reason: `The change window opens at ${new Date(startMs).toISOString()}.`,
      changesAt: new Date(startMs),
    };
  }
  if (endMs !== null && t >= endMs) {
    return { open: false, reason: `The change window closed at ${new Date(endMs).toISOString()}.`, changesAt: null };
  }
  return { open: true, reason: null, changesAt: endMs !== null ? new Date(endMs) : null };
}

/** The problem with a window (end not after start), or null. */
export function windowProblem(start: string | null, end: string | null): string | null {
  if (start && end && Date.parse(end) <= Date.parse(start)) return 'scheduled_end must be after scheduled_start.';
  return null;
}

/**
 * "Window too short": a window (both ends set) shorter than the automatic-merge interval may open
 * and close between two runs of the automatic merge. Null otherwise.
 */
export function windowWarning(
  start: string | null,
  end: string | null,
  autoMergeIntervalMinutes: number,
): string | null {
  if (!start || !end) return null;
  const minutes = (Date.parse(end) - Date.parse(start)) / 60_000;
  if (!(minutes < autoMergeIntervalMinutes)) return null;
  const shown = Number.isInteger(minutes) ? String(minutes) : minutes.toFixed(1);
  return `Window too short: the change window lasts ${shown} minute${minutes === 1 ? '' : 's'}, less than the automatic-merge interval of ${autoMergeIntervalMinutes} minutes; an automatic merge may miss it.`;
}
