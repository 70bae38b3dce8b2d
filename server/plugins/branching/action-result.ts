import type { BranchActionResult } from '../../../contract/api/branching';
import { recordChange, type Ctx, type BranchRow, type BranchChange } from '../../host';
import { presentBranch, BRANCH_TYPE } from './branches';
import { changeRepr } from './changes';

export type { BranchActionResult };
export type ActionEffect = BranchActionResult['changes'][number]['effect'];
export type ActionChange = BranchActionResult['changes'][number];

export interface ActionOptions {
  /** False: a dry run that reports what would happen and writes nothing. */
  commit: boolean;
  /** A merge: the merger acknowledges the branch's conflicts with main (the branch's values win). */
  acknowledgeConflicts?: boolean;
}

export function summarizeChange(
  ctx: Ctx,
  change: BranchChange,
  effect: ActionEffect,
  conflicts: string[] | null,
): ActionChange {
  return {
    id: change.id,
    object_type: change.objectType,
    object_id: change.objectId,
    object_repr: changeRepr(ctx, change),
    action: change.action,
    effect,
    conflicts,
  };
}

export function actionResult(
  ctx: Ctx,
  branch: BranchRow,
  commit: boolean,
  changes: ActionChange[],
): BranchActionResult {
  return { branch: presentBranch(ctx, branch), commit, changes };
}

/** The branch's own changelog entry for an action that moved it (status, last sync, merge fields). */
export async function recordBranchUpdate(ctx: Ctx, before: BranchRow, after: BranchRow): Promise<void> {
  await recordChange(ctx, {
    action: 'update',
    objectType: BRANCH_TYPE,
    objectId: after.id,
    repr: after.name,
    prechange: presentBranch(ctx, before),
    postchange: presentBranch(ctx, after),
  });
}
