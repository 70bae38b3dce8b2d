// Where "Open Change Request for Branch" shows a branch's change request, from the service's
// `branch_page_placement` setting (GET change-control/settings/). On the host's branch page the
// setting puts the change request panel in the right column (`right_page`), in the alerts at
// the top (`alerts`), in both, or nowhere (`[]`). In the editor the branch command is that page:
//   right_page  the panel opens beside the active editor (to its right);
//   alerts      a notification states the request's merge state (a warning when it is blocked);
//   both        both; [] neither: the panel opens in the active editor group, without an alert.
// The panel always opens: the user asked for it.
import type { BranchPagePlacement, ChangeRequest } from '../../contract/api/change-control';
import { mergeBlockedReason } from '../../contract/merge-reason';
import { STATUS_VIEW } from '../../contract/labels';

/** The service's default (`right_page`), used when its settings cannot be read. */
export const DEFAULT_PLACEMENT: readonly BranchPagePlacement[] = ['right_page'];

export interface BranchPanelPlacement {
  /** Open the panel beside the active editor rather than in its group. */
  beside: boolean;
  /** Also state the request's merge state in a notification. */
  alert: boolean;
}

export function branchPanelPlacement(
  placement: readonly BranchPagePlacement[] | null | undefined,
): BranchPanelPlacement {
  const p = placement ?? DEFAULT_PLACEMENT;
  return {
    beside: p.includes('right_page') || p.includes('both'),
    alert: p.includes('alerts') || p.includes('both'),
  };
}

export interface BranchAlert {
  severity: 'info' | 'warning';
  message: string;
}

/** The alert for a branch's change request: its status and whether it can merge, or why not. */
export function branchAlert(
  branchName: string,
  cr: Pick<ChangeRequest, 'title' | 'status' | 'ready_to_merge' | 'merge_blocked_reason' | 'actions' | 'has_conflicts'>,
): BranchAlert {
  const head = `Branch ${branchName}: change request "${cr.title || branchName}" is ${STATUS_VIEW[cr.status].label}`;
  const conflicts = cr.has_conflicts ? ' The branch conflicts with main.' : '';
  if (cr.status === 'completed' || cr.status === 'abandoned') return { severity: 'info', message: `${head}.` };
  if (cr.ready_to_merge) return { severity: 'info', message: `${head}; ready to merge.${conflicts}` };
  return { severity: 'warning', message: `${head}; merge blocked: ${mergeBlockedReason(cr)}${conflicts}` };
}
