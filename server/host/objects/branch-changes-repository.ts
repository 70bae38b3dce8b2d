import type { Ctx } from '../core/context';
import { parseChangeRow, type BranchChange, type PremergeState } from './branch-change';
import { branchChangesDeleted, branchChangesWritten, type BranchChangeWrite } from './branch-state';
import { touchedObjectTypes } from './branch-types-repository';
import { conflictColumns } from './change-conflicts-repository';
import { getMainObjectForWrite, type ObjectState } from './main-repository';
import type { ChangeAction, NetChange } from './net-effect';
import type { Condition } from '../db/list';
import { valuesTable } from '../db/portable';
import type { HostTables } from '../db/tables';

export { parseChangeRow, touchedObjectTypes };
export { branchTouchesType } from './branch-types-repository';
export type { BranchChange, PremergeState } from './branch-change';

/** Every change of every branch (the changes list's query). */
export function branchChangeRows(ctx: Ctx) {
  return ctx.db.selectFrom('branch_changes').selectAll();
}

/** The changes in one of `branchIds` (every branch: 'all') of one of `objectTypes`. */
export function changesOf(
  ctx: Ctx,
  branchIds: ReadonlySet<number> | 'all',
  objectTypes: readonly string[],
): Condition<HostTables, 'branch_changes'> {
  return (eb) =>
    eb.and([
      ...(branchIds === 'all'
        ? []
        : [eb('branch_id', 'in', eb.selectFrom(valuesTable(ctx.db, [...branchIds]).as('j')).select('j.value'))]),
      eb('object_type', 'in', objectTypes.length > 0 ? [...objectTypes] : ['']),
    ]);
}

/** Change rows read per query (the database's bound-parameter limit stays far away). */
const ID_BATCH = 500;

/** Changes by id, of any branch (unknown ids are left out): a few queries for any number. */
export async function branchChangesByIds(ctx: Ctx, ids: Iterable<number>): Promise<BranchChange[]> {
  const wanted = [...new Set(ids)];
  const out: BranchChange[] = [];
  for (let i = 0; i < wanted.length; i += ID_BATCH) {
    const rows = await ctx.db
      .selectFrom('branch_changes')
      .selectAll()
      .where('id', 'in', wanted.slice(i, i + ID_BATCH))
      .execute();
    out.push(...rows.map(parseChangeRow));
  }
  return out;
}

/** Which of these change ids still exist (no states read). */
export async function existingBranchChangeIds(ctx: Ctx, ids: Iterable<number>): Promise<Set<number>> {
  const wanted = [...new Set(ids)];
  const out = new Set<number>();
  for (let i = 0; i < wanted.length; i += ID_BATCH) {
    for (const r of await ctx.db
      .selectFrom('branch_changes')
      .select('id')
      .where('id', 'in', wanted.slice(i, i + ID_BATCH))
      .execute())
      out.add(r.id);
  }
  return out;
}

/** The ready branches (not merged, not being worked on) that change this object. */
export async function readyBranchesChanging(ctx: Ctx, objectType: string, objectId: number): Promise<number[]> {
  const rows = await ctx.db
    .selectFrom('branch_changes')
    .innerJoin('branches', 'branches.id', 'branch_changes.branch_id')
    .select('branches.id as id')
    .distinct()
    .where('branch_changes.object_type', '=', objectType)
    .where('branch_changes.object_id', '=', objectId)
    .where('branches.status', '=', 'ready')
    .execute();
  return rows.map((r) => r.id);
}

export interface ChangeQuery {
  objectType?: string;
  objectIds?: number[];
}

/** A branch's changes, oldest first. */
export async function branchChanges(ctx: Ctx, branchId: number, query: ChangeQuery = {}): Promise<BranchChange[]> {
  let q = ctx.db.selectFrom('branch_changes').selectAll().where('branch_id', '=', branchId);
  if (query.objectType) q = q.where('object_type', '=', query.objectType);
  if (query.objectIds) q = q.where('object_id', 'in', query.objectIds.length > 0 ? query.objectIds : [-1]);
  return (await q.orderBy('id').execute()).map(parseChangeRow);
}

