// What syncing a branch with main would do, in words, from the service's dry run
// (`branches/{id}/sync/` with `commit: false`): the confirmation shown before anything is written.
import type { BranchActionResult } from '../../contract/api/branching';

export interface SyncConfirmation {
  message: string;
  detail: string;
  /** The button that syncs; null when there is nothing to sync (main brings nothing). */
  confirm: string | null;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The dry run as the question asked before syncing. */
export function syncConfirmation(branchName: string, dryRun: BranchActionResult): SyncConfirmation {
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
  if (rebased.length === 0 && dropped.length === 0 && conflicts.length === 0)
    return {
      message: `Branch ${branchName} is in step with main.`,
      detail: 'Syncing would change none of its changes.',
      confirm: null,
    };
  lines.push('Reviews given on the changes a sync moves go stale, as for any edit.');
  return { message: `Sync branch ${branchName} with main?`, detail: lines.join('\n\n'), confirm: 'Sync Branch' };
}
