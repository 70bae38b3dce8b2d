// The "Changed Objects" tree of the open change request: its changes grouped by object type, each
// with its action, its open threads and a "viewed" checkbox; the order Next/Previous Change walk
// in. Plain data (TreeItemData); no VS Code here.
import type { ChangeDiff } from '../../contract/api/branching';
import { CHANGE_DECORATION, changeDocument, changeKind, threadSide } from './change-documents';
import { CHANGE_ACTION_LABEL, type IconRef } from '../../contract/labels';
import { exactTime, relativeTime } from '../../contract/time';
import { escapeMarkdown, type TreeItemData } from './tree-items';

export interface ChangeGroup {
  objectType: string;
  changes: ChangeDiff[];
}

const byObject = (a: ChangeDiff, b: ChangeDiff) =>
  a.object_repr.localeCompare(b.object_repr) || a.object_id - b.object_id || a.id - b.id;

/** Changes grouped by object type (types in name order, objects by name within each). */
export function groupChanges(changes: readonly ChangeDiff[]): ChangeGroup[] {
  const groups = new Map<string, ChangeDiff[]>();
  for (const c of changes) groups.set(c.object_type, [...(groups.get(c.object_type) ?? []), c]);
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([objectType, list]) => ({ objectType, changes: list.sort(byObject) }));
}

/** The changes in the order the tree shows them. */
export function treeOrder(changes: readonly ChangeDiff[]): ChangeDiff[] {
  return groupChanges(changes).flatMap((g) => g.changes);
}

/**
 * The change Next (+1) or Previous (-1) goes to from `currentId`: the nearest one in that
 * direction that is not viewed, wrapping around; from nowhere, the first (or last) not viewed.
 * The current change itself only when it is not shown (`currentShown` false) and nothing else
 * is left. Null when there is nowhere to go.
 */
export function adjacentChange(
  order: readonly ChangeDiff[],
  currentId: number | null,
  isViewed: (c: ChangeDiff) => boolean,
  direction: 1 | -1,
  currentShown = true,
): ChangeDiff | null {
  const n = order.length;
  if (n === 0) return null;
  const at = currentId === null ? -1 : order.findIndex((c) => c.id === currentId);
  const start = at < 0 ? (direction === 1 ? -1 : n) : at;
  for (let step = 1; step <= n; step += 1) {
    const i = (((start + direction * step) % n) + n) % n;
    const c = order[i];
    if (c.id === currentId && currentShown) continue;
    if (!isViewed(c)) return c;
  }
  return null;
}

export const CHANGE_KIND_ICON = {
  added: { id: 'diff-added', color: CHANGE_DECORATION.added.color },
  modified: { id: 'diff-modified', color: CHANGE_DECORATION.modified.color },
  deleted: { id: 'diff-removed', color: CHANGE_DECORATION.deleted.color },
  conflicted: { id: 'warning', color: CHANGE_DECORATION.conflicted.color },
} as const;

function threadWords(n: number): string {
  return `${n} open thread${n === 1 ? '' : 's'}`;
}

export function changeGroupItem(changeRequestId: number, group: ChangeGroup, viewed: number): TreeItemData {
  return {
    id: `changes:${changeRequestId}/type:${group.objectType}`,
    label: group.objectType,
    description: viewed ? `${viewed} of ${group.changes.length} viewed` : String(group.changes.length),
    contextValue: 'changeGroup;',
    collapsible: 'expanded',
  };
}

