import { API_PATHS } from '../../../contract/api/paths';
import type { ChangeDiff } from '../../../contract/api/branching';
import {
  type ApiObject,
  type Attributes,
  BRANCH_DATA_TABLES,
  type BranchChange,
  branchChanges,
  branchConflicts,
  briefObject,
  fieldsOf,
  ChangeVisibility,
  computeConflicts,
  type Ctx,
  getMainObjects,
  type ObjectState,
  parseChangeRow,
  touchedObjectTypes,
} from '../../host';
import { objectName, relatedReference, type RelatedName } from '../../../contract/object-names';
import { catalogueType } from './catalogue';
import { branchChangeRow } from './changes-repository';

export const CHANGEDIFF_TYPE = 'branching.changediff';
export const CHANGES_PATH = API_PATHS.changes;

export type ChangeDiffOut = ChangeDiff & ApiObject;
export { touchedObjectTypes };

/** Main's object now for each change (undefined when gone), by change id. */
export async function mainStates(ctx: Ctx, changes: BranchChange[]): Promise<Map<number, ObjectState | undefined>> {
  const mains = await getMainObjects(ctx, [...new Set(changes.map((c) => c.objectId))]);
  const out = new Map<number, ObjectState | undefined>();
  for (const change of changes) {
    const main = mains.get(change.objectId);
    out.set(change.id, main && main.objectType === change.objectType ? main : undefined);
  }
  return out;
}

/** Main's attributes now for each change's object (null when gone), by change id. */
export async function currentStates(ctx: Ctx, changes: BranchChange[]): Promise<Map<number, Attributes | null>> {
  const states = await mainStates(ctx, changes);
  return new Map([...states].map(([id, state]) => [id, state?.attrs ?? null]));
}

export function changeRepr(ctx: Ctx, change: BranchChange): string {
  return changeReprOf(ctx, change);
}

/**
 * How a changed object is shown: as people name it (contract/object-names.ts: a prefix by its
 * prefix, an interface with its device), from the branch's state (the baseline for a delete);
 * `related` names the objects it refers to (else they show as type and id).
 */
export function changeReprOf(
  ctx: Ctx,
  change: { objectType: string; objectId: number; original: Attributes | null; modified: Attributes | null },
  related?: RelatedName,
): string {
  return objectName(
    change.objectType,
    catalogueType(ctx.host, change.objectType).display,
    change.objectId,
    change.modified ?? change.original,
    related,
  );
}

/**
 * The names of the objects these changes refer to (an interface's device), read at once: from
 * the changes themselves (the branch's state), else from main, for objects the caller may view.
 */
export async function relatedNames(
  ctx: Ctx,
  changes: readonly BranchChange[],
): Promise<(branchId: number) => RelatedName> {
  // The referenced ids and their type, per branch (a change names what its own branch holds).
  const wanted = new Map<number, string>();
  for (const c of changes) {
    const ref = relatedReference(c.objectType);
    const value = ref ? (c.modified ?? c.original)?.[ref.attribute] : undefined;
    if (ref && typeof value === 'number' && Number.isInteger(value)) wanted.set(value, ref.type);
  }
  if (wanted.size === 0) return () => () => undefined;
  const inBranch = new Map<string, string>();
  for (const c of changes)
    if (wanted.get(c.objectId) === c.objectType && (c.modified ?? c.original))
      inBranch.set(`${c.branchId}:${c.objectId}`, changeReprOf(ctx, c));
  const onMain = new Map<number, string>();
  const missing = [...wanted.keys()].filter((id) => !changes.some((c) => inBranch.has(`${c.branchId}:${id}`)));
  if (missing.length > 0) {
    const visibility = await ChangeVisibility.load(ctx);
    for (const [id, main] of await getMainObjects(ctx, missing)) {
      if (main.objectType !== wanted.get(id)) continue;
      if (!visibility.admitsState(main.objectType, id, main.attrs, main.created, main.lastUpdated)) continue;
      onMain.set(id, objectName(main.objectType, catalogueType(ctx.host, main.objectType).display, id, main.attrs));
    }
  }
  return (branchId) => (type, id) =>
    wanted.get(id) !== type ? undefined : (inBranch.get(`${branchId}:${id}`) ?? onMain.get(id));
}

export function presentChange(
  ctx: Ctx,
  change: BranchChange,
  current: Attributes | null,
  related?: RelatedName,
): ChangeDiffOut {
  const repr = changeReprOf(ctx, change, related);
  return {
    ...briefObject(ctx, CHANGES_PATH, change.id, `${repr} (${change.action})`),
    branch: change.branchId,
    object_type: change.objectType,
    object_id: change.objectId,
    object_repr: repr,
    ...fieldsOf(change, ['action', 'original', 'modified']),
    current,
    conflicts: computeConflicts(change, current),
    last_updated: change.lastUpdated,
  };
}

export async function presentAll(ctx: Ctx, changes: BranchChange[]): Promise<ChangeDiffOut[]> {
  const current = await currentStates(ctx, changes);
  const related = await relatedNames(ctx, changes);
  return changes.map((c) => presentChange(ctx, c, current.get(c.id) ?? null, related(c.branchId)));
}

/** A branch's changes as the `changes/` endpoint shows them (with `current` and `conflicts`), oldest first. */
export async function listBranchChanges(ctx: Ctx, branchId: number): Promise<ChangeDiffOut[]> {
  return presentAll(ctx, await branchChanges(ctx, branchId));
}

/** One change by id, as the `changes/` endpoint shows it. */
export async function getChangeDiff(ctx: Ctx, id: number): Promise<ChangeDiffOut | undefined> {
  const row = await branchChangeRow(ctx, id);
  if (!row) return undefined;
  return (await presentAll(ctx, [parseChangeRow(row)]))[0];
}

/** One change by id, when the caller may see it (its branch and its object): else undefined, as for a change that does not exist. */
export async function getVisibleChangeDiff(ctx: Ctx, id: number): Promise<ChangeDiffOut | undefined> {
  const row = await branchChangeRow(ctx, id);
  if (!row) return undefined;
  const visible = await (await ChangeVisibility.load(ctx)).filter([parseChangeRow(row)]);
  return visible.length === 0 ? undefined : (await presentAll(ctx, visible))[0];
}

/**
 * `listBranchChanges`, reused within a transaction until branch data is written, and between
 * committed writes outside one. The answer is shared: treat it as read-only.
 */
export function branchChangesView(ctx: Ctx, branchId: number): Promise<readonly ChangeDiffOut[]> {
  return ctx.host.readMemo.get(
    ctx,
    `branch-data:${ctx.baseUrl}|${branchId}`,
    () => listBranchChanges(ctx, branchId),
    BRANCH_DATA_TABLES,
  );
}

/** Whether any change of the branch conflicts with main now. */
export async function branchHasConflicts(ctx: Ctx, branchId: number): Promise<boolean> {
  return branchConflicts(ctx, branchId);
}
