// Tree items as plain data: what each row of the Change Requests, Checks and My Reviews views
// shows. extension/vscode/tree-view.ts turns these into vscode.TreeItems.
import type { ChangeRequest, CheckObject, MergeCheck, Review } from '../../contract/api/change-control';
import { changeRequestContextValue, mergeBlockedReason } from './availability';
import type { CommandId } from './commands';
import type { StoreState } from './change-request-store';
import { advisoryForMe, groupChangeRequests, isEmpty, type Group } from './grouping';
import type { MergeQueueEntry } from '../../contract/api/freezes';
import {
  DECISION_VIEW,
  freezePhrase,
  type IconRef,
  PRIORITY_LABEL,
  queuePhrase,
  STATUS_VIEW,
} from '../../contract/labels';
import { exactTime, readableTimes, relativeTime } from '../../contract/time';
import { checkState, sortChecks } from '../../contract/checks';

export interface TreeItemData {
  /** Unique in its view and stable across refreshes (keeps expansion and selection). */
  id: string;
  label: string;
  description?: string;
  /** Markdown; user text in it is escaped. */
  tooltip?: string;
  icon?: IconRef;
  contextValue: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
  command?: { id: CommandId; title: string; args: unknown[] };
  /** A checkbox on the row (the "viewed" mark of a changed object). */
  checkbox?: { checked: boolean; tooltip: string };
  /** A document of the `change-control` scheme the row stands for (its file decoration colours the row). */
  resource?: { path: string; query: string };
}

/** Escapes Markdown so that user text shows literally in a tooltip. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&').replace(/\r?\n/g, ' ');
}

export function changeWindow(cr: Pick<ChangeRequest, 'scheduled_start' | 'scheduled_end'>): string | null {
  if (!cr.scheduled_start && !cr.scheduled_end) return null;
  const at = (iso: string | null) => (iso ? exactTime(iso) : '…');
  return `${at(cr.scheduled_start)} – ${at(cr.scheduled_end)}`;
}

export function groupItem(group: Group): TreeItemData {
  return {
    // A group that was empty had no twistie; a new id lets it open once it has items.
    id: `group:${group.id}${group.items.length ? '' : ':empty'}`,
    label: group.label,
    description: String(group.items.length),
    contextValue: `group;${group.id};`,
    collapsible: group.items.length === 0 ? 'none' : group.id === 'recentlyClosed' ? 'collapsed' : 'expanded',
  };
}

function mergeLine(cr: ChangeRequest): string {
  if (cr.status === 'completed') return cr.override ? 'Merged by an override' : 'Merged';
  if (cr.status === 'abandoned') return 'Abandoned';
  if (cr.ready_to_merge) return 'Ready to merge';
  return `Merge blocked: ${escapeMarkdown(readableTimes(mergeBlockedReason(cr) || 'not ready'))}`;
}

/** The required checks whose result does not count, as a row says them. */
function staleCheckWords(cr: Pick<ChangeRequest, 'stale_checks'>): string[] {
  return cr.stale_checks.map((c) =>
    c.reason === 'timed_out' ? `check ${c.label || c.name} timed out` : `check ${c.label || c.name} outdated`,
  );
}

/** The freeze in force that holds the request longest, if any. */
function holdingFreeze(cr: Pick<ChangeRequest, 'freezes'>): { name: string; end: string } | null {
  const active = cr.freezes.filter((f) => f.active);
  return active.length === 0 ? null : active.reduce((a, b) => (b.end > a.end ? b : a));
}

/** "3 minutes ago (1 Nov 2026, 09:30:05 UTC)": relative, with the exact time beside it for the hover. */
function when(iso: string, now: Date): string {
  return `${relativeTime(iso, now)} (${escapeMarkdown(exactTime(iso))})`;
}

