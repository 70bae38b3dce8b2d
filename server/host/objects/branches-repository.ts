import type { Ctx } from '../core/context';

/** Every branch (the branches list's query). */
export function branchRows(ctx: Ctx) {
  return ctx.db.selectFrom('branches').selectAll();
}
