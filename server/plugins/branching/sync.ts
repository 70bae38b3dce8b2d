import {
  Conflict,
  deriveCtx,
  inTransaction,
  type Ctx,
  changedAttributes,
  sameAttributes,
  withAttributesOf,
  type Attributes,
  branchChanges,
  removeChange,
  saveChange,
  type BranchChange,
  type NetChange,
  computeConflicts,
} from '../../host';
import {
  actionResult,
  recordBranchUpdate,
  summarizeChange,
  type ActionEffect,
  type ActionOptions,
  type BranchActionResult,
} from './action-result';
import { loadBranch, setBranchFields } from './branches';
import { currentStates } from './changes';

/** What syncing does to one change: keep it, drop it (main already has it), or rebase it. */
export interface SyncStep {
  effect: Extract<ActionEffect, 'unchanged' | 'rebased' | 'dropped' | 'conflict'>;
  /** The change after the sync (null when dropped). */
  change: NetChange | null;
}

/**
 * Syncing one change with main's current state: the baseline (`original`) moves to main's
 * state; the branch's state keeps the attributes the branch changed and follows main for the
 * others. An update of an object main deleted cannot be rebased and stays a conflict; a
 * change main already holds is dropped.
 */
export function syncStep(change: NetChange, current: Attributes | null): SyncStep {
  const keep: SyncStep = { effect: 'unchanged', change };
  if (change.action === 'create') return keep;
  if (change.action === 'delete') {
    if (current === null) return { effect: 'dropped', change: null };
    if (sameAttributes(current, change.original)) return keep;
    return { effect: 'rebased', change: { action: 'delete', original: current, modified: null } };
  }
  if (current === null) return { effect: 'conflict', change };
  const modified = withAttributesOf(
    current,
    change.modified ?? {},
    changedAttributes(change.original, change.modified),
  );
  if (sameAttributes(modified, current)) return { effect: 'dropped', change: null };
  if (sameAttributes(current, change.original) && sameAttributes(modified, change.modified)) return keep;
  return { effect: 'rebased', change: { action: 'update', original: current, modified } };
}

async function applySyncStep(ctx: Ctx, change: BranchChange, step: SyncStep): Promise<void> {
  if (step.effect === 'dropped') await removeChange(ctx, change.id);
  else if (step.effect === 'rebased' && step.change)
    await saveChange(ctx, change.branchId, change.objectType, change.objectId, step.change, change);
}

/**
 * Brings main's changes since the last sync into a ready branch: every change is rebased on
 * main's current state (conflicts recomputed), `last_sync` is set and the `synced` hooks run.
 * With `commit: false` it only reports. Each reported change carries its conflicts after the sync.
 */
export async function syncBranch(ctx: Ctx, branchId: number, options: ActionOptions): Promise<BranchActionResult> {
  return inTransaction(ctx, async (tx) => {
    const main = deriveCtx(tx, { branch: null });
    const branch = await loadBranch(main, branchId);
    if (branch.status !== 'ready')
      throw new Conflict(`Branch "${branch.name}" is ${branch.status}; only a ready branch can be synced.`);

    const changes = await branchChanges(main, branch.id);
    const currents = await currentStates(main, changes);
    const summary = [];
    for (const change of changes) {
      const current = currents.get(change.id) ?? null;
      const step = syncStep(change, current);
      summary.push(
        summarizeChange(main, change, step.effect, step.change ? computeConflicts(step.change, current) : null),
      );
      if (options.commit) await applySyncStep(main, change, step);
    }
    if (!options.commit) return actionResult(main, branch, false, summary);

    const synced = await setBranchFields(main, branch.id, { last_sync: main.host.clock.now().toISOString() });
    await recordBranchUpdate(main, branch, synced);
    await main.host.branchHooks.run('synced', main, { branch: synced });
    return actionResult(main, synced, true, summary);
  });
}