export function changeRequestTooltip(cr: ChangeRequest, now: Date = new Date()): string {
  const lines = [
    `**${escapeMarkdown(cr.title)}**${cr.ref ? ` (${escapeMarkdown(cr.ref)})` : ''}`,
    '',
    `Status: ${STATUS_VIEW[cr.status].label} · Priority: ${PRIORITY_LABEL[cr.priority]}`,
    '',
    `Branch: ${escapeMarkdown(cr.branch_name)}${cr.branch_deleted ? ' (deleted)' : ''}`,
  ];
  if (cr.requester) lines.push('', `Requested by ${escapeMarkdown(cr.requester.display)}`);
  const window = changeWindow(cr);
  if (window) lines.push('', `Change window: ${escapeMarkdown(window)}`);
  if (cr.auto_merge && cr.status !== 'completed' && cr.status !== 'abandoned')
    lines.push('', 'Merges automatically once ready');
  if (cr.has_conflicts) lines.push('', 'Conflicts with main');
  for (const f of cr.freezes) lines.push('', escapeMarkdown(freezePhrase(f, (iso) => exactTime(iso))));
  const frozen = holdingFreeze(cr);
  if (cr.queue_position !== null)
    lines.push(
      '',
      queuePhrase(cr.queue_position, frozen?.end ?? null, (iso) => exactTime(iso)),
    );
  for (const c of cr.stale_checks)
    lines.push(
      '',
      c.reason === 'timed_out'
        ? `Required check ${escapeMarkdown(c.label || c.name)} timed out: it was never reported in time`
        : `Required check ${escapeMarkdown(c.label || c.name)} is outdated: its result is for an earlier version of the branch`,
    );
  if (cr.blocked_until) lines.push('', `May merge from ${escapeMarkdown(exactTime(cr.blocked_until))}`);
  lines.push('', mergeLine(cr));
  // A holder of the override who cannot use it now hears why (a menu cannot show it disabled).
  const override = cr.actions.override;
  if (override && !override.allowed && override.reason && !override.reason.includes('change_control.override_gate'))
    if (!cr.ready_to_merge && cr.status !== 'draft' && cr.status !== 'completed' && cr.status !== 'abandoned')
      lines.push('', `Override and Merge: ${escapeMarkdown(override.reason)}`);
  lines.push('', `Updated ${when(cr.last_updated, now)}`);
  return lines.join('\n');
}

/**
 * The row's description: what the merge waits for first (its place in the merge queue, automatic
 * merge), so that a narrow view cuts the least telling words, then the ref, status and what holds it.
 */
export function changeRequestDescription(cr: ChangeRequest): string {
  const open = cr.status !== 'completed' && cr.status !== 'abandoned';
  const parts: string[] = [];
  if (cr.queue_position !== null) parts.push(`queued #${cr.queue_position}`);
  else if (cr.auto_merge && open) parts.push('auto-merge');
  parts.push(...[cr.ref, STATUS_VIEW[cr.status].label].filter((p) => p));
  if (cr.priority === 'high' || cr.priority === 'critical') parts.push(PRIORITY_LABEL[cr.priority]);
  if (cr.has_conflicts) parts.push('conflicts');
  if (cr.freezes.some((f) => f.active)) parts.push('frozen');
  else if (cr.freezes.length > 0) parts.push('freeze ahead');
  if (open) parts.push(...staleCheckWords(cr));
  return parts.join(' · ');
}

/** A click on a row opens the request in the preview tab (the next click reuses it), as VS Code's own trees do. */
export function openCommand(cr: Pick<ChangeRequest, 'id'>): TreeItemData['command'] {
  return { id: 'changeControl.openChangeRequest', title: 'Open Change Request', args: [cr.id, 'preview'] };
}

/** A change request row; `scope` keeps ids unique when the request sits in several groups. */
export function changeRequestItem(cr: ChangeRequest, scope: string, now: Date = new Date()): TreeItemData {
  return {
    id: `${scope}/cr:${cr.id}`,
    label: cr.title || cr.branch_name,
    description: changeRequestDescription(cr),
    tooltip: changeRequestTooltip(cr, now),
    icon: STATUS_VIEW[cr.status].icon,
    contextValue: changeRequestContextValue(cr),
    collapsible: 'none',
    command: openCommand(cr),
  };
}

