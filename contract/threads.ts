// Comment threads as the service's comments make them, for the extension and the webview alike:
// a root comment and its replies, oldest first.
import type { ChangeComment } from './api/change-control';

/** A root comment with its replies (threads are one level deep). */
export interface Thread {
  root: ChangeComment;
  replies: ChangeComment[];
}

/**
 * Whether a comment's suggestion can be applied now by someone the request lets apply
 * (`actions.apply_suggestions`): it is neither applied nor outdated.
 */
export function isApplicableSuggestion(c: Pick<ChangeComment, 'suggestion'>, allowed: boolean): boolean {
  return allowed && c.suggestion !== null && c.suggestion.applied_at === null && !c.suggestion.outdated;
}

const byTime = (a: ChangeComment, b: ChangeComment) => a.created.localeCompare(b.created) || a.id - b.id;

/**
 * The threads of these comments, in the order they were opened. A reply to a reply joins its
 * root's thread; a reply whose root is not among them (one the caller may not see) is a thread
 * of its own.
 */
export function groupThreads(comments: readonly ChangeComment[]): Thread[] {
  const byId = new Map(comments.map((c) => [c.id, c]));
  const threads = new Map<number, Thread>();
  const ordered = [...comments].sort(byTime);
  for (const c of ordered) {
    if (c.parent === null || !byId.has(c.parent)) threads.set(c.id, { root: c, replies: [] });
  }
  for (const c of ordered) {
    if (c.parent === null || !byId.has(c.parent)) continue;
    let root = byId.get(c.parent)!;
    while (root.parent !== null && byId.has(root.parent)) root = byId.get(root.parent)!;
    threads.get(root.id)?.replies.push(c);
  }
  return [...threads.values()];
}
