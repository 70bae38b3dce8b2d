/**
 * The comment thread rules of the specification (pure).
 *
 * 1. A reply must be on the same change as its parent.
 * 2. Threads are one level deep: a reply to a reply joins the same thread (its parent becomes
 *    the thread's root) on every path, the API included.
 * 3. A comment naming a change that does not exist is a validation error, not a server error.
 * 4. Comments are edited by their author only, and can be deleted.
 * 5. An open thread counts against the built-in `threads-resolved` check.
 * And: a comment is anchored to a change of the request's own branch; only a thread's root
 * carries `resolved`.
 */
export interface AnchorFacts {
  /** The change named, or undefined when no such change exists. */
  change: { id: number; branchId: number } | undefined;
  requestBranchId: number | null;
}

export function anchorRefusal(changeDiffId: number, facts: AnchorFacts): string | null {
  if (facts.requestBranchId === null) return 'The branch of this change request has been deleted; its changes can no longer take comments.';
  if (!facts.change) return `Change ${changeDiffId} does not exist.`;
  if (facts.change.branchId !== facts.requestBranchId) return `Change ${changeDiffId} is not a change in this change request's branch.`;
  return null;
}

export interface ParentFacts {
  id: number;
  changeRequestId: number;
  changeDiffId: number | null;
  parentId: number | null;
}

/** The thread root a reply attaches to: the parent itself, or the parent's own root (flattened). */
export function threadRootOf(parent: ParentFacts): number {
  return parent.parentId ?? parent.id;
}

export function replyRefusal(parent: ParentFacts | undefined, parentId: number, changeRequestId: number, changeDiffId: number, rootChangeDiffId: number | null): string | null {
  if (!parent || parent.changeRequestId !== changeRequestId) return `Comment ${parentId} does not exist on this change request.`;
  if (rootChangeDiffId !== changeDiffId) return 'A reply must be on the same change as the comment it replies to.';
  return null;
}

export function editRefusal(callerId: number, authorId: number): string | null {
  return callerId === authorId ? null : 'Only the author of a comment may edit it.';
}

export function resolveRefusal(isRoot: boolean): string | null {
  return isRoot ? null : 'Only the root comment of a thread can be resolved or reopened.';
}