export function checkItem(check: MergeCheck, now: Date = new Date()): TreeItemData {
  const kind = check.required ? 'required' : 'advisory';
  const state = checkState(check);
  const description = [
    state.label,
    kind,
    check.summary,
    check.deadline ? `due ${exactTime(check.deadline)}` : '',
    check.completed ? relativeTime(check.completed, now) : '',
  ]
    .filter((p) => p)
    .join(' · ');
  const lines = [`**${escapeMarkdown(check.label || check.name)}** (${kind})`, '', `Status: ${state.label}`];
  if (check.outdated)
    lines.push(
      '',
      `Outdated: reported on an earlier version of the branch (digest ${check.digest?.slice(0, 12) ?? ''}), or by someone other than its declared reporter; it no longer counts`,
    );
  if (check.timed_out) lines.push('', 'Timed out: it was never reported in time; a report replaces this result');
  if (check.deadline) lines.push('', `Fails unless reported by ${escapeMarkdown(exactTime(check.deadline))}`);
  if (check.reporter) lines.push('', `Only ${escapeMarkdown(reporterWords(check.reporter))} may report it`);
  if (check.blocks_merge) lines.push('', 'Blocks the merge');
  if (check.summary) lines.push('', escapeMarkdown(check.summary));
  if (check.objects.length > 0) {
    lines.push(
      '',
      ...check.objects.slice(0, 20).map((o) => `- ${escapeMarkdown(o.object_repr)}: ${escapeMarkdown(o.problem)}`),
    );
    if (check.objects.length > 20) lines.push(`- and ${check.objects.length - 20} more`);
  }
  if (check.completed) lines.push('', `Result from ${when(check.completed, now)}`);
  const hasDetails = /^https?:\/\//i.test(check.details_url);
  return {
    id: `check:${check.id}`,
    // The name once: the label, or the name when it has none.
    label: check.label || check.name,
    description,
    tooltip: lines.join('\n'),
    icon: state.icon,
    contextValue: `check;${check.required ? 'required' : 'advisory'};${hasDetails ? 'details;' : ''}`,
    // The objects the result names (mergeable: what would conflict or fail to apply) are its rows.
    collapsible: check.objects.length > 0 ? 'expanded' : 'none',
    command: hasDetails
      ? { id: 'changeControl.openCheckDetails', title: 'Open Check Details', args: [check.details_url] }
      : undefined,
  };
}

/** Who alone may report a check, in words: "ci-bot or group ci-bots". */
export function reporterWords(reporter: NonNullable<MergeCheck['reporter']>): string {
  return [...reporter.users, ...reporter.groups.map((g) => `group ${g}`)].join(' or ');
}

/** An object a check names, under the check: what it is and what is wrong with it; a click opens it against main now. */
export function checkObjectItem(check: MergeCheck, o: CheckObject): TreeItemData {
  return {
    id: `check:${check.id}/object:${o.object_type}:${o.object_id}`,
    label: o.object_repr || `${o.object_type} ${o.object_id}`,
    description: o.problem,
    tooltip: `**${escapeMarkdown(o.object_repr)}** (${escapeMarkdown(o.object_type)} ${o.object_id})\n\n${escapeMarkdown(o.problem)}\n\nClick to compare it with main as it is now.`,
    icon: { id: 'warning' },
    contextValue: 'checkObject;',
    collapsible: 'none',
    command: {
      id: 'changeControl.compareWithMain',
      title: 'Compare with Main Now',
      args: [check.change_request, { object_type: o.object_type, object_id: o.object_id }],
    },
  };
}

/** One of my reviews; `cr` when the request is known, for its title and menus. */
export function reviewItem(review: Review, cr: ChangeRequest | undefined, now: Date = new Date()): TreeItemData {
  const title = cr ? cr.title || cr.branch_name : `Change request #${review.change_request}`;
  const parts: string[] = [DECISION_VIEW[review.decision].label];
  if (review.advisory) parts.push('advisory');
  if (review.stale) parts.push('stale');
  if (cr) parts.push(STATUS_VIEW[cr.status].label);
  parts.push(relativeTime(review.last_updated, now));
  return {
    id: `review:${review.id}`,
    label: title,
    description: parts.join(' · '),
    tooltip: [
      `**${escapeMarkdown(title)}**`,
      '',
      `Your review: ${DECISION_VIEW[review.decision].label}${review.stale ? " (stale: the branch's changes differ from those you reviewed)" : ''}`,
      ...(review.advisory
        ? ['', 'Advisory: only a policy on trial names you; your review counts for no decision']
        : []),
      '',
      `Given ${when(review.last_updated, now)}${review.digest ? ` on digest ${review.digest.slice(0, 12)}` : ''}`,
    ].join('\n'),
    icon: DECISION_VIEW[review.decision].icon,
    contextValue: cr ? changeRequestContextValue(cr) : 'review;',
    collapsible: 'none',
    command: openCommand({ id: review.change_request }),
  };
}

