// How change requests are grouped in the Change Requests view. A request may sit in several
// groups (it is mine and blocked), as queries do in review tools.
import type { ChangeRequest } from '../../contract/api/change-control';
import { OPEN_STATUSES, type ChangeRequestStatus } from '../../contract/api/vocabulary';
import { PRIORITY_RANK } from '../../contract/labels';

export const GROUPS = [
  { id: 'needsMyReview', label: 'Needs my review' },
  { id: 'mine', label: 'Mine' },
  { id: 'drafts', label: 'Drafts' },
  { id: 'readyToMerge', label: 'Ready to merge' },
  { id: 'blocked', label: 'Blocked' },
  { id: 'recentlyClosed', label: 'Recently closed' },
] as const;
export type GroupId = (typeof GROUPS)[number]['id'];

/** What the service answered for the view's queries. */
export interface ChangeRequestLists {
  /** Every open request the caller may see. */
  open: ChangeRequest[];
  /** `reviewer=me`: requests on which the caller is an outstanding eligible reviewer. */
  needsMyReview: ChangeRequest[];
  /** `advisory_reviewer=me`: requests waiting for the caller's advisory review (only a policy on trial names them). */
  advisory: ChangeRequest[];
  /** `requester=me`: the caller's own requests. */
  mine: ChangeRequest[];
  /** Completed and abandoned requests, the last updated first (`ordering=-last_updated`). */
  closed: ChangeRequest[];
}

export interface Group {
  id: GroupId;
  label: string;
  items: ChangeRequest[];
}

export const RECENTLY_CLOSED_LIMIT = 20;

export function isOpen(status: ChangeRequestStatus): boolean {
  return (OPEN_STATUSES as readonly ChangeRequestStatus[]).includes(status);
}

/** Most urgent first, then most recently updated. */
export function byUrgency(a: ChangeRequest, b: ChangeRequest): number {
  return (
    PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] || b.last_updated.localeCompare(a.last_updated) || b.id - a.id
  );
}

function byRecency(a: ChangeRequest, b: ChangeRequest): number {
  return b.last_updated.localeCompare(a.last_updated) || b.id - a.id;
}

function uniqueById(items: ChangeRequest[]): ChangeRequest[] {
  const seen = new Set<number>();
  return items.filter((cr) => (seen.has(cr.id) ? false : (seen.add(cr.id), true)));
}

export function groupChangeRequests(lists: ChangeRequestLists): Group[] {
  const open = uniqueById(lists.open.filter((cr) => isOpen(cr.status)));
  const submitted = open.filter((cr) => cr.status !== 'draft');
  const members: Record<GroupId, ChangeRequest[]> = {
    needsMyReview: uniqueById(lists.needsMyReview.filter((cr) => isOpen(cr.status) && cr.status !== 'draft')).sort(
      byUrgency,
    ),
    mine: uniqueById(lists.mine.filter((cr) => isOpen(cr.status))).sort(byUrgency),
    drafts: open.filter((cr) => cr.status === 'draft').sort(byUrgency),
    readyToMerge: submitted.filter((cr) => cr.ready_to_merge).sort(byUrgency),
    blocked: submitted.filter((cr) => !cr.ready_to_merge).sort(byUrgency),
    recentlyClosed: uniqueById(lists.closed.filter((cr) => !isOpen(cr.status)))
      .sort(byRecency)
      .slice(0, RECENTLY_CLOSED_LIMIT),
  };
  return GROUPS.map((g) => ({ id: g.id, label: g.label, items: members[g.id] }));
}

/** Every request the lists know, by id (the detail wins over older copies: first seen wins). */
export function indexById(lists: ChangeRequestLists): Map<number, ChangeRequest> {
  const map = new Map<number, ChangeRequest>();
  for (const cr of [...lists.open, ...lists.needsMyReview, ...lists.advisory, ...lists.mine, ...lists.closed])
    if (!map.has(cr.id)) map.set(cr.id, cr);
  return map;
}

export function isEmpty(lists: ChangeRequestLists): boolean {
  return (
    lists.open.length + lists.needsMyReview.length + lists.advisory.length + lists.mine.length + lists.closed.length ===
    0
  );
}

export const EMPTY_LISTS: ChangeRequestLists = { open: [], needsMyReview: [], advisory: [], mine: [], closed: [] };

/** The requests waiting for my advisory review (a policy on trial alone names me), most urgent first. */
export function advisoryForMe(lists: ChangeRequestLists): ChangeRequest[] {
  return uniqueById(lists.advisory.filter((cr) => isOpen(cr.status) && cr.status !== 'draft')).sort(byUrgency);
}