/** A branch's changes of one type among these objects, by object id (a few queries for any number). */
export async function branchChangesOfObjects(
  ctx: Ctx,
  branchId: number,
  objectType: string,
  objectIds: readonly number[],
): Promise<Map<number, BranchChange>> {
  const out = new Map<number, BranchChange>();
  for (let i = 0; i < objectIds.length; i += ID_BATCH) {
    const rows = await ctx.db
      .selectFrom('branch_changes')
      .selectAll()
      .where('branch_id', '=', branchId)
      .where('object_type', '=', objectType)
      .where('object_id', 'in', objectIds.slice(i, i + ID_BATCH))
      .execute();
    for (const row of rows) out.set(row.object_id, parseChangeRow(row));
  }
  return out;
}

export async function branchChange(
  ctx: Ctx,
  branchId: number,
  objectType: string,
  objectId: number,
): Promise<BranchChange | undefined> {
  const row = await ctx.db
    .selectFrom('branch_changes')
    .selectAll()
    .where('branch_id', '=', branchId)
    .where('object_type', '=', objectType)
    .where('object_id', '=', objectId)
    .executeTakeFirst();
  return row ? parseChangeRow(row) : undefined;
}

/**
 * The tables branch data is read from (main's objects, branch changes, branches, and which
 * revision kept branch state reflects): what reads of it name for the read memo. A reader of a
 * keeper's state names the keeper's tables too.
 */
export const BRANCH_DATA_TABLES: readonly string[] = [
  'objects',
  'branch_changes',
  'branches',
  'branch_state_revisions',
];

/**
 * The branches with a change of any of these object types: a range of the index
 * `branch_changes_by_type` (object type, branch) per type, whatever the branches' sizes elsewhere.
 */
export async function branchesTouching(ctx: Ctx, objectTypes: readonly string[]): Promise<number[]> {
  if (objectTypes.length === 0) return [];
  const rows = await ctx.db
    .selectFrom('branch_changes')
    .select('branch_id')
    .distinct()
    .where('object_type', 'in', [...objectTypes])
    .execute();
  return rows.map((r) => r.branch_id);
}

/**
 * Stores a change (keeping the row, and so its id, when the object already has one), and keeps
 * the branch's state current (`branch-state.ts`). `before` is the object's change row as it
 * was, when the caller has it (null: none); otherwise it is read.
 */
