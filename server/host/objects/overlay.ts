import type { Ctx } from '../core/context';
import { branchChange, branchChangesOfObjects, type BranchChange } from './branch-changes-repository';
import { getMainObject, listMainObjects, type ObjectState } from './main-repository';
import { branchVersion } from './versions';

/**
 * Reads in branch context: without a branch, main; in a branch (`branchId`), main overlaid with
 * the branch's changes (created and updated objects show the branch's state, deleted ones are
 * gone), each with the version the branch shows (`versions.ts`).
 */
function overlay(
  branchId: number,
  objectType: string,
  objectId: number,
  main: ObjectState | undefined,
  change: BranchChange | undefined,
): ObjectState | undefined {
  if (!change) return main && { ...main, version: branchVersion(branchId, undefined, main.version) };
  if (change.action === 'delete' || change.modified === null) return undefined;
  return {
    id: objectId,
    objectType,
    attrs: change.modified,
    created: main?.created ?? change.created,
    lastUpdated: change.lastUpdated,
    version: branchVersion(branchId, change, undefined),
  };
}

export async function readObject(ctx: Ctx, objectType: string, id: number): Promise<ObjectState | undefined> {
  const main = await getMainObject(ctx, objectType, id);
  if (!ctx.branch) return main;
  return overlay(ctx.branch.id, objectType, id, main, await branchChange(ctx, ctx.branch.id, objectType, id));
}

/** Objects of one type among these ids as the context sees them, by id (absent: none), in a few queries for any number. */
export async function readObjects(
  ctx: Ctx,
  objectType: string,
  ids: readonly number[],
): Promise<Map<number, ObjectState>> {
  const wanted = [...new Set(ids)];
  const out = new Map<number, ObjectState>();
  if (wanted.length === 0) return out;
  const main = new Map<number, ObjectState>();
  for (let i = 0; i < wanted.length; i += ID_BATCH)
    for (const o of await listMainObjects(ctx, objectType, wanted.slice(i, i + ID_BATCH))) main.set(o.id, o);
  const branchId = ctx.branch?.id;
  const changes = branchId ? await branchChangesOfObjects(ctx, branchId, objectType, wanted) : undefined;
  for (const id of wanted) {
    const seen = changes ? overlay(branchId!, objectType, id, main.get(id), changes.get(id)) : main.get(id);
    if (seen) out.set(id, seen);
  }
  return out;
}

/** Objects read per query by id. */
const ID_BATCH = 500;
