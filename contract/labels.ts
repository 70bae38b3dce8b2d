// Words and icons for the service's closed vocabularies. Each table is keyed by the contract's
// `as const` list, so a new status in the contract fails to compile until it is named here.
import type { ChangeRequestStatus, CheckStatus, Priority, ReviewDecision } from './api/change-control';
import type { ChangeAction } from './api/branching';
import { freezeRule } from './time';

/** A codicon id with an optional theme colour id. */
export interface IconRef {
  id: string;
  color?: string;
}

/** How each status of a change request is shown: its word and its icon. */
export const STATUS_VIEW = {
  draft: { label: 'Draft', icon: { id: 'git-pull-request-draft' } },
  'needs-review': { label: 'Needs review', icon: { id: 'git-pull-request' } },
  approved: { label: 'Approved', icon: { id: 'pass', color: 'testing.iconPassed' } },
  rejected: { label: 'Changes requested', icon: { id: 'request-changes', color: 'testing.iconFailed' } },
  completed: { label: 'Completed', icon: { id: 'git-merge', color: 'charts.purple' } },
  abandoned: { label: 'Abandoned', icon: { id: 'git-pull-request-closed', color: 'disabledForeground' } },
} as const satisfies Record<ChangeRequestStatus, { label: string; icon: IconRef }>;

export const PRIORITY_LABEL = {
  low: 'Low',
  medium: 'Medium',
  high: 'High',
  critical: 'Critical',
} as const satisfies Record<Priority, string>;

export const PRIORITY_RANK = { critical: 0, high: 1, medium: 2, low: 3 } as const satisfies Record<Priority, number>;

/** How each check status is shown: its word, its icon, and a text symbol where no icon font is available (the webview). */
export const CHECK_STATUS_VIEW = {
  pending: { label: 'Pending', symbol: '○', icon: { id: 'circle-large-outline', color: 'testing.iconQueued' } },
  running: { label: 'Running', symbol: '◔', icon: { id: 'sync~spin', color: 'testing.iconQueued' } },
  success: { label: 'Passed', symbol: '✓', icon: { id: 'pass', color: 'testing.iconPassed' } },
  failure: { label: 'Failed', symbol: '✗', icon: { id: 'error', color: 'testing.iconFailed' } },
  error: { label: 'Error', symbol: '!', icon: { id: 'warning', color: 'testing.iconErrored' } },
  skipped: { label: 'Skipped', symbol: '–', icon: { id: 'circle-slash', color: 'testing.iconSkipped' } },
} as const satisfies Record<CheckStatus, { label: string; symbol: string; icon: IconRef }>;

/** How each review decision is shown: its word (in forms), as a past deed ("You approved"), and its icon. */
export const DECISION_VIEW = {
  approve: { label: 'Approve', past: 'approved', icon: { id: 'pass', color: 'testing.iconPassed' } },
  reject: {
    label: 'Request changes',
    past: 'requested changes',
    icon: { id: 'request-changes', color: 'testing.iconFailed' },
  },
  comment: { label: 'Comment', past: 'commented', icon: { id: 'comment' } },
} as const satisfies Record<ReviewDecision, { label: string; past: string; icon: IconRef }>;

/** The decisions in the order forms offer them (the table above is exhaustive by type). */
export const DECISION_ORDER = Object.keys(DECISION_VIEW) as ReviewDecision[];

export const CHANGE_ACTION_LABEL = {
  create: 'Created',
  update: 'Updated',
  delete: 'Deleted',
} as const satisfies Record<ChangeAction, string>;

/**
 * How many approvals a rule has of those it needs, never "2 of 1 approvals": "1 of 2 approvals",
 * "1 of 1 approval", "3 approvals (2 needed)", "no approval needed".
 */
export function approvalsPhrase(approvals: number, needed: number): string {
  if (needed <= 0)
    return approvals > 0 ? `${approvals} approval${approvals === 1 ? '' : 's'} (none needed)` : 'no approval needed';
  if (approvals > needed) return `${approvals} approvals (${needed} needed)`;
  return `${approvals} of ${needed} approval${needed === 1 ? '' : 's'}`;
}

/** A freeze as a request shows it: the period (and, for a recurring one, its rule as written in its own zone). */
export interface FreezeShown {
  name: string;
  active: boolean;
  start: string;
  end: string;
  kind?: 'once' | 'recurring';
  weekdays?: readonly number[];
  start_time?: string | null;
  end_time?: string | null;
  time_zone?: string;
}

/**
 * A freeze as a change request shows it: in force (it blocks merging until its end) or upcoming;
 * a recurring one says its rule in its own zone, and `time` writes the instants in the reader's.
 */
export function freezePhrase(f: FreezeShown, time: (iso: string) => string): string {
  const rule =
    f.kind === 'recurring' && f.weekdays && f.weekdays.length > 0
      ? freezeRule({
          weekdays: f.weekdays,
          start_time: f.start_time ?? null,
          end_time: f.end_time ?? null,
          time_zone: f.time_zone ?? 'UTC',
        })
      : null;
  if (f.active) return `Frozen by "${f.name}"${rule ? ` (${rule})` : ''} until ${time(f.end)}`;
  return rule
    ? `Freeze "${f.name}", ${rule}; next from ${time(f.start)} to ${time(f.end)}`
    : `Freeze "${f.name}" from ${time(f.start)} to ${time(f.end)}`;
}

/**
 * Where a request stands in the merge queue. Held by a freeze (`frozenUntil`: when it ends),
 * it waits for the freeze to end: the head of a frozen queue is not "merging now or next".
 */
export function queuePhrase(position: number, frozenUntil?: string | null, time?: (iso: string) => string): string {
  if (frozenUntil)
    return `Position ${position} in the merge queue, waiting for the freeze to end${time ? ` (${time(frozenUntil)})` : ''}`;
  return position === 1 ? 'First in the merge queue (merging now or next)' : `Position ${position} in the merge queue`;
}
