import { requireBranchWrite } from './branch-access';
import { recordChange, type ChangeActionName } from '../events/changelog';
import type { Ctx } from '../core/context';
import { NotFound, ValidationError } from '../core/errors';
import type { ObjectTypeDef } from './object-types';
import type { BranchRow } from '../db/tables';
import { sameAttributes, type Attributes } from './attributes';
import { findBranch } from './branches-repository';
import {
  branchChangesOfObjects,
  branchTouchesType,
  removeChange,
  writeChanges,
  type ChangeRowWrite,
} from './branch-changes-repository';
import type { BranchChange } from './branch-change';
import {
  deleteMainObjects,
  getMainObject,
  getMainObjectsForWrite,
  putMainObjects,
  reserveObjectIds,
  type ObjectState,
} from './main-repository';
import { nextNetEffect, type BranchWrite } from './net-effect';
import { readObject, readObjects } from './overlay';
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

/** One write of an object of a type: a create, an update to `attrs` (whole), or a delete. */
export type ObjectWrite =
  | { op: 'create'; attrs: Attributes }
  | { op: 'update'; existing: ObjectState; attrs: Attributes }
  | { op: 'delete'; existing: ObjectState };

/**
 * Writes of objects of one type, planned: where they go (the context's branch, or main), and
 * for each the state it writes (a create's with its new id; undefined for a delete), which the
 * object permission judges before anything is stored.
 */
export interface ObjectWritePlan {
  def: CatalogueType;
  branch: BranchRow | null;
  writes: readonly ObjectWrite[];
  states: ReadonlyArray<ObjectState | undefined>;
}

/**
 * Plans writes of objects of one type: the main write guards (e.g. `protect_main`) or the
 * branch rule are asked once (they judge the caller and the type, the same for every object),
 * each create gets its id, and each write its new state.
 */
export async function planObjectWrites(
  ctx: Ctx,
  def: CatalogueType,
  writes: readonly ObjectWrite[],
): Promise<ObjectWritePlan> {
  const branch = await writeTarget(ctx, def.name);
  const now = ctx.host.clock.now().toISOString();
  const ids = await reserveObjectIds(ctx, writes.filter((w) => w.op === 'create').length);
  let next = 0;
  const states = writes.map((w): ObjectState | undefined => {
    if (w.op === 'create')
      return { id: ids[next++]!, objectType: def.name, attrs: w.attrs, created: now, lastUpdated: now };
    if (w.op === 'update') return { ...w.existing, attrs: w.attrs, lastUpdated: now };
    return undefined;
  });
  return { def, branch, writes, states };
}

function objectIdOf(write: ObjectWrite, state: ObjectState | undefined): number {
  return write.op === 'create' ? state!.id : write.existing.id;
}

/**
 * Records the writes in the branch's net effect, one change row per object (main's objects and
 * the rows before read together), and tells the branch hooks once that its changes moved.
 * Answers, per write, whether it moved anything.
 */
async function writeInBranch(ctx: Ctx, branch: BranchRow, plan: ObjectWritePlan): Promise<boolean[]> {
  const objectType = plan.def.name;
  const ids = plan.writes.map((w, i) => objectIdOf(w, plan.states[i]));
  const existing = await branchChangesOfObjects(ctx, branch.id, objectType, ids);
  const touchedBefore = existing.size > 0 || (await branchTouchesType(ctx, branch.id, objectType));
  const mains = await getMainObjectsForWrite(ctx, objectType, ids);
  const rows: ChangeRowWrite[] = [];
  const moved: boolean[] = [];
  for (const [i, w] of plan.writes.entries()) {
    const id = ids[i]!;
    const was = existing.get(id) ?? null;
    const write: BranchWrite =
      w.op === 'create'
        ? { op: 'create', attrs: w.attrs }
        : w.op === 'update'
          ? { op: 'update', before: w.existing.attrs, attrs: w.attrs }
          : { op: 'delete', before: w.existing.attrs };
    const effect = nextNetEffect(was, write);
    moved.push(effect.kind !== 'unchanged');
    if (effect.kind !== 'unchanged')
      rows.push({
        objectId: id,
        change: effect.kind === 'set' ? effect.change : null,
        before: was,
        main: mains.get(id) ?? null,
      });
  }
  await writeChanges(ctx, branch.id, objectType, rows);
  const saved = rows.some((r) => r.change !== null);
  if (moved.some(Boolean))
    await ctx.host.branchHooks.run('changesMoved', ctx, {
      branch,
      objectTypes: [objectType],
      newlyTouchedTypes: !touchedBefore && saved ? [objectType] : [],
    });
  return moved;
}

