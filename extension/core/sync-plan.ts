// What syncing a branch with main would do, in words, from the service's dry run
// (`branches/{id}/sync/` with `commit: false`): the confirmation shown before anything is written.
import type { BranchActionResult } from '../../contract/api/branching';
import { overwrittenLine, type OverwrittenValue } from './merge-confirmation';

export interface SyncConfirmation {
  message: string;
  detail: string;
  /** The button that syncs; null when there is nothing to sync (main brings nothing). */
  confirm: string | null;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const MAX_SETTLED = 20;

/**
 * The dry run as the question asked before syncing. `conflicting`: the values main changed
 * under the branch before the sync (from its changes). A sync moves each baseline to main as it
 * is, so those that the dry run no longer reports in conflict are settled in the branch's favour:
 * afterwards the merge replaces main's values without asking, so the question names them.
 */
export function syncConfirmation(
  branchName: string,
  dryRun: BranchActionResult,
  conflicting: readonly OverwrittenValue[] = [],
): SyncConfirmation {
  const rebased = dryRun.changes.filter((c) => c.effect === 'rebased');
  const dropped = dryRun.changes.filter((c) => c.effect === 'dropped');
  const conflicts = dryRun.changes.filter((c) => c.effect === 'conflict' || (c.conflicts?.length ?? 0) > 0);
  const lines: string[] = [];
  if (rebased.length)
    lines.push(
      `${plural(rebased.length, 'change is', 'changes are')} rebased on main as it is now: ${rebased.map((c) => c.object_repr).join(', ')}.`,
    );
  if (dropped.length)
    lines.push(
      `${plural(dropped.length, 'change leaves', 'changes leave')} the branch (main already has it): ${dropped.map((c) => c.object_repr).join(', ')}.`,
    );
  if (conflicts.length)
    lines.push(
      `Still in conflict afterwards: ${conflicts
        .map((c) => (c.conflicts?.length ? `${c.object_repr} (${c.conflicts.join(', ')})` : c.object_repr))
        .join(', ')}. Edit them in the branch, or merge acknowledging them.`,
    );
  const stillInConflict = new Set(conflicts.map((c) => c.object_repr));
  const settled = conflicting.filter((v) => !stillInConflict.has(v.object));
  if (settled.length) {
    const shown = settled.slice(0, MAX_SETTLED).map(overwrittenLine);
    if (settled.length > MAX_SETTLED) shown.push(`… and ${settled.length - MAX_SETTLED} more.`);
    lines.push(
      [
        `The sync keeps the branch's ${settled.length === 1 ? 'value where main changed it' : 'values where main changed them'} too; afterwards ${settled.length === 1 ? 'it is' : 'they are'} no conflict, and merging replaces main's ${settled.length === 1 ? 'value' : 'values'} without asking:`,
        ...shown,
      ].join('\n'),
    );
  }
  if (rebased.length === 0 && dropped.length === 0 && conflicts.length === 0)
    return {
      message: `Branch ${branchName} is in step with main.`,
      detail: 'Syncing would change none of its changes.',
      confirm: null,
    };
  lines.push('Reviews given on the changes a sync moves go stale, as for any edit.');
  return { message: `Sync branch ${branchName} with main?`, detail: lines.join('\n\n'), confirm: 'Sync Branch' };
}
