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
 * carries `resolved`. A thread's root may name an `attribute` of its change (a dot path that
 * exists in the change's original or modified state); its replies carry the root's.
 */
import { isDeepStrictEqual } from 'node:util';

export interface AnchorFacts {
  /** The change named, or undefined when no such change exists. */
  change: { id: number; branchId: number } | undefined;
  requestBranchId: number | null;
}

export function anchorRefusal(changeDiffId: number, facts: AnchorFacts): string | null {
  if (facts.requestBranchId === null)
    return 'The branch of this change request has been deleted; its changes can no longer take comments.';
  if (!facts.change) return `Change ${changeDiffId} does not exist.`;
  if (facts.change.branchId !== facts.requestBranchId)
    return `Change ${changeDiffId} is not a change in this change request's branch.`;
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

export function replyRefusal(
  parent: ParentFacts | undefined,
  parentId: number,
  changeRequestId: number,
  changeDiffId: number,
  rootChangeDiffId: number | null,
): string | null {
  if (!parent || parent.changeRequestId !== changeRequestId)
    return `Comment ${parentId} does not exist on this change request.`;
  if (rootChangeDiffId !== changeDiffId) return 'A reply must be on the same change as the comment it replies to.';
  return null;
}

export function editRefusal(callerId: number, authorId: number): string | null {
  return callerId === authorId ? null : 'Only the author of a comment may edit it.';
}

export function resolveRefusal(isRoot: boolean): string | null {
  return isRoot ? null : 'Only the root comment of a thread can be resolved or reopened.';
}

/** What `valueAtPath` answers for a path that does not exist. */
const ABSENT: unique symbol = Symbol('absent');

/** The value at a dot path (`config`, `custom_fields.owner`, `interfaces.0.name` for array indices), or ABSENT. */
export function valueAtPath(state: unknown, path: string): unknown {
  let value: unknown = state;
  for (const part of path.split('.')) {
    if (Array.isArray(value)) {
      if (!/^(0|[1-9]\d*)$/.test(part) || Number(part) >= value.length) return ABSENT;
      value = value[Number(part)];
    } else if (value !== null && typeof value === 'object') {
      if (!Object.prototype.hasOwnProperty.call(value, part)) return ABSENT;
      value = (value as Record<string, unknown>)[part];
    } else {
      return ABSENT;
    }
  }
  return value;
}

/** Whether a dot path names something in this state (a null value counts; a missing key does not). */
export function pathExists(state: unknown, path: string): boolean {
  return state !== null && state !== undefined && valueAtPath(state, path) !== ABSENT;
}

/** Why `attribute` cannot anchor a thread to this change (original and modified states), or null. */
export function attributeRefusal(attribute: string, original: unknown, modified: unknown): string | null {
  if (attribute.split('.').some((part) => part === '')) return `"${attribute}" is not a dot path (empty part).`;
  if (pathExists(original, attribute) || pathExists(modified, attribute)) return null;
  return `The change has no attribute "${attribute}" in its original or modified state.`;
}

/** A reply carries its root's attribute: naming none or the same is fine, naming another is refused. */
export function replyAttributeRefusal(rootAttribute: string | null, given: string | null | undefined): string | null {
  if (given === undefined || given === null || given === rootAttribute) return null;
  return rootAttribute === null
    ? 'A reply carries the attribute of its thread, and this thread names none.'
    : `A reply carries the attribute of its thread ("${rootAttribute}").`;
}

/**
 * Whether a thread is outdated: its change is gone, or the attribute it names no longer differs
 * between the change's original and modified state (a missing value differs from a null one).
 * A thread on the whole object is outdated only when its change is gone.
 */
export function isOutdated(
  attribute: string | null,
  change: { original: unknown; modified: unknown } | undefined,
): boolean {
  if (!change) return true;
  if (attribute === null) return false;
  return isDeepStrictEqual(valueAtPath(change.original, attribute), valueAtPath(change.modified, attribute));
}