/** A row that only says something ("Select a change request…"). */
export function messageItem(id: string, label: string, icon?: IconRef): TreeItemData {
  return { id: `message:${id}`, label, icon, contextValue: 'message;', collapsible: 'none' };
}

// ---- nodes: what the tree providers hold (and what menu commands receive) ---------------

export type TreeNode =
  | { kind: 'group'; group: Group }
  | { kind: 'changeRequest'; cr: ChangeRequest; scope: string }
  | { kind: 'check'; check: MergeCheck }
  | { kind: 'checkObject'; check: MergeCheck; object: CheckObject }
  | { kind: 'review'; review: Review; cr: ChangeRequest | undefined }
  | { kind: 'reviewSection'; id: string; label: string; children: TreeNode[] }
  | { kind: 'queueEntry'; entry: MergeQueueEntry; cr: ChangeRequest | undefined }
  | { kind: 'message'; id: string; label: string; icon?: IconRef; command?: TreeItemData['command'] };

export function nodeItem(node: TreeNode): TreeItemData {
  switch (node.kind) {
    case 'group':
      return groupItem(node.group);
    case 'changeRequest':
      return changeRequestItem(node.cr, node.scope);
    case 'check':
      return checkItem(node.check);
    case 'checkObject':
      return checkObjectItem(node.check, node.object);
    case 'review':
      return reviewItem(node.review, node.cr);
    case 'reviewSection':
      return {
        id: `section:${node.id}${node.children.length ? '' : ':empty'}`,
        label: node.label,
        description: String(node.children.length),
        contextValue: 'section;',
        collapsible: node.children.length ? 'expanded' : 'none',
      };
    case 'queueEntry':
      return queueEntryItem(node.entry, node.cr);
    case 'message':
      return { ...messageItem(node.id, node.label, node.icon), command: node.command };
  }
}

/**
 * A row of the Merge Queue view: the request, its place, and what it does now (merging, waiting
 * its turn, or waiting for a freeze to end); the request's own menus.
 */
export function queueEntryItem(entry: MergeQueueEntry, cr: ChangeRequest | undefined): TreeItemData {
  const state = entry.waiting_for_freeze
    ? `waiting for the freeze "${entry.waiting_for_freeze.name}" to end (${exactTime(entry.waiting_for_freeze.end)})`
    : entry.state === 'running'
      ? 'merging now'
      : entry.position === 1
        ? 'next to merge'
        : 'waiting its turn';
  const label = cr ? cr.title || cr.branch_name : entry.display;
  return {
    id: `queue:${entry.id}`,
    label: `#${entry.position} ${label}`,
    description: state,
    tooltip: [
      `**${escapeMarkdown(label)}**`,
      '',
      `Position ${entry.position} in the merge queue: ${escapeMarkdown(state)}`,
      '',
      `Queued ${escapeMarkdown(exactTime(entry.queued))}`,
    ].join('\n'),
    icon: entry.waiting_for_freeze
      ? { id: 'debug-pause', color: 'list.warningForeground' }
      : entry.state === 'running'
        ? { id: 'sync~spin' }
        : { id: 'clock' },
    contextValue: cr ? changeRequestContextValue(cr) : 'queueEntry;',
    collapsible: 'none',
    command: openCommand({ id: entry.id }),
  };
}

/** The Merge Queue view's rows, head first (the requests the caller may view; a gap in the positions: others ahead). */
export function mergeQueueRoots(
  state: Pick<StoreState, 'loaded' | 'queue'>,
  byId: (id: number) => ChangeRequest | undefined,
): TreeNode[] {
  if (!state.loaded) return [];
  return state.queue.map((entry) => ({ kind: 'queueEntry', entry, cr: byId(entry.id) }));
}

