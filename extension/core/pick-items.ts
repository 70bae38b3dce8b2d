// QuickPick rows for commands run from the palette: which change requests are relevant to an
// action, as the service's `actions` say.
import type { Branch } from '../../contract/api/branching';
import type { CallerAction, ChangeRequest, ReviewDecision } from '../../contract/api/change-control';
import { availability, mergeBlockedReason } from './availability';
import { byUrgency } from './grouping';
import { DECISION_VIEW, STATUS_VIEW } from '../../contract/labels';

export interface PickItem<T> {
  label: string;
  description?: string;
  detail?: string;
  value: T;
}

export function changeRequestPick(cr: ChangeRequest, detail?: string): PickItem<ChangeRequest> {
  return {
    label: `$(${STATUS_VIEW[cr.status].icon.id}) ${cr.title || cr.branch_name}`,
    description: [cr.ref, STATUS_VIEW[cr.status].label].filter((p) => p).join(' · '),
    detail: detail ?? `Branch ${cr.branch_name}${cr.branch_deleted ? ' (deleted)' : ''}`,
    value: cr,
  };
}

/**
 * Rows for a command on a change request. Without `action` (Open): every request. With one: the
 * requests that allow it; for `merge`, also the open submitted ones that are blocked, each with
 * its reason (choosing one shows the reason instead of merging).
 */
export function changeRequestPicks(crs: readonly ChangeRequest[], action?: CallerAction): PickItem<ChangeRequest>[] {
  const sorted = [...crs].sort(byUrgency);
  if (!action) return sorted.map((cr) => changeRequestPick(cr));
  const allowed = sorted.filter((cr) => availability(cr, action).allowed);
  const rows = allowed.map((cr) => changeRequestPick(cr));
  if (action === 'merge') {
    const blocked = sorted.filter(blockedFromMerging);
    rows.push(...blocked.map((cr) => changeRequestPick(cr, `$(circle-slash) Blocked: ${mergeBlockedReason(cr)}`)));
  }
  return rows;
}

/**
 * Why no change request allows `action` for the caller now: one sentence, and a row per open
 * request with the service's reason (its `actions`), most urgent first. `what` is the command's
 * title ("Merge Branch").
 */
export function whyNoneAllowed(
  crs: readonly ChangeRequest[],
  action: CallerAction,
  what: string,
): { message: string; rows: PickItem<ChangeRequest>[] } {
  const open = [...crs].filter((cr) => cr.status !== 'completed' && cr.status !== 'abandoned').sort(byUrgency);
  const reasonOf = (cr: ChangeRequest) =>
    action === 'merge' && cr.status !== 'draft' ? mergeBlockedReason(cr) : availability(cr, action).reason;
  const head = `No change request allows ${what} for you now`;
  if (open.length === 0) return { message: `${head}: there is no open change request.`, rows: [] };
  const rows = open.map((cr) => changeRequestPick(cr, `$(circle-slash) ${reasonOf(cr)}`));
  if (open.length === 1) {
    const cr = open[0]!;
    return { message: `${head}. "${cr.title || cr.branch_name}": ${reasonOf(cr)}`, rows };
  }
  return { message: `${head}. Why, for each open change request:`, rows };
}

/** How many blocked requests the Merge QuickPick reads live (the rest keep the list's words). */
export const LIVE_MERGE_REASONS = 10;

function blockedFromMerging(cr: ChangeRequest): boolean {
  return (
    !availability(cr, 'merge').allowed &&
    cr.status !== 'draft' &&
    cr.status !== 'completed' &&
    cr.status !== 'abandoned'
  );
}

/**
 * The candidates of the Merge QuickPick with the live merge state of the blocked ones. Lists
 * carry the gate as of the last refresh, in general words ("…outstanding at the last refresh");
 * the detail endpoint says which rule or check blocks now. At most `limit` are read; one that
 * fails to load keeps its list copy.
 */
export async function withLiveMergeState(
  client: { getChangeRequest(id: number): Promise<ChangeRequest> },
  crs: readonly ChangeRequest[],
  limit = LIVE_MERGE_REASONS,
): Promise<ChangeRequest[]> {
  const toRead = new Set(
    crs
      .filter(blockedFromMerging)
      .sort(byUrgency)
      .slice(0, limit)
      .map((cr) => cr.id),
  );
  return Promise.all(crs.map((cr) => (toRead.has(cr.id) ? client.getChangeRequest(cr.id).catch(() => cr) : cr)));
}

export function branchPicks(branches: readonly Branch[], requests: readonly ChangeRequest[]): PickItem<Branch>[] {
  const byBranch = new Map<number, ChangeRequest>();
  for (const cr of requests) if (cr.branch !== null) byBranch.set(cr.branch, cr);
  return [...branches]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((b) => {
      const cr = byBranch.get(b.id);
      return {
        label: `$(git-branch) ${b.name}`,
        description: b.status,
        detail: cr
          ? `Change request: ${cr.title} (${STATUS_VIEW[cr.status].label})`
          : 'No change request yet: one is opened for it',
        value: b,
      };
    });
}

export const DECISION_PICKS: PickItem<ReviewDecision>[] = [
  { label: `$(pass) ${DECISION_VIEW.approve.label}`, description: 'The change can go ahead', value: 'approve' },
  {
    label: `$(request-changes) ${DECISION_VIEW.reject.label}`,
    description: 'Say what must change (a comment is required)',
    value: 'reject',
  },
  { label: `$(comment) ${DECISION_VIEW.comment.label}`, description: 'Feedback without a decision', value: 'comment' },
];
