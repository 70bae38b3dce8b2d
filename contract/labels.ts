// Words and icons for the service's closed vocabularies. Each table is keyed by the contract's
// `as const` list, so a new status in the contract fails to compile until it is named here.
import type { ChangeRequestStatus, CheckStatus, Priority, ReviewDecision } from './api/change-control';
import type { ChangeAction } from './api/branching';

export const STATUS_LABEL = {
  draft: 'Draft',
  'needs-review': 'Needs review',
  approved: 'Approved',
  rejected: 'Changes requested',
  completed: 'Completed',
  abandoned: 'Abandoned',
} as const satisfies Record<ChangeRequestStatus, string>;

export const PRIORITY_LABEL = {
  low: 'Low',
  medium: 'Medium',
  high: 'High',
  critical: 'Critical',
} as const satisfies Record<Priority, string>;

export const PRIORITY_RANK = { critical: 0, high: 1, medium: 2, low: 3 } as const satisfies Record<Priority, number>;

export const CHECK_STATUS_LABEL = {
  pending: 'Pending',
  running: 'Running',
  success: 'Passed',
  failure: 'Failed',
  error: 'Error',
  skipped: 'Skipped',
} as const satisfies Record<CheckStatus, string>;

/** Text symbol for a check status where no icon font is available (the webview). */
export const CHECK_STATUS_SYMBOL = {
  pending: '○',
  running: '◔',
  success: '✓',
  failure: '✗',
  error: '!',
  skipped: '–',
} as const satisfies Record<CheckStatus, string>;

export const DECISION_LABEL = {
  approve: 'Approve',
  reject: 'Request changes',
  comment: 'Comment',
} as const satisfies Record<ReviewDecision, string>;

/** The decisions in the order forms offer them (the table above is exhaustive by type). */
export const DECISION_ORDER = Object.keys(DECISION_LABEL) as ReviewDecision[];

export const DECISION_PAST = {
  approve: 'approved',
  reject: 'requested changes',
  comment: 'commented',
} as const satisfies Record<ReviewDecision, string>;

export const CHANGE_ACTION_LABEL = {
  create: 'Created',
  update: 'Updated',
  delete: 'Deleted',
} as const satisfies Record<ChangeAction, string>;

/** A codicon id with an optional theme colour id. */
export interface IconRef {
  id: string;
  color?: string;
}

export const STATUS_ICON = {
  draft: { id: 'git-pull-request-draft' },
  'needs-review': { id: 'git-pull-request' },
  approved: { id: 'pass', color: 'testing.iconPassed' },
  rejected: { id: 'request-changes', color: 'testing.iconFailed' },
  completed: { id: 'git-merge', color: 'charts.purple' },
  abandoned: { id: 'git-pull-request-closed', color: 'disabledForeground' },
} as const satisfies Record<ChangeRequestStatus, IconRef>;

export const CHECK_ICON = {
  pending: { id: 'circle-large-outline', color: 'testing.iconQueued' },
  running: { id: 'sync~spin', color: 'testing.iconQueued' },
  success: { id: 'pass', color: 'testing.iconPassed' },
  failure: { id: 'error', color: 'testing.iconFailed' },
  error: { id: 'warning', color: 'testing.iconErrored' },
  skipped: { id: 'circle-slash', color: 'testing.iconSkipped' },
} as const satisfies Record<CheckStatus, IconRef>;

export const DECISION_ICON = {
  approve: { id: 'pass', color: 'testing.iconPassed' },
  reject: { id: 'request-changes', color: 'testing.iconFailed' },
  comment: { id: 'comment' },
} as const satisfies Record<ReviewDecision, IconRef>;

/**
 * How many approvals a rule has of those it needs, never "2 of 1 approvals": "1 of 2 approvals",
 * "1 of 1 approval", "3 approvals (2 needed)", "no approval needed".
 */
export function approvalsPhrase(approvals: number, needed: number): string {
  if (needed <= 0) return approvals > 0 ? `${approvals} approval${approvals === 1 ? '' : 's'} (none needed)` : 'no approval needed';
  if (approvals > needed) return `${approvals} approvals (${needed} needed)`;
  return `${approvals} of ${needed} approval${needed === 1 ? '' : 's'}`;
}

/** A freeze as a change request shows it: in force (it blocks merging until its end) or upcoming. */
export function freezePhrase(f: { name: string; active: boolean; start: string; end: string }, time: (iso: string) => string): string {
  return f.active ? `Frozen by "${f.name}" until ${time(f.end)}` : `Freeze "${f.name}" from ${time(f.start)} to ${time(f.end)}`;
}

/** Where a request stands in the merge queue. */
export function queuePhrase(position: number): string {
  return position === 1 ? 'First in the merge queue (merging now or next)' : `Position ${position} in the merge queue`;
}
