import {
  Conflict,
  deriveCtx,
  inTransaction,
  type Ctx,
  changedAttributes,
  sameAttributes,
  withAttributesOf,
  branchChanges,
  savePremerge,
  type BranchChange,
  deleteMainObject,
  putMainObject,
  type ObjectState,
  logObjectWrite,
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
import { catalogueType } from './catalogue';
import { mainStates } from './changes';
import { conflictRefusal, conflictsFound } from './merge-conflicts';

/** What merging one change does to main: the object's new state, or null to delete it. */
export interface MainStep {
  effect: ActionEffect;
  target: ObjectState | null;
}

/**
 * Merging one change onto main's current object. An update applies the attributes the
 * branch changed and keeps main's other attributes; an update of an object main deleted
 * recreates it from the branch's state.
 */
export function mergeStep(change: BranchChange, current: ObjectState | undefined, now: string): MainStep {
  const fresh = (attrs: ObjectState['attrs']): ObjectState => ({
    id: change.objectId,
    objectType: change.objectType,
    attrs,
    created: current?.created ?? change.created,
    lastUpdated: now,
  });
  if (change.action === 'delete')
    return current ? { effect: 'deleted', target: null } : { effect: 'unchanged', target: null };
  const modified = change.modified ?? {};
  if (!current) return { effect: 'created', target: fresh(modified) };
  const attrs =
    change.action === 'create'
      ? modified
      : withAttributesOf(current.attrs, modified, changedAttributes(change.original, modified));
  if (sameAttributes(attrs, current.attrs)) return { effect: 'unchanged', target: current };
  return { effect: 'updated', target: fresh(attrs) };
}

/** Writes one step on main and records it in main's changelog. */
export async function applyMainStep(
  main: Ctx,
  change: BranchChange,
  current: ObjectState | undefined,
  step: MainStep,
): Promise<void> {
  if (step.effect === 'unchanged') return;
  const def = catalogueType(main.host, change.objectType);
  if (step.target === null) {
    await deleteMainObject(main, change.objectId);
    await logObjectWrite(main, def, 'delete', current, undefined);
    return;
  }
  await putMainObject(main, step.target);
  await logObjectWrite(main, def, current ? 'update' : 'create', current, step.target);
}

/** Conflicts named in a merge's refusal or dry run (those beyond are counted). */
const CONFLICTS_NAMED = 200;

/**
 * Merges a branch into main, as the context's user: the merge validators are consulted
 * first (a refusal is 409 and nothing is written); a branch that conflicts with main merges only
 * when the merger acknowledges the conflicts (otherwise 409 naming each conflicting object and
 * attribute the merger may see, `conflicts`); then every change is applied to main (main's prior
 * state kept for revert, each write in main's changelog), the branch becomes `merged`, and the
 * `merged` hooks run, told what was acknowledged. With `commit: false` it only reports, the
 * conflicts included.
 */
export async function mergeBranch(ctx: Ctx, branchId: number, options: ActionOptions): Promise<BranchActionResult> {
  return inTransaction(ctx, async (tx) => {
    const main = deriveCtx(tx, { branch: null });
    const branch = await loadBranch(main, branchId);
    if (branch.status !== 'ready')
      throw new Conflict(`Branch "${branch.name}" is ${branch.status}; only a ready branch can be merged.`);
    const refusal = await main.host.mergeValidators.firstRefusal(main, branch);
    if (refusal) throw new Conflict(refusal);
    const found = await conflictsFound(main, branch.id, CONFLICTS_NAMED);
    if (found.count > 0 && options.commit && !options.acknowledgeConflicts)
      throw new Conflict(conflictRefusal(branch.name, found), { conflicts: found.shown });

    const now = main.host.clock.now().toISOString();
    const changes = await branchChanges(main, branch.id);
    const currents = await mainStates(main, changes);
    const summary = [];
    for (const change of changes) {
      const current = currents.get(change.id);
      const step = mergeStep(change, current, now);
      summary.push(summarizeChange(main, change, step.effect, computeConflicts(change, current?.attrs ?? null)));
      if (!options.commit) continue;
      await savePremerge(main, change.id, {
        object: current ? { attrs: current.attrs, created: current.created, lastUpdated: current.lastUpdated } : null,
      });
      await applyMainStep(main, change, current, step);
    }
    if (!options.commit) return { ...actionResult(main, branch, false, summary), conflicts: found.shown };

    const merged = await setBranchFields(main, branch.id, {
      status: 'merged',
      merged_time: now,
      merged_by: main.user?.id ?? null,
    });
    await recordBranchUpdate(main, branch, merged);
    await main.host.branchHooks.run('merged', main, {
      branch: merged,
      acknowledgedConflicts: found.count > 0 ? found.acknowledged : null,
    });
    return { ...actionResult(main, merged, true, summary), conflicts: found.shown };
  });
}
