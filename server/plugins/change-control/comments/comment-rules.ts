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

/** Fields the service computes: never an attribute a suggestion may set. */
const COMPUTED_FIELDS = new Set(['id', 'url', 'display', 'created', 'last_updated']);
/** A top-level attribute name (as the object endpoints accept them). */
const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Why a suggestion for `attribute` cannot be made on this change (its action and the branch's
 * state of the object), or null. The attribute exists in the branch's state, or can be set there:
 * a new key of a mapping that exists (a top-level one named as the object endpoints accept). A
 * deleted object takes no suggestion; neither do the fields the service computes.
 */
export function suggestionRefusal(attribute: string, change: { action: string; modified: unknown }): string | null {
  const parts = attribute.split('.');
  if (parts.some((part) => part === '')) return `"${attribute}" is not a dot path (empty part).`;
  if (parts.includes('__proto__')) return '"__proto__" cannot be an attribute.';
  if (change.action === 'delete' || change.modified === null || change.modified === undefined)
    return 'The object is deleted in the branch: a deleted object cannot take suggestions.';
  if (COMPUTED_FIELDS.has(parts[0]!)) return `"${parts[0]}" is computed by the service and cannot be suggested.`;
  if (pathExists(change.modified, attribute)) return null;
  const parent = parts.length === 1 ? change.modified : valueAtPath(change.modified, parts.slice(0, -1).join('.'));
  const isMapping = parent !== null && typeof parent === 'object' && !Array.isArray(parent);
  if (!isMapping)
    return `The branch's state of the object has no attribute "${attribute}", and it cannot be set there.`;
  if (parts.length === 1 && !ATTRIBUTE_NAME.test(attribute))
    return 'Attribute names are letters, digits and underscores, not starting with a digit.';
  return null;
}

/** A suggestion lies at or under its thread's attribute (anywhere, for a thread on the whole object). */
export function suggestionThreadRefusal(threadAttribute: string | null, suggested: string): string | null {
  if (threadAttribute === null || suggested === threadAttribute || suggested.startsWith(`${threadAttribute}.`))
    return null;
  return `A suggestion in a thread about "${threadAttribute}" must be for it or an attribute under it.`;
}

/** The attribute's value in a state, as a suggestion records it: `{value}`, or `{}` when absent. */
export function recordedValue(state: unknown, path: string): { value?: unknown } {
  const value = state === null || state === undefined ? ABSENT : valueAtPath(state, path);
  return value === ABSENT ? {} : { value };
}

/**
 * Whether a suggestion is outdated: it is not applied, and its change is gone, the object deleted,
 * or the attribute's value in the branch now is not what it was when suggested.
 */
export function isSuggestionOutdated(
  suggestion: { attribute: string; previous: { value?: unknown } },
  change: { action: string; modified: unknown } | undefined,
  applied: boolean,
): boolean {
  if (applied) return false;
  if (!change || change.action === 'delete' || change.modified === null) return true;
  const now = recordedValue(change.modified, suggestion.attribute);
  return !isDeepStrictEqual(now, suggestion.previous);
}

/**
 * `state` with `value` set at a dot path (a copy: nothing of `state` is modified). The parent of
 * the path exists (`suggestionRefusal` said so); array items are set by index.
 */
export function withValueAt(state: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const parts = path.split('.');
  const set = (node: unknown, index: number): unknown => {
    const key = parts[index]!;
    const last = index === parts.length - 1;
    if (Array.isArray(node)) {
      const copy = [...node];
      copy[Number(key)] = last ? value : set(copy[Number(key)], index + 1);
      return copy;
    }
    const copy = { ...(node as Record<string, unknown>) };
    // Defined, not assigned: a key is data whatever its name.
    Object.defineProperty(copy, key, {
      value: last ? value : set(copy[key], index + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return copy;
  };
  return set(state, 0) as Record<string, unknown>;
}

/** Whether two dot paths overlap (one is the other or lies under it): two such suggestions cannot be applied together. */
export function pathsOverlap(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}
