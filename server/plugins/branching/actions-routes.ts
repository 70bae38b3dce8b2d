import { branchAction, branchActionResult, branchMerge } from '../../../contract/api/branching';
import { type Ctx, type Host, branchChanges, ChangeVisibility } from '../../host';
import { getViewable, parseId, requireObjectPermission } from '../../host/http';
import type { ActionOptions, BranchActionResult } from './action-result';
import { branchResource, BRANCHES_PATH, BRANCH_TYPE } from './branches';
import { mergeBranch } from './merge';
import { revertBranch } from './revert';
import { syncBranch } from './sync';

type BranchAction = (ctx: Ctx, branchId: number, options: ActionOptions) => Promise<BranchActionResult>;
type MergeBody = { commit?: boolean; acknowledge_conflicts?: boolean };

const ACTIONS: Array<{ name: 'sync' | 'merge' | 'revert'; run: BranchAction; summary: string }> = [
  { name: 'sync', run: syncBranch, summary: "Bring main's changes since the last sync into the branch" },
  {
    name: 'merge',
    run: mergeBranch,
    summary: "Apply the branch's changes to main (the merge gate is consulted first)",
  },
  { name: 'revert', run: revertBranch, summary: 'Undo the merge of the branch on main' },
];

/**
 * `branches/{id}/sync|merge|revert/`: POST `{"commit": true}`; `commit` false or absent is a
 * dry run that reports what would happen and writes nothing. The answer is the branch and a
 * summary per change (`branchActionResult`).
 */
export function registerBranchActions(host: Host): void {
  for (const action of ACTIONS) {
    host.routes.add({
      method: 'POST',
      path: `${BRANCHES_PATH}:id/${action.name}/`,
      access: { permission: `branching.${action.name}_branch` },
      summary: action.summary,
      tag: 'branching',
      body: action.name === 'merge' ? branchMerge : branchAction,
      response: branchActionResult,
      handler: async ({ ctx, params, body }: { ctx: Ctx; params: Record<string, string>; body: MergeBody }) => {
        const branch = await getViewable(ctx, branchResource, parseId(params.id));
        // The action's own permission, its constraints admitting the branch: owning the branch
        // or holding change_branch (what writing objects into it needs) is not asked.
        await requireObjectPermission(ctx, BRANCH_TYPE, action.name, branch);
        // The summary names each changed object: only those the caller may see (judged before
        // the action moves them).
        const visibility = await ChangeVisibility.load(ctx);
        const visible = visibility.unrestricted
          ? null
          : new Set((await visibility.filter(await branchChanges(ctx, branch.id))).map((c) => c.id));
        const result = await action.run(ctx, branch.id, {
          commit: body.commit ?? false,
          acknowledgeConflicts: body.acknowledge_conflicts === true,
        });
        return visible ? { ...result, changes: result.changes.filter((c) => visible.has(c.id)) } : result;
      },
    });
  }
}
