import type { Ctx } from '../core/context';
import type { BranchChangeRow } from '../db/tables';
import { compiledSelect } from '../db/compiled-select';
import type { Queryable } from '../db/database';
import { parseAttributes, type Attributes } from './attributes';
import { branchChangeBatches } from './branch-change-batches-repository';
import { parseChangeRow, type BranchChange } from './branch-change';
import { ensureBranchState } from './branch-state';
import type { BranchStateKeeperOf } from './branch-state-keepers';
import { touchedObjectTypes } from './branch-types-repository';
import { computeConflicts, mergeProblem } from './conflicts';
import type { NetChange } from './net-effect';

/**
 * Conflicts and merge problems kept per change row (`branch_changes.conflicts`,
 * `branch_changes.merge_problem`), so that whether a branch conflicts, and which of its changes
 * would not merge, is an index probe rather than a read of every change against main:
 *
 * - a change written in a branch carries them, computed against main's object then
 *   (`saveChange`);
 * - a write of main's object rewrites them on every change of it in a branch not merged
 *   (`refreshChangesOfMany`, from `main-repository.ts`: every main write goes through it);
 * - a merged branch's rows are not kept: a revert makes the keeper stale (`forgetConflicts`),
 *   and the first read rebuilds them; so does the first read after the migration or after rows
 *   written beside the service (the keeper below).
 */
export const CHANGE_CONFLICTS_KEEPER = 'host:change-conflicts';

/** The kept columns of a change against main's attributes now (null: the object is gone). */
export function conflictColumns(
  change: NetChange,
  current: Attributes | null,
): { conflicts: string | null; merge_problem: string | null } {
  const conflicts = computeConflicts(change, current);
  return {
    conflicts: conflicts === null ? null : JSON.stringify(conflicts),
    merge_problem: mergeProblem(change, current, conflicts),
  };
}

type KeptRow = Pick<
  BranchChangeRow,
  'id' | 'object_type' | 'action' | 'original' | 'modified' | 'conflicts' | 'merge_problem'
>;

async function rewrite(
  ctx: Ctx,
  rows: readonly KeptRow[],
  currentOf: (row: KeptRow) => Attributes | null,
): Promise<void> {
  for (const row of rows) {
    const wanted = conflictColumns(
      { action: row.action, original: parseAttributes(row.original), modified: parseAttributes(row.modified) },
      currentOf(row),
    );
    if (wanted.conflicts === row.conflicts && wanted.merge_problem === row.merge_problem) continue;
    await ctx.db.updateTable('branch_changes').set(wanted).where('id', '=', row.id).execute();
  }
}

/**
 * Main's objects were written (each id with its type and attributes now; null: deleted): the
 * changes of them in branches not merged get their kept columns again, read in a few queries for
 * any number. Index ranges of `branch_changes_by_object`: the cost grows with the branches
 * changing these objects, not with their size.
 */
export async function refreshChangesOfMany(
  ctx: Ctx,
  states: ReadonlyMap<number, { objectType: string; attrs: Attributes } | null>,
): Promise<void> {
  const ids = [...states.keys()];
  for (let i = 0; i < ids.length; i += REFRESH_BATCH) {
    const rows = await ctx.db
      .selectFrom('branch_changes')
      .innerJoin('branches', 'branches.id', 'branch_changes.branch_id')
      .select([
        'branch_changes.id',
        'object_id',
        'object_type',
        'action',
        'original',
        'modified',
        'conflicts',
        'merge_problem',
      ])
      .where('branch_changes.object_id', 'in', ids.slice(i, i + REFRESH_BATCH))
      .where('branches.status', '<>', 'merged')
      .execute();
    await rewrite(ctx, rows, (row) => {
      const state = states.get((row as (typeof rows)[number]).object_id);
      return state && state.objectType === row.object_type ? state.attrs : null;
    });
  }
}

/** Objects whose changes are read per query when main's objects are written together. */
const REFRESH_BATCH = 500;

/** Rows read per batch when a branch's kept columns are rebuilt. */
const REBUILD_BATCH = 1000;

/** Recomputes the kept columns of every change of the branch against main now. */
async function rebuildConflicts(ctx: Ctx, branchId: number): Promise<void> {
  for await (const rows of branchChangeBatches(ctx, branchId, REBUILD_BATCH)) {
    const ids = rows.map((r) => r.object_id);
    const mains = new Map(
      (await ctx.db.selectFrom('objects').select(['id', 'object_type', 'data']).where('id', 'in', ids).execute()).map(
        (o) => [o.id, o],
      ),
    );
    await rewrite(ctx, rows, (row) => {
      const main = mains.get((row as (typeof rows)[number]).object_id);
      return main && main.object_type === row.object_type ? (parseAttributes(main.data) ?? {}) : null;
    });
  }
}

/**
 * The keeper of the kept columns: a change write carries its own (nothing to apply), a rebuild
 * recomputes them all, a deleted branch takes its rows with it.
 */
export function changeConflictsKeeper<C extends Ctx>(): BranchStateKeeperOf<C> {
  return {
    name: CHANGE_CONFLICTS_KEEPER,
    apply: async () => undefined,
    rebuild: (ctx, branchId) => rebuildConflicts(ctx, branchId),
    drop: async () => undefined,
  };
}

/** The changes of a branch that conflict with main, or that the merge could not apply, counted, with the first `limit` (oldest first). */
export interface KeptProblems {
  count: number;
  first: Array<{
    id: number;
    objectType: string;
    objectId: number;
    action: string;
    original: Attributes | null;
    modified: Attributes | null;
    conflicts: string[] | null;
    problem: string | null;
  }>;
}

