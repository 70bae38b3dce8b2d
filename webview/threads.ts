// Comment threads: grouped under their change, and placed at the attribute they are anchored to.
import type { ChangeComment } from '../contract/api/change-control';
import { groupThreads, isApplicableSuggestion, type Thread } from '../contract/threads';
import type { ChangeRequestSnapshot } from '../contract/webview/protocol';

/** Threads per change (null: comments anchored to no change), oldest first. */
export function threadsByChange(comments: readonly ChangeComment[]): Map<number | null, Thread[]> {
  const out = new Map<number | null, Thread[]>();
  for (const t of groupThreads(comments)) {
    const list = out.get(t.root.change_diff) ?? [];
    list.push(t);
    out.set(t.root.change_diff, list);
  }
  return out;
}

/** The top-level attribute of a dot path: `custom_fields.owner` → `custom_fields`, `interfaces.0.name` → `interfaces`. */
export function topAttribute(path: string): string {
  const dot = path.indexOf('.');
  return dot < 0 ? path : path.slice(0, dot);
}

export interface Placement {
  /** Threads shown under an attribute row, by the row's name. */
  byAttribute: Map<string, Thread[]>;
  /** Threads shown at the object: those naming no attribute, and those whose attribute's row is not shown. */
  object: Thread[];
}

/**
 * Where a change's threads show: under the row of the attribute they name when that row is
 * shown; otherwise at the object (a thread whose attribute no longer differs is kept there,
 * marked outdated by its renderer, never dropped).
 */
export function placeThreads(threads: readonly Thread[], shownRows: readonly string[]): Placement {
  const shown = new Set(shownRows);
  const byAttribute = new Map<string, Thread[]>();
  const object: Thread[] = [];
  for (const t of threads) {
    const attribute = t.root.attribute;
    const row = attribute ? topAttribute(attribute) : null;
    if (row !== null && shown.has(row)) {
      const list = byAttribute.get(row) ?? [];
      list.push(t);
      byAttribute.set(row, list);
    } else object.push(t);
  }
  return { byAttribute, object };
}

/** Every comment of the threads, in the order shown (for telling whether a change's threads changed). */
export function threadComments(threads: readonly Thread[]): ChangeComment[] {
  return threads.flatMap((t) => [t.root, ...t.replies]);
}

/** Open (unresolved) threads. */
export function openThreadCount(threads: readonly Thread[]): number {
  return threads.reduce((n, t) => n + (t.root.resolved ? 0 : 1), 0);
}

/** The comments whose suggestions the user may apply now (Apply all), oldest first. */
export function applicableSuggestionIds(snap: Pick<ChangeRequestSnapshot, 'comments' | 'changeRequest'>): number[] {
  const allowed = snap.changeRequest.actions.apply_suggestions?.allowed === true;
  return snap.comments
    .filter((c) => isApplicableSuggestion(c, allowed))
    .map((c) => c.id)
    .sort((a, b) => a - b);
}
