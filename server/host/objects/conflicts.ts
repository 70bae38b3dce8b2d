import { changedAttributes, sameValue, type Attributes } from './attributes';
import type { NetChange } from './net-effect';

/**
 * The attributes of a change that conflict with main's state now (`current`, null when the
 * object is gone), or null when none do:
 * - an update: attributes main changed since the baseline that the branch also changed, to a
 *   different value; when main deleted the object, every attribute the branch changed;
 * - a delete of an object main updated: the attributes main changed;
 * - a create never conflicts.
 */
export function computeConflicts(change: NetChange, current: Attributes | null): string[] | null {
  let names: string[] = [];
  if (change.action === 'update') {
    const branchChanged = changedAttributes(change.original, change.modified);
    if (current === null) names = branchChanged;
    else {
      const mainChanged = new Set(changedAttributes(change.original, current));
      names = branchChanged.filter((a) => mainChanged.has(a) && !sameValue(change.modified?.[a], current[a]));
    }
  } else if (change.action === 'delete' && current !== null) {
    names = changedAttributes(change.original, current);
  }
  return names.length > 0 ? names : null;
}

/**
 * Why the merge could not apply the change as it stands against main's state now (`current`,
 * null when the object is gone), or null when it would apply cleanly: a create of an id main
 * already holds, an update of an object main deleted, or conflicting attributes (`conflicts`,
 * from `computeConflicts`). An object type the catalogue no longer knows is the check's to tell.
 */
export function mergeProblem(
  change: NetChange,
  current: Attributes | null,
  conflicts: readonly string[] | null,
): string | null {
  if (change.action === 'create' && current !== null) return 'Main already holds an object with this id.';
  if (change.action === 'update' && current === null) return 'Main deleted it since the branch changed it.';
  if (conflicts) return `Conflicts with main on ${conflicts.join(', ')}.`;
  return null;
}
