import {
  Conflict,
  deriveCtx,
  inTransaction,
  type Ctx,
  sameAttributes,
  branchChanges,
  savePremerge,
  type BranchChange,
  type ObjectState,
  forgetBranchState,
  CHANGE_CONFLICTS_KEEPER,
} from '../../host';
import {
  actionResult,
  recordBranchUpdate,
  summarizeChange,
  type ActionOptions,
  type BranchActionResult,
} from './action-result';
import { loadBranch, setBranchFields } from './branches';
import { mainStates } from './changes';
import { applyMainStep, type MainStep } from './merge';

/** Undoing one merged change: main's object goes back to its state just before the merge. */
export function revertStep(change: BranchChange, current: ObjectState | undefined): MainStep {
  if (!change.premerge) return { effect: 'unchanged', target: current ?? null };
  const before = change.premerge.object;
  if (before === null) return current ? { effect: 'deleted', target: null } : { effect: 'unchanged', target: null };
  const target: ObjectState = {
    id: change.objectId,
    objectType: change.objectType,
    attrs: before.attrs,
    created: before.created,
    lastUpdated: before.lastUpdated,
  };
  if (
    current &&
    sameAttributes(current.attrs, target.attrs) &&
    current.created === target.created &&
    current.lastUpdated === target.lastUpdated
  ) {
    return { effect: 'unchanged', target };
  }
  return { effect: current ? 'updated' : 'created', target };
}

/**
 * Undoes a merge on main from the state saved when it merged (latest change first), records
 * each write in main's changelog, makes the branch `ready` again and runs the `reverted`
 * hooks. With `commit: false` it only reports.
 */
export async function revertBranch(ctx: Ctx, branchId: number, options: ActionOptions): Promise<BranchActionResult> {
  return inTransaction(ctx, async (tx) => {
    const main = deriveCtx(tx, { branch: null });
    const branch = await loadBranch(main, branchId);
    if (branch.status !== 'merged')
      throw new Conflict(`Branch "${branch.name}" is ${branch.status}; only a merged branch can be reverted.`);

    const changes = (await branchChanges(main, branch.id)).reverse();
    const currents = await mainStates(main, changes);
    const summary = [];
    for (const change of changes) {
      const current = currents.get(change.id);
      const step = revertStep(change, current);
      summary.push(summarizeChange(main, change, step.effect, null));
      if (!options.commit) continue;
      await applyMainStep(main, change, current, step);
      await savePremerge(main, change.id, null);
    }
    summary.reverse();
    if (!options.commit) return actionResult(main, branch, false, summary);

    const reverted = await setBranchFields(main, branch.id, { status: 'ready', merged_time: null, merged_by: null });
    // A merged branch's conflicts with main are not kept: the next reader recomputes them.
    await forgetBranchState(main, branch.id, CHANGE_CONFLICTS_KEEPER);
    await recordBranchUpdate(main, branch, reverted);
    await main.host.branchHooks.run('reverted', main, { branch: reverted });
    return actionResult(main, reverted, true, summary);
  });
}
