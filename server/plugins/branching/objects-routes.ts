import { z } from 'zod';
import { branchAccess as branchAccessOutput, changeRevertResult } from '../../../contract/api/branching';
import {
  type Host,
  branchAccess,
  branchChangesByIds,
  branchWriteRefusal,
  deriveCtx,
  NotFound,
  presentObject,
  revertObjectInBranch,
  ValidationError,
} from '../../host';
import { getViewable, parseId, requireObjectPermission } from '../../host/http';
import { branchResource, BRANCHES_PATH, findBranch } from './branches';
import { CHANGES_PATH, getVisibleChangeDiff } from './changes';

/**
 * Two endpoints for clients that edit a branch's objects: what the caller may do in a branch
 * (`branches/{id}/access/`), and undoing the branch's change of one object
 * (`changes/{id}/revert/`).
 */
export function registerBranchObjectRoutes(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: `${BRANCHES_PATH}:id/access/`,
    access: { authenticated: true },
    summary:
      'What the caller may do in a branch: write in it at all (ready, and its owner or a holder of branching.change_branch for it), and per source-of-truth type the view, add, change and delete their object permissions grant',
    tag: 'branching',
    response: branchAccessOutput,
    handler: async ({ ctx, params }) => {
      const branch = (await findBranch(ctx, (await getViewable(ctx, branchResource, parseId(params.id))).id))!;
      const mayWrite = (await branchAccess(ctx)).mayWrite(branch);
      const reason = !mayWrite
        ? branchWriteRefusal(branch)
        : branch.status !== 'ready'
          ? `Branch "${branch.name}" is ${branch.status}; only a ready branch accepts changes.`
          : null;
      const perms = ctx.user ? await ctx.host.permissions.forUser(ctx.user, ctx.db) : null;
      const granted = (type: string, action: string) => perms !== null && perms.grant(type, action) !== false;
      return {
        branch: branch.id,
        write: reason === null,
        reason,
        object_types: ctx.host.objectTypes
          .sourceOfTruth()
          .filter((t) => t.path)
          .map((t) => ({
            object_type: t.name,
            display: t.display,
            url: `${ctx.baseUrl}${t.path!}`,
            view: granted(t.name, 'view'),
            add: granted(t.name, 'add'),
            change: granted(t.name, 'change'),
            delete: granted(t.name, 'delete'),
          })),
      };
    },
  });

  host.routes.add({
    method: 'POST',
    path: `${CHANGES_PATH}:id/revert/`,
    access: { authenticated: true },
    summary:
      "Revert one object to main: undo the branch's change of it, so that the branch shows main's state now; needs the right to write the branch and the object permission of the write it amounts to (change, delete or add)",
    tag: 'branching',
    body: z.union([z.looseObject({}), z.undefined()]),
    response: changeRevertResult,
    handler: async ({ ctx, params }) => {
      // A change the caller may not see is answered as one that does not exist.
      const visible = await getVisibleChangeDiff(ctx, parseId(params.id));
      if (!visible) throw new NotFound();
      const change = (await branchChangesByIds(ctx, [visible.id]))[0]!;
      const def = ctx.host.objectTypes.get(change.objectType);
      if (!def?.sourceOfTruth)
        throw new ValidationError(
          `Object type ${change.objectType} is no longer in the catalogue: it cannot be reverted.`,
        );
      const catalogued = { ...def, name: change.objectType };
      const branch = (await findBranch(ctx, change.branchId))!;
      const inBranch = deriveCtx(ctx, { branch: { id: branch.id, schemaId: branch.schema_id, name: branch.name } });
      const result = await revertObjectInBranch(inBranch, catalogued, change, {
        authorize: (action, state) =>
          requireObjectPermission(inBranch, catalogued.name, action, presentObject(inBranch, catalogued, state)),
      });
      await ctx.flushBeforeCommit();
      return {
        change: change.id,
        object_type: change.objectType,
        object_id: change.objectId,
        action: result.action,
        object: result.after ? presentObject(inBranch, catalogued, result.after) : null,
      };
    },
  });
}