// ---- the rows of each view, from what the extension holds --------------------------------

/** Change Requests: a row while loading (or to retry a failed first load), then the groups; none when there is no request at all (the welcome says so). */
export function changeRequestRoots(state: Pick<StoreState, 'loaded' | 'error' | 'lists'>): TreeNode[] {
  if (!state.loaded) {
    if (state.error)
      return [
        {
          kind: 'message',
          id: 'load-failed',
          label: 'Retry loading change requests',
          icon: { id: 'refresh' },
          command: { id: 'changeControl.refresh', title: 'Refresh', args: [] },
        },
      ];
    return [{ kind: 'message', id: 'loading', label: 'Loading change requests…', icon: { id: 'loading~spin' } }];
  }
  if (isEmpty(state.lists)) return [];
  return groupChangeRequests(state.lists).map((group) => ({ kind: 'group', group }));
}

/** The rows under a group or a section (other rows have none). */
export function childNodes(node: TreeNode): TreeNode[] {
  if (node.kind === 'group') return node.group.items.map((cr) => ({ kind: 'changeRequest', cr, scope: node.group.id }));
  if (node.kind === 'reviewSection') return node.children;
  if (node.kind === 'check')
    return node.check.objects.map((object) => ({ kind: 'checkObject', check: node.check, object }));
  return [];
}

/** Checks of the selected request, in the review page's order; a row saying there are none (nothing when they failed to load: the view's message says why). */
export function checkRoots(checks: readonly MergeCheck[], failed: boolean): TreeNode[] {
  if (checks.length === 0)
    return failed ? [] : [{ kind: 'message', id: 'no-checks', label: 'No checks on this change request' }];
  return sortChecks(checks).map((check) => ({ kind: 'check', check }));
}

/** My Reviews: the requests waiting for my review, those waiting for my advisory review, and my reviews, the last updated first. */
export function myReviewRoots(
  state: Pick<StoreState, 'loaded' | 'lists' | 'myReviews'>,
  byId: (id: number) => ChangeRequest | undefined,
): TreeNode[] {
  if (!state.loaded) return [];
  const reviewed = [...state.myReviews].sort((a, b) => b.last_updated.localeCompare(a.last_updated));
  return [
    {
      kind: 'reviewSection',
      id: 'waiting',
      label: 'Waiting for my review',
      children: waitingForMe(state.lists).map((cr) => ({ kind: 'changeRequest', cr, scope: 'my-waiting' })),
    },
    {
      // Only a policy on trial names me: advisory, never "needs my review".
      kind: 'reviewSection',
      id: 'advisory',
      label: 'Advisory reviews (policy on trial)',
      children: advisoryForMe(state.lists).map((cr) => ({ kind: 'changeRequest', cr, scope: 'my-advisory' })),
    },
    {
      kind: 'reviewSection',
      id: 'reviewed',
      label: 'Reviewed by me',
      children: reviewed.map((review) => ({ kind: 'review', review, cr: byId(review.change_request) })),
    },
  ];
}

/** The requests waiting for my review (the *Needs my review* group). */
export function waitingForMe(lists: StoreState['lists']): ChangeRequest[] {
  return groupChangeRequests(lists).find((g) => g.id === 'needsMyReview')!.items;
}

/** The Change Requests view's badge: how many requests wait for my review. */
export function reviewBadge(waiting: number): { value: number; tooltip: string } | undefined {
  return waiting
    ? { value: waiting, tooltip: `${waiting} change request${waiting === 1 ? '' : 's'} waiting for your review` }
    : undefined;
}

/** The change request id a command argument stands for: a tree node, an id, or nothing. */
export function changeRequestIdOf(arg: unknown): number | undefined {
  if (typeof arg === 'number' && Number.isInteger(arg) && arg > 0) return arg;
  if (arg && typeof arg === 'object') {
    const node = arg as Partial<TreeNode>;
    if (node.kind === 'changeRequest' && node.cr) return node.cr.id;
    if (node.kind === 'review' && node.review) return node.review.change_request;
    if (node.kind === 'queueEntry' && node.entry) return node.entry.id;
  }
  return undefined;
}
