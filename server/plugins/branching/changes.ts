import { sql } from 'kysely';
import { changeDiff, CHANGE_ACTIONS, type ChangeDiff } from '../../../contract/api/branching';
import type { Ctx } from '../../host/core/context';
import type { Host } from '../../host/host';
import type { BranchChangesTable } from '../../host/db/tables';
import { registerResource, type ApiObject, type ListOptions } from '../../host/http/resource';
import { displayOf, type Attributes } from '../../host/objects/attributes';
import { branchChanges, parseChangeRow, touchedObjectTypes, type BranchChange } from '../../host/objects/branch-changes';
import { getMainObjects, type ObjectState } from '../../host/objects/main-store';
import { branchDataMemo } from '../../host/objects/branch-data-memo';
import { catalogueType } from './catalogue';
import { computeConflicts } from './conflicts';
import { ChangeVisibility } from '../../host/objects/change-visibility';

export const CHANGEDIFF_TYPE = 'branching.changediff';
export const CHANGES_PATH = '/api/plugins/branching/changes/';

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
  return displayOf(catalogueType(ctx.host, change.objectType).display, change.objectId, change.modified ?? change.original);
}

export function presentChange(ctx: Ctx, change: BranchChange, current: Attributes | null): ChangeDiffOut {
  const repr = changeRepr(ctx, change);
  return {
    id: change.id,
    url: `${ctx.baseUrl}${CHANGES_PATH}${change.id}/`,
    display: `${repr} (${change.action})`,
    branch: change.branchId,
    object_type: change.objectType,
    object_id: change.objectId,
    object_repr: repr,
    action: change.action,
    original: change.original,
    modified: change.modified,
    current,
    conflicts: computeConflicts(change, current),
    last_updated: change.lastUpdated,
  };
}

async function presentAll(ctx: Ctx, changes: BranchChange[]): Promise<ChangeDiffOut[]> {
  const current = await currentStates(ctx, changes);
  return changes.map((c) => presentChange(ctx, c, current.get(c.id) ?? null));
}

/** A branch's changes as the `changes/` endpoint shows them (with `current` and `conflicts`), oldest first. */
export async function listBranchChanges(ctx: Ctx, branchId: number): Promise<ChangeDiffOut[]> {
  return presentAll(ctx, await branchChanges(ctx, branchId));
}

/** One change by id, as the `changes/` endpoint shows it. */
export async function getChangeDiff(ctx: Ctx, id: number): Promise<ChangeDiffOut | undefined> {
  const row = await ctx.db.selectFrom('branch_changes').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  return (await presentAll(ctx, [parseChangeRow(row)]))[0];
}

/** One change by id, when the caller may see it (its branch and its object): else undefined, as for a change that does not exist. */
export async function getVisibleChangeDiff(ctx: Ctx, id: number): Promise<ChangeDiffOut | undefined> {
  const row = await ctx.db.selectFrom('branch_changes').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const visible = await (await ChangeVisibility.load(ctx)).filter([parseChangeRow(row)]);
  return visible.length === 0 ? undefined : (await presentAll(ctx, visible))[0];
}

/**
 * `listBranchChanges`, reused within a transaction until branch data is written, and between
 * writes outside one. The answer is shared: treat it as read-only.
 */
export function branchChangesView(ctx: Ctx, branchId: number): Promise<readonly ChangeDiffOut[]> {
  return branchDataMemo.get(ctx, `${ctx.baseUrl}|${branchId}`, () => listBranchChanges(ctx, branchId));
}

/** Whether any change of the branch conflicts with main now. */
export async function branchHasConflicts(ctx: Ctx, branchId: number): Promise<boolean> {
  return (await branchChangesView(ctx, branchId)).some((c) => c.conflicts !== null);
}

const ORDER_COLUMNS = { id: 'id', object_type: 'object_type', object_id: 'object_id', action: 'action', last_updated: 'last_updated' } as const;

/**
 * The `changes/` list: only rows of branches the caller can view and of objects their view
 * permission admits. Unconstrained object grants filter in SQL (paged there); constrained
 * ones are checked row by row on the object's state before the page is cut.
 */
async function listChanges(ctx: Ctx, { filters, ordering, page }: ListOptions): Promise<{ count: number; items: ChangeDiffOut[] }> {
  const visibility = await ChangeVisibility.load(ctx);
  let q = ctx.db.selectFrom('branch_changes');
  if (!visibility.unrestricted) {
    const branchIds = visibility.branchIds;
    if (branchIds !== 'all') q = q.where('branch_id', 'in', (eb) => eb.selectFrom(sql<{ value: number }>`json_each(${JSON.stringify([...branchIds])})`.as('j')).select('j.value'));
    const types = visibility.viewableTypes();
    q = q.where('object_type', 'in', types.length > 0 ? types : ['']);
  }
  if (filters.id) q = q.where('id', 'in', filters.id as number[]);
  if (filters.branch_id) q = q.where('branch_id', 'in', filters.branch_id as number[]);
  if (filters.object_type) q = q.where('object_type', 'in', filters.object_type as string[]);
  if (filters.action) q = q.where('action', 'in', filters.action as Array<BranchChangesTable['action']>);
  let rows = q.selectAll();
  for (const o of ordering) rows = rows.orderBy(ORDER_COLUMNS[o.field as keyof typeof ORDER_COLUMNS], o.desc ? 'desc' : 'asc');
  if (visibility.constrainedTypes().length > 0) {
    const visible = await visibility.filter((await rows.execute()).map(parseChangeRow));
    return { count: visible.length, items: await presentAll(ctx, page ? visible.slice(page.offset, page.offset + page.limit) : visible) };
  }
  const { count } = await q.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  if (page) rows = rows.limit(page.limit).offset(page.offset);
  return { count: Number(count), items: await presentAll(ctx, (await rows.execute()).map(parseChangeRow)) };
}

/** `changes/`: read-only, one row per object a branch touches. */
export function registerChanges(host: Host): void {
  registerResource<ChangeDiffOut>(host.routes, {
    tag: 'branching',
    objectType: CHANGEDIFF_TYPE,
    path: CHANGES_PATH,
    output: changeDiff,
    filters: {
      id: { type: 'int' },
      branch_id: { type: 'int', description: 'Branch id.' },
      object_type: { type: 'string', description: 'Object type, "app_label.model".' },
      action: { type: 'choice', choices: CHANGE_ACTIONS },
    },
    ordering: Object.keys(ORDER_COLUMNS),
    list: listChanges,
    get: getVisibleChangeDiff,
  });
}