/**
 * The branch's changes with conflicting attributes (`conflicts`) or a merge problem
 * (`problems`), from the kept columns (current: see `branchProblems`), leaving out those of
 * `types`; or (`types`) the changes of those types.
 */
export async function keptProblems(
  ctx: Ctx,
  branchId: number,
  kind: 'conflicts' | 'problems' | 'types',
  limit: number,
  types: readonly string[] = [],
): Promise<KeptProblems> {
  const base = () => {
    const q = ctx.db.selectFrom('branch_changes').where('branch_id', '=', branchId);
    if (kind === 'types') return q.where('object_type', 'in', types.length > 0 ? [...types] : ['']);
    const kept = q.where(kind === 'conflicts' ? 'conflicts' : 'merge_problem', 'is not', null);
    return types.length > 0 ? kept.where('object_type', 'not in', [...types]) : kept;
  };
  const counted = await base()
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  const rows =
    limit > 0
      ? await base()
          .select(['id', 'object_type', 'object_id', 'action', 'original', 'modified', 'conflicts', 'merge_problem'])
          .orderBy('id')
          .limit(limit)
          .execute()
      : [];
  return {
    count: Number(counted?.n ?? 0),
    first: rows.map((r) => ({
      id: r.id,
      objectType: r.object_type,
      objectId: r.object_id,
      action: r.action,
      original: parseAttributes(r.original),
      modified: parseAttributes(r.modified),
      conflicts: r.conflicts === null ? null : (JSON.parse(r.conflicts) as string[]),
      problem: r.merge_problem,
    })),
  };
}

/** Whether any change of the branch conflicts with main, from the kept columns: one probe of `branch_changes_conflicting`. */
const firstKeptConflict = compiledSelect((db: Queryable, branchId: number) =>
  db
    .selectFrom('branch_changes')
    .select('id')
    .where('branch_id', '=', branchId)
    .where('conflicts', 'is not', null)
    .limit(1),
);

export async function anyKeptConflict(ctx: Ctx, branchId: number): Promise<boolean> {
  return (await firstKeptConflict(ctx.db, branchId)).length > 0;
}

/** What `keptProblems` reads. */
const KEPT_PROBLEMS_TABLES: readonly string[] = ['branch_changes'];

/**
 * `keptProblems` of every type, kept in the read memo until the branch's changes are written
 * (a review or a comment runs the built-in checks again: their conflicts stand). Frozen: shared
 * by every caller until then.
 */
function keptProblemsShared(
  ctx: Ctx,
  branchId: number,
  kind: 'conflicts' | 'problems',
  limit: number,
): Promise<KeptProblems> {
  return ctx.host.readMemo.get(
    ctx,
    `kept-problems|${branchId}|${kind}|${limit}`,
    async () => {
      const kept = await keptProblems(ctx, branchId, kind, limit);
      for (const entry of kept.first) Object.freeze(entry);
      Object.freeze(kept.first);
      return Object.freeze(kept);
    },
    KEPT_PROBLEMS_TABLES,
  );
}

/** `keptProblems`, after making the branch's kept columns current. */
export async function branchProblems(
  ctx: Ctx,
  branchId: number,
  kind: 'conflicts' | 'problems',
  limit: number,
): Promise<KeptProblems> {
  await ensureBranchState(ctx, CHANGE_CONFLICTS_KEEPER, branchId);
  return keptProblemsShared(ctx, branchId, kind, limit);
}

/**
 * The changes of the branch the merge could not apply now, counted, with the first `limit`
 * (oldest first): the kept merge problems, and every change of an object type `known` refuses
 * (the catalogue no longer knows it; a few probes per type the branch touches).
 */
export async function branchMergeProblems(
  ctx: Ctx,
  branchId: number,
  known: (objectType: string) => boolean,
  limit: number,
): Promise<KeptProblems> {
  await ensureBranchState(ctx, CHANGE_CONFLICTS_KEEPER, branchId);
  const unknown = (await touchedObjectTypes(ctx, branchId)).filter((t) => !known(t));
  if (unknown.length === 0) return keptProblemsShared(ctx, branchId, 'problems', limit);
  const kept = await keptProblems(ctx, branchId, 'problems', limit, unknown);
  const strays = await keptProblems(ctx, branchId, 'types', limit, unknown);
  for (const s of strays.first) s.problem = `Its object type ${s.objectType} is no longer in the catalogue.`;
  const first = [...kept.first, ...strays.first].sort((a, b) => a.id - b.id).slice(0, limit);
  return { count: kept.count + strays.count, first };
}

/**
 * The branch's changes that conflict with main now, oldest first (at most `limit`), with the
 * attributes of each that conflict, and how many there are.
 */
export async function conflictingChanges(
  ctx: Ctx,
  branchId: number,
  limit: number,
): Promise<{ count: number; changes: Array<BranchChange & { conflicts: string[] }> }> {
  await ensureBranchState(ctx, CHANGE_CONFLICTS_KEEPER, branchId);
  const conflicting = () =>
    ctx.db.selectFrom('branch_changes').where('branch_id', '=', branchId).where('conflicts', 'is not', null);
  const counted = await conflicting()
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  const count = Number(counted?.n ?? 0);
  if (count === 0) return { count, changes: [] };
  const rows = await conflicting().selectAll().orderBy('id').limit(limit).execute();
  return {
    count,
    changes: rows.map((r) => ({ ...parseChangeRow(r), conflicts: JSON.parse(r.conflicts!) as string[] })),
  };
}

/** Whether any change of the branch conflicts with main now (whatever the branch's status). */
export async function branchConflicts(ctx: Ctx, branchId: number): Promise<boolean> {
  await ensureBranchState(ctx, CHANGE_CONFLICTS_KEEPER, branchId);
  return anyKeptConflict(ctx, branchId);
}