export async function saveChange(
  ctx: Ctx,
  branchId: number,
  objectType: string,
  objectId: number,
  change: NetChange,
  before?: BranchChange | null,
  /** Main's object as the caller read it for this write (`getMainObjectsForWrite`; null: none); otherwise it is read. */
  mainState?: ObjectState | null,
): Promise<void> {
  const was = before !== undefined ? before : ((await branchChange(ctx, branchId, objectType, objectId)) ?? null);
  const now = ctx.host.clock.now().toISOString();
  const main = mainState !== undefined ? mainState : await getMainObjectForWrite(ctx, objectType, objectId);
  const values = {
    action: change.action as ChangeAction,
    original: change.original === null ? null : JSON.stringify(change.original),
    modified: change.modified === null ? null : JSON.stringify(change.modified),
    ...conflictColumns(change, main?.attrs ?? null),
    last_updated: now,
  };
  const row = await ctx.db
    .insertInto('branch_changes')
    .values({
      branch_id: branchId,
      object_type: objectType,
      object_id: objectId,
      premerge: null,
      created: now,
      ...values,
    })
    .onConflict((oc) =>
      oc
        .columns(['branch_id', 'object_type', 'object_id'])
        .doUpdateSet((eb) => ({ ...values, version: eb(eb.ref('branch_changes.version'), '+', 1) })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  await branchChangesWritten(ctx, branchId, [{ branchId, before: was, after: parseChangeRow(row) }]);
}

/** Removes a change, and keeps the branch's state current. */
export async function removeChange(ctx: Ctx, changeId: number): Promise<void> {
  const row = await ctx.db.deleteFrom('branch_changes').where('id', '=', changeId).returningAll().executeTakeFirst();
  if (row)
    await branchChangesWritten(ctx, row.branch_id, [
      { branchId: row.branch_id, before: parseChangeRow(row), after: null },
    ]);
}

/** One object's change row to write in `writeChanges`: its net change (null: the row goes), the row before, main's object now. */
export interface ChangeRowWrite {
  objectId: number;
  change: NetChange | null;
  before: BranchChange | null;
  main: ObjectState | null;
}

/** Rows per statement when change rows are written together (11 values each). */
const WRITE_BATCH = 200;

/**
 * Writes the change rows of many objects of one type in a branch (`saveChange` and
 * `removeChange` for each, the rows in a few statements) and keeps the branch's state current
 * once for all of them. One object appears at most once.
 */
export async function writeChanges(
  ctx: Ctx,
  branchId: number,
  objectType: string,
  rows: readonly ChangeRowWrite[],
): Promise<void> {
  const now = ctx.host.clock.now().toISOString();
  const saved = new Map<number, BranchChange>();
  const sets = rows.filter((r) => r.change !== null);
  for (let i = 0; i < sets.length; i += WRITE_BATCH) {
    const values = sets.slice(i, i + WRITE_BATCH).map((r) => ({
      branch_id: branchId,
      object_type: objectType,
      object_id: r.objectId,
      premerge: null,
      created: now,
      action: r.change!.action as ChangeAction,
      original: r.change!.original === null ? null : JSON.stringify(r.change!.original),
      modified: r.change!.modified === null ? null : JSON.stringify(r.change!.modified),
      ...conflictColumns(r.change!, r.main?.attrs ?? null),
      last_updated: now,
    }));
    const written = await ctx.db
      .insertInto('branch_changes')
      .values(values)
      .onConflict((oc) =>
        oc.columns(['branch_id', 'object_type', 'object_id']).doUpdateSet((eb) => ({
          action: eb.ref('excluded.action'),
          original: eb.ref('excluded.original'),
          modified: eb.ref('excluded.modified'),
          conflicts: eb.ref('excluded.conflicts'),
          merge_problem: eb.ref('excluded.merge_problem'),
          last_updated: eb.ref('excluded.last_updated'),
          version: eb(eb.ref('branch_changes.version'), '+', 1),
        })),
      )
      .returningAll()
      .execute();
    for (const row of written) saved.set(row.object_id, parseChangeRow(row));
  }
  const removed = rows.flatMap((r) => (r.change === null && r.before ? [r.before.id] : []));
  for (let i = 0; i < removed.length; i += ID_BATCH)
    await ctx.db
      .deleteFrom('branch_changes')
      .where('id', 'in', removed.slice(i, i + ID_BATCH))
      .execute();
  const writes: BranchChangeWrite[] = rows.flatMap((r): BranchChangeWrite[] => {
    if (r.change === null) return r.before ? [{ branchId, before: r.before, after: null }] : [];
    return [{ branchId, before: r.before, after: saved.get(r.objectId)! }];
  });
  await branchChangesWritten(ctx, branchId, writes);
}

/** Removes every change of a branch (the branch is being deleted); every keeper drops its state of it. */
export async function removeBranchChanges(ctx: Ctx, branchId: number): Promise<void> {
  await branchChangesDeleted(ctx, branchId);
  await ctx.db.deleteFrom('branch_changes').where('branch_id', '=', branchId).execute();
}

export async function savePremerge(ctx: Ctx, changeId: number, premerge: PremergeState | null): Promise<void> {
  await ctx.db
    .updateTable('branch_changes')
    .set({ premerge: premerge === null ? null : JSON.stringify(premerge) })
    .where('id', '=', changeId)
    .execute();
}
