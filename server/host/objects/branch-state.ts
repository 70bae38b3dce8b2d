import { inTransaction, type Ctx } from '../core/context';
import type { BranchChangeWrite, BranchStateKeeperOf } from './branch-state-keepers';
import {
  advanceKeepers,
  changesRevision,
  forgetKeeperRevisions,
  keeperRevision,
  keeperRevisions,
  moveChangesRevision,
  recordKeeperRevision,
} from './branch-state-repository';

/**
 * Per-branch state kept inside write transactions.
 *
 * Every write of a branch's change rows through the repository (`branch-changes-repository.ts`)
 * moves the branch's `changes_revision` from r to r + 1 (r + n for n rows written together), in
 * its transaction. Each registered
 * keeper (`host.branchState`) records in `branch_state_revisions` the revision its state of
 * the branch reflects: a keeper recorded at r is given the write (`apply`) and recorded at
 * r + 1; a keeper that was behind (or never built) stays behind. A reader calls
 * `ensureBranchState` before reading a keeper's state: a keeper that is missing or behind is
 * rebuilt from all the branch's changes first. So kept state is never wrong, only sometimes
 * rebuilt (after a migration, a restore, or rows written beside the service, which move the
 * revision as they move the data version).
 */
export type BranchStateKeeper = BranchStateKeeperOf<Ctx>;
export type { BranchChangeWrite };

/**
 * Change rows of the branch were written (created, changed or removed), in this order: the
 * revision moves by one per row, and the keepers current before them are given them all
 * (together: a bulk write of many objects keeps each state with a few statements).
 */
export async function branchChangesWritten(
  ctx: Ctx,
  branchId: number,
  writes: readonly BranchChangeWrite[],
): Promise<void> {
  if (writes.length === 0) return;
  const to = await moveChangesRevision(ctx, branchId, writes.length);
  if (to === undefined) return;
  const keepers = ctx.host.branchState.all();
  if (keepers.length === 0) return;
  const from = to - writes.length;
  const recorded = await keeperRevisions(ctx, branchId);
  const current = keepers.filter((k) => recorded.get(k.name) === from);
  for (const keeper of current) await keeper.apply(ctx, writes);
  await advanceKeepers(
    ctx,
    branchId,
    current.map((k) => k.name),
    from,
    to,
  );
}

/** All the branch's change rows are about to go (the branch is deleted): every keeper drops its state. */
export async function branchChangesDeleted(ctx: Ctx, branchId: number): Promise<void> {
  await moveChangesRevision(ctx, branchId);
  for (const keeper of ctx.host.branchState.all()) await keeper.drop(ctx, branchId);
  await forgetKeeperRevisions(ctx, branchId);
}

/**
 * Makes the keeper's state of the branch current before it is read: when it is missing or
 * behind the branch's changes, it is rebuilt (in a write transaction) and recorded. A branch
 * that does not exist has nothing to keep.
 */
export async function ensureBranchState(ctx: Ctx, keeperName: string, branchId: number): Promise<void> {
  const keeper = ctx.host.branchState.get(keeperName);
  if (!keeper) throw new Error(`no branch state keeper named ${keeperName}`);
  if (await isCurrent(ctx, keeperName, branchId)) return;
  await inTransaction(ctx, async (tx) => {
    // Again inside the transaction: another writer may have rebuilt it meanwhile.
    const revision = await changesRevision(tx, branchId);
    if (revision === undefined || (await keeperRevision(tx, branchId, keeperName)) === revision) return;
    // The revision is read before the rows the rebuild reads: a write committed in between
    // leaves the keeper recorded behind (rebuilt again later), never ahead of its state.
    await recordKeeperRevision(tx, branchId, keeperName, -1);
    await keeper.rebuild(tx, branchId);
    await recordKeeperRevision(tx, branchId, keeperName, revision);
  });
}

/** Marks the keeper's state of the branch stale: the next reader rebuilds it (a writer that did not keep it up to date says so). */
export async function forgetBranchState(ctx: Ctx, branchId: number, keeperName: string): Promise<void> {
  await forgetKeeperRevisions(ctx, branchId, keeperName);
}

async function isCurrent(ctx: Ctx, keeperName: string, branchId: number): Promise<boolean> {
  const revision = await changesRevision(ctx, branchId);
  return revision === undefined || (await keeperRevision(ctx, branchId, keeperName)) === revision;
}
