import { requireBranchWrite } from './branch-access';
import { recordChange, type ChangeActionName } from '../events/changelog';
import type { Ctx } from '../core/context';
import { NotFound, ValidationError } from '../core/errors';
import type { ObjectTypeDef } from './object-types';
import type { BranchRow } from '../db/tables';
import { sameAttributes, type Attributes } from './attributes';
import { findBranch } from './branches-repository';
import { branchChange, branchTouchesType, removeChange, saveChange } from './branch-changes-repository';
import { deleteMainObject, nextObjectId, putMainObject, type ObjectState } from './main-repository';
import { nextNetEffect, type BranchWrite } from './net-effect';
import { readObject } from './overlay';
import { presentObject } from './present';

/** A type of the catalogue with its `app_label.model` name. */
export type CatalogueType = ObjectTypeDef & { name: string };

export interface WriteOptions {
  /** Called with the object's new state before anything is stored; throws to refuse. */
  authorize?(state: ObjectState): Promise<void>;
}

/**
 * Where a write goes: main (after the main write guards, e.g. `protect_main`) or the
 * context's branch, which must be ready.
 */
async function writeTarget(ctx: Ctx, objectType: string): Promise<BranchRow | null> {
  if (!ctx.branch) {
    for (const guard of ctx.host.mainWriteGuards) {
      const reason = await guard(ctx, objectType);
      if (reason) throw new ValidationError(reason);
    }
    return null;
  }
  const branch = await findBranch(ctx, ctx.branch.id);
  if (!branch) throw ValidationError.field('X-NetBox-Branch', `Unknown branch "${ctx.branch.schemaId}".`);
  // Besides the object permission: the branch's owner, or change_branch for this branch.
  await requireBranchWrite(ctx, branch);
  if (branch.status !== 'ready') {
    throw new ValidationError(`Branch "${branch.name}" is ${branch.status}; only a ready branch accepts changes.`);
  }
  return branch;
}

/** Records the write in the branch's net effect and tells the branch hooks when the changes moved. */
async function writeInBranch(
  ctx: Ctx,
  branch: BranchRow,
  objectType: string,
  objectId: number,
  write: BranchWrite,
): Promise<boolean> {
  const existing = await branchChange(ctx, branch.id, objectType, objectId);
  const effect = nextNetEffect(existing ?? null, write);
  if (effect.kind === 'unchanged') return false;
  const newlyTouched = !existing && !(await branchTouchesType(ctx, branch.id, objectType));
  if (effect.kind === 'remove') await removeChange(ctx, existing!.id);
  else await saveChange(ctx, branch.id, objectType, objectId, effect.change, existing ?? null);
  await ctx.host.branchHooks.run('changesMoved', ctx, {
    branch,
    objectTypes: [objectType],
    newlyTouchedTypes: newlyTouched ? [objectType] : [],
  });
  return true;
}

/** Records a write of a source-of-truth object in the changelog (and emits its object event), in the context's branch or on main. */
export async function logObjectWrite(
  ctx: Ctx,
  def: CatalogueType,
  action: ChangeActionName,
  before: ObjectState | undefined,
  after: ObjectState | undefined,
): Promise<void> {
  const pre = before ? presentObject(ctx, def, before) : null;
  const post = after ? presentObject(ctx, def, after) : null;
  await recordChange(ctx, {
    action,
    objectType: def.name,
    objectId: (after ?? before)!.id,
    repr: (post ?? pre)!.display,
    prechange: pre,
    postchange: post,
  });
}

export async function createObject(
  ctx: Ctx,
  def: CatalogueType,
  attrs: Attributes,
  options: WriteOptions = {},
): Promise<ObjectState> {
  const branch = await writeTarget(ctx, def.name);
  const now = ctx.host.clock.now().toISOString();
  const state: ObjectState = {
    id: await nextObjectId(ctx),
    objectType: def.name,
    attrs,
    created: now,
    lastUpdated: now,
  };
  await options.authorize?.(state);
  if (branch) await writeInBranch(ctx, branch, def.name, state.id, { op: 'create', attrs });
  else await putMainObject(ctx, state);
  const created = await readObject(ctx, def.name, state.id);
  if (!created) throw new Error(`${def.name} ${state.id} vanished after create`);
  await logObjectWrite(ctx, def, 'create', undefined, created);
  return created;
}

/** Sets an object's attributes to `attrs` (the caller merges for a partial update). */
export async function updateObject(
  ctx: Ctx,
  def: CatalogueType,
  existing: ObjectState,
  attrs: Attributes,
  options: WriteOptions = {},
): Promise<ObjectState> {
  const branch = await writeTarget(ctx, def.name);
  const now = ctx.host.clock.now().toISOString();
  await options.authorize?.({ ...existing, attrs, lastUpdated: now });
  let moved: boolean;
  if (branch)
    moved = await writeInBranch(ctx, branch, def.name, existing.id, { op: 'update', before: existing.attrs, attrs });
  else {
    moved = !sameAttributes(existing.attrs, attrs);
    if (moved) await putMainObject(ctx, { ...existing, attrs, lastUpdated: now });
  }
  if (!moved) return existing;
  const updated = await readObject(ctx, def.name, existing.id);
  if (!updated) throw new NotFound();
  await logObjectWrite(ctx, def, 'update', existing, updated);
  return updated;
}

export async function deleteObject(ctx: Ctx, def: CatalogueType, existing: ObjectState): Promise<void> {
  const branch = await writeTarget(ctx, def.name);
  if (branch) await writeInBranch(ctx, branch, def.name, existing.id, { op: 'delete', before: existing.attrs });
  else await deleteMainObject(ctx, existing.id);
  await logObjectWrite(ctx, def, 'delete', existing, undefined);
}
