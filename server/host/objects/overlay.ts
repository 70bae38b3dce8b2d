import type { Ctx } from '../core/context';
import { branchChange, branchChanges, type BranchChange } from './branch-changes-repository';
import { getMainObject, listMainObjects, type ObjectState } from './main-repository';

/**
 * Reads in branch context: without a branch, main; in a branch, main overlaid with the
 * branch's changes (created and updated objects show the branch's state, deleted ones are gone).
 */
function overlay(
  objectType: string,
  objectId: number,
  main: ObjectState | undefined,
  change: BranchChange | undefined,
): ObjectState | undefined {
  if (!change) return main;
  if (change.action === 'delete' || change.modified === null) return undefined;
  return {
    id: objectId,
    objectType,
    attrs: change.modified,
    created: main?.created ?? change.created,
    lastUpdated: change.lastUpdated,
  };
}

export async function readObject(ctx: Ctx, objectType: string, id: number): Promise<ObjectState | undefined> {
  const main = await getMainObject(ctx, objectType, id);
  if (!ctx.branch) return main;
  return overlay(objectType, id, main, await branchChange(ctx, ctx.branch.id, objectType, id));
}

/** Every object of a type as the context sees it, by id. */
export async function listObjects(ctx: Ctx, objectType: string): Promise<ObjectState[]> {
  const main = await listMainObjects(ctx, objectType);
  if (!ctx.branch) return main;
  const changes = new Map((await branchChanges(ctx, ctx.branch.id, { objectType })).map((c) => [c.objectId, c]));
  const out: ObjectState[] = [];
  for (const obj of main) {
    const seen = overlay(objectType, obj.id, obj, changes.get(obj.id));
    changes.delete(obj.id);
    if (seen) out.push(seen);
  }
  for (const change of changes.values()) {
    const seen = overlay(objectType, change.objectId, undefined, change);
    if (seen) out.push(seen);
  }
  return out.sort((a, b) => a.id - b.id);
}
