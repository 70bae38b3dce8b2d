import type { Ctx } from '../../../host';
import type { ChangeRequestRow } from '../db/tables';
import type { GateState } from '../gate/merge-gate';

/**
 * The gate a write's refresh of a change request computed, kept for the rest of that
 * transaction so presenting the request (the write's answer, its lifecycle events) does not
 * compute it again. It holds only while no other refresh of the request is pending and for the
 * row as the refresh left it; the next write drops it (a new refresh is requested).
 */
const byTransaction = new WeakMap<object, Map<number, { row: ChangeRequestRow; gate: GateState }>>();

export function keepRefreshedGate(ctx: Ctx, row: ChangeRequestRow, gate: GateState): void {
  if (!ctx.inTransaction) return;
  let kept = byTransaction.get(ctx.db);
  if (!kept) {
    kept = new Map();
    byTransaction.set(ctx.db, kept);
  }
  kept.set(row.id, { row, gate });
}

export function dropRefreshedGate(ctx: Ctx, changeRequestId: number): void {
  byTransaction.get(ctx.db)?.delete(changeRequestId);
}

/** The gate the refresh of this transaction left for exactly this row, or undefined. */
export function refreshedGate(ctx: Ctx, row: ChangeRequestRow): GateState | undefined {
  if (!ctx.inTransaction) return undefined;
  const kept = byTransaction.get(ctx.db)?.get(row.id);
  if (!kept) return undefined;
  const same = (Object.keys(row) as Array<keyof ChangeRequestRow>).every((k) => kept.row[k] === row[k]);
  return same ? kept.gate : undefined;
}
