import { requireBranchWrite } from './branch-access';
import { recordChange, type ChangeActionName } from '../events/changelog';
import type { Ctx } from '../core/context';
import { NotFound, ValidationError } from '../core/errors';
import type { ObjectTypeDef } from './object-types';
import type { BranchRow } from '../db/tables';
import { sameAttributes, type Attributes } from './attributes';
import { findBranch } from './branches-repository';
import { branchChange, branchTouchesType, removeChange, saveChange } from './branch-changes-repository';
import type { BranchChange } from './branch-change';
import { deleteMainObject, getMainObject, nextObjectId, putMainObject, type ObjectState } from './main-repository';
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

/** The object permission a revert amounts to: the object changes, leaves the branch, or comes back. */
export type RevertAction = 'change' | 'delete' | 'add';

export interface RevertOptions {
  /** Asked before anything is stored, with the write the revert amounts to and the state it judges; throws to refuse. */
  authorize?(action: RevertAction, state: ObjectState): Promise<void>;
}

/** What a revert did to the object as the branch sees it: its state before and after (undefined: absent). */
export interface Reverted {
  action: ChangeActionName | null;
  before: ObjectState | undefined;
  after: ObjectState | undefined;
}

/**
 * Undoes the branch's change of one object (the context's branch, which must be ready and
 * writable by the caller): the change row goes, so the object in the branch is what main holds
 * now (gone when main has none). It is recorded as the write it amounts to in the branch: an
 * update (`change`, judged on both states), a delete (`delete`, on the branch's state: a create
 * undone, or an update of an object main has since deleted) or a create (`add`, on main's state:
 * a delete undone); nothing is logged when the branch shows the same either way.
 */
export async function revertObjectInBranch(
  ctx: Ctx,
  def: CatalogueType,
  change: BranchChange,
  options: RevertOptions = {},
): Promise<Reverted> {
  const branch = await writeTarget(ctx, def.name);
  if (!branch || branch.id !== change.branchId)
    throw new Error("revertObjectInBranch needs the change's branch as its context");
  const before = await readObject(ctx, def.name, change.objectId);
  const main = await getMainObject(ctx, def.name, change.objectId);
  let action: ChangeActionName | null = before ? (main ? 'update' : 'delete') : main ? 'create' : null;
  // The branch already holds what main holds now: undoing the change shows nothing new.
  if (action === 'update' && sameAttributes(before!.attrs, main!.attrs)) action = null;
  if (action === 'update') {
    await options.authorize?.('change', before!);
    await options.authorize?.('change', main!);
  } else if (action === 'delete') await options.authorize?.('delete', before!);
  else if (action === 'create') await options.authorize?.('add', main!);
  await removeChange(ctx, change.id);
  await ctx.host.branchHooks.run('changesMoved', ctx, { branch, objectTypes: [def.name], newlyTouchedTypes: [] });
  const after = await readObject(ctx, def.name, change.objectId);
  if (action) await logObjectWrite(ctx, def, action, before, after);
  return { action, before, after };
}