/** Stores the writes on main (a few statements for any number); answers, per write, whether it moved anything. */
async function writeOnMain(ctx: Ctx, plan: ObjectWritePlan): Promise<boolean[]> {
  const moved = plan.writes.map((w) => w.op !== 'update' || !sameAttributes(w.existing.attrs, w.attrs));
  const puts = plan.writes.flatMap((w, i) => (w.op !== 'delete' && moved[i] ? [plan.states[i]!] : []));
  const deletes = plan.writes.flatMap((w) => (w.op === 'delete' ? [w.existing.id] : []));
  if (puts.length > 0) await putMainObjects(ctx, puts);
  if (deletes.length > 0) await deleteMainObjects(ctx, deletes);
  return moved;
}

/**
 * Stores planned writes, in the branch or on main, and records each that moved something in
 * the changelog (with its object event). Answers, per write, the object as the context sees it
 * now: undefined for a delete, the state before for an update that changed nothing.
 */
export async function applyObjectWrites(ctx: Ctx, plan: ObjectWritePlan): Promise<Array<ObjectState | undefined>> {
  const { def, writes, states } = plan;
  const moved = plan.branch ? await writeInBranch(ctx, plan.branch, plan) : await writeOnMain(ctx, plan);
  const after = await readObjects(
    ctx,
    def.name,
    writes.flatMap((w, i) => (w.op !== 'delete' && moved[i] ? [objectIdOf(w, states[i])] : [])),
  );
  const out: Array<ObjectState | undefined> = [];
  for (const [i, w] of writes.entries()) {
    if (w.op === 'delete') {
      await logObjectWrite(ctx, def, 'delete', w.existing, undefined);
      out.push(undefined);
      continue;
    }
    if (!moved[i] && w.op === 'update') {
      out.push(w.existing);
      continue;
    }
    const id = objectIdOf(w, states[i]);
    const now = after.get(id);
    if (!now) {
      if (w.op === 'create') throw new Error(`${def.name} ${id} vanished after create`);
      throw new NotFound();
    }
    await logObjectWrite(ctx, def, w.op, w.op === 'update' ? w.existing : undefined, now);
    out.push(now);
  }
  return out;
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
  const plan = await planObjectWrites(ctx, def, [{ op: 'create', attrs }]);
  await options.authorize?.(plan.states[0]!);
  return (await applyObjectWrites(ctx, plan))[0]!;
}

/** Sets an object's attributes to `attrs` (the caller merges for a partial update). */
export async function updateObject(
  ctx: Ctx,
  def: CatalogueType,
  existing: ObjectState,
  attrs: Attributes,
  options: WriteOptions = {},
): Promise<ObjectState> {
  const plan = await planObjectWrites(ctx, def, [{ op: 'update', existing, attrs }]);
  await options.authorize?.(plan.states[0]!);
  return (await applyObjectWrites(ctx, plan))[0]!;
}

export async function deleteObject(ctx: Ctx, def: CatalogueType, existing: ObjectState): Promise<void> {
  await applyObjectWrites(ctx, await planObjectWrites(ctx, def, [{ op: 'delete', existing }]));
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
