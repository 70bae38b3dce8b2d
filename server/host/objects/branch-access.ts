import type { AuthUser, BranchRef, Ctx } from '../core/context';
import { PermissionDenied, ValidationError } from '../core/errors';
import { grantAllows, type Grant } from '../users/object-permissions';
import type { BranchRow } from '../db/tables';
import { presentBranch } from './branches';
import { allBranches, branchBySchemaId } from './branches-repository';

/**
 * Who may see and who may write a branch. One module, used by `X-NetBox-Branch`, object
 * writes in a branch, the branch actions, the changes list and change control.
 *
 * - View: superusers, or `branching.view_branch` whose constraints admit the branch.
 * - Write (object writes with `X-NetBox-Branch`; turning automatic merge on): superusers, the
 *   branch's owner, or `branching.change_branch` whose constraints admit the branch. This is
 *   asked besides the permission of the write itself, and only of a branch the caller can view.
 * - The branch actions (sync, merge, revert): their own permission (`branching.sync_branch`,
 *   `merge_branch`, `revert_branch`) whose constraints admit the branch, as the contract says.
 *   Owning the branch grants none of them, and none of them needs ownership or `change_branch`.
 */
export interface BranchAccess {
  mayView(branch: BranchRow): boolean;
  mayWrite(branch: BranchRow): boolean;
  /** May view the branch and run this action on it (its permission's constraints admit it). */
  mayAct(branch: BranchRow, action: BranchAction): boolean;
  /** Every branch is visible (no need to look at each). */
  readonly seesAll: boolean;
}

/** The actions on a branch that have a permission of their own. */
export type BranchAction = 'sync' | 'merge' | 'revert';

const admits = (ctx: Ctx, grant: Grant, branch: BranchRow, user: AuthUser): boolean =>
  grant === true || (grant !== false && grantAllows(grant, presentBranch(ctx, branch), user));

/** The branch access of `user` (default: the caller), loaded once and asked for as many branches as needed. */
export async function branchAccess(ctx: Ctx, user: AuthUser | null = ctx.user): Promise<BranchAccess> {
  if (!user) return { mayView: () => false, mayWrite: () => false, mayAct: () => false, seesAll: false };
  if (user.isSuperuser) return { mayView: () => true, mayWrite: () => true, mayAct: () => true, seesAll: true };
  const perms = await ctx.host.permissions.forUser(user, ctx.db);
  const view = perms.grant('branching.branch', 'view');
  const change = perms.grant('branching.branch', 'change');
  return {
    mayView: (branch) => admits(ctx, view, branch, user),
    mayWrite: (branch) =>
      admits(ctx, view, branch, user) && (branch.owner === user.id || admits(ctx, change, branch, user)),
    mayAct: (branch, action) =>
      admits(ctx, view, branch, user) && admits(ctx, perms.grant('branching.branch', action), branch, user),
    seesAll: view === true,
  };
}

export function branchWriteRefusal(branch: Pick<BranchRow, 'name'>): string {
  return `You may not write to branch "${branch.name}": only its owner or a holder of branching.change_branch for it may.`;
}

/** 403 naming the branch unless the caller may write to it. */
export async function requireBranchWrite(ctx: Ctx, branch: BranchRow): Promise<void> {
  if ((await branchAccess(ctx)).mayWrite(branch)) return;
  throw new PermissionDenied(branchWriteRefusal(branch));
}

/** Why the caller may not run `action` on a branch it can view (its permission does not cover it). */
export function branchActionRefusal(branch: Pick<BranchRow, 'name'>, action: BranchAction): string {
  return `You may not ${action} branch "${branch.name}": that needs branching.${action}_branch for it.`;
}

/** The ids of the branches the caller can view, or `'all'`. */
export async function visibleBranchIds(ctx: Ctx): Promise<'all' | Set<number>> {
  const access = await branchAccess(ctx);
  if (access.seesAll) return 'all';
  if (!ctx.user) return new Set();
  const rows = await allBranches(ctx);
  return new Set(rows.filter((r) => access.mayView(r)).map((r) => r.id));
}

/**
 * The branch `X-NetBox-Branch` names. A branch that does not exist and one the caller cannot
 * view get the same answer (400, same body), with or without a token: the header tells
 * nobody which schema ids exist.
 */
export async function resolveBranchHeader(ctx: Ctx, header: string | string[] | undefined): Promise<BranchRef | null> {
  const schemaId = Array.isArray(header) ? header[0] : header;
  if (schemaId === undefined || schemaId === '') return null;
  const row = await branchBySchemaId(ctx, schemaId);
  if (!row || !(await branchAccess(ctx)).mayView(row)) {
    throw ValidationError.field('X-NetBox-Branch', `Unknown branch "${schemaId.slice(0, 100)}".`);
  }
  return { id: row.id, schemaId: row.schema_id, name: row.name };
}