export function changedObjectItem(
  changeRequestId: number,
  change: ChangeDiff,
  opts: { threads: number; viewed: boolean; now: Date },
): TreeItemData {
  const kind = changeKind(change);
  const conflicts = change.conflicts ?? [];
  const description = [
    CHANGE_ACTION_LABEL[change.action],
    conflicts.length ? 'conflicts' : '',
    opts.threads ? threadWords(opts.threads) : '',
  ]
    .filter((p) => p)
    .join(' · ');
  const lines = [
    `**${escapeMarkdown(change.object_repr)}** (${escapeMarkdown(change.object_type)})`,
    '',
    CHANGE_DECORATION[kind].tooltip,
  ];
  if (conflicts.length) lines.push('', `Conflicts with main on: ${conflicts.map(escapeMarkdown).join(', ')}`);
  if (opts.threads) lines.push('', threadWords(opts.threads));
  lines.push(
    '',
    `Changed ${relativeTime(change.last_updated, opts.now)} (${escapeMarkdown(exactTime(change.last_updated))})`,
  );
  const side = threadSide(change, null);
  return {
    id: `changes:${changeRequestId}/change:${change.id}`,
    label: change.object_repr,
    description,
    tooltip: lines.join('\n'),
    icon: CHANGE_KIND_ICON[kind],
    contextValue: `changedObject;${conflicts.length && change.current ? 'conflict;' : ''}${opts.viewed ? 'viewed;' : ''}`,
    collapsible: 'none',
    command: { id: 'changeControl.openChangeDiff', title: 'Open Change', args: [changeRequestId, change.id] },
    checkbox: {
      checked: opts.viewed,
      tooltip: opts.viewed ? 'Viewed (clears itself when the change changes)' : 'Mark as viewed',
    },
    resource: changeDocument(changeRequestId, side, change),
  };
}

/** The rows of the Changed Objects tree (the changes of a group are asked for when it opens). */
export type ChangedObjectsNode =
  | { kind: 'group'; group: ChangeGroup }
  | { kind: 'change'; change: ChangeDiff }
  | { kind: 'orphans'; count: number }
  | { kind: 'message'; id: string; label: string; icon?: IconRef };

/**
 * The tree's top rows for a request: a row while its data loads (nothing when loading failed: the
 * view's message says why), a row when the branch has no changes, or the groups, then a row for
 * the threads whose change left the branch.
 */
export function changedObjectsRoots(
  data: { changes: readonly ChangeDiff[]; branchDeleted: boolean } | undefined,
  loadFailed: boolean,
  orphanThreads: number,
): ChangedObjectsNode[] {
  if (!data)
    return loadFailed
      ? []
      : [{ kind: 'message', id: 'loading', label: 'Loading the changes…', icon: { id: 'loading~spin' } }];
  if (data.changes.length === 0)
    return [
      {
        kind: 'message',
        id: 'no-changes',
        label: data.branchDeleted ? 'The branch is deleted: no changes to show.' : 'The branch has no changes.',
      },
    ];
  const roots: ChangedObjectsNode[] = groupChanges(data.changes).map((group) => ({ kind: 'group', group }));
  if (orphanThreads) roots.push({ kind: 'orphans', count: orphanThreads });
  return roots;
}

/** The row of the threads whose change is no longer in the branch: it opens the request, where they are kept. */
export function orphanThreadsItem(changeRequestId: number, count: number): TreeItemData {
  return {
    id: `changes:${changeRequestId}/orphans`,
    label: `${count} thread${count === 1 ? '' : 's'} on changes no longer in the branch`,
    tooltip: 'These threads are kept: open the change request to read them.',
    icon: { id: 'comment-unresolved' },
    contextValue: 'orphans;',
    collapsible: 'none',
    command: { id: 'changeControl.openChangeRequest', title: 'Open Change Request', args: [changeRequestId] },
  };
}

/**
 * The view's description: the request and how far the review of its changes went. (No badge: a
 * view's badge adds to the activity bar's, which counts only the reviews waiting for the user.)
 */
export function changedObjectsDescription(
  cr: { title: string; branch_name: string } | undefined,
  total: number,
  viewed: number,
): string | undefined {
  if (!cr) return undefined;
  const name = cr.title || cr.branch_name;
  return total ? `${name} · ${viewed} of ${total} viewed` : name;
}
