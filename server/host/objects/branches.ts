import type { Branch } from '../../../contract/api/branching';
import { API_PATHS } from '../../../contract/api/paths';
import { briefObject, fieldsOf, type ApiObject } from '../core/api-object';
import type { Ctx } from '../core/context';
import { NotFound } from '../core/errors';
import type { BranchRow } from '../db/tables';
import { findBranch } from './branches-repository';

export { findBranch, findBranches } from './branches-repository';

/**
 * Branches as data: the host keeps them (its objects live on main and in branches), the
 * branching plugin brings their API and actions.
 */
export const BRANCH_TYPE = 'branching.branch';
export const BRANCHES_PATH = API_PATHS.branches;

export type BranchOut = Branch & ApiObject;

export function presentBranch(ctx: Ctx, row: BranchRow): BranchOut {
  return {
    ...briefObject(ctx, BRANCHES_PATH, row.id, row.name),
    name: row.name,
    description: row.description,
    status: row.status as Branch['status'],
    ...fieldsOf(row, ['schema_id', 'owner', 'last_sync', 'merged_time', 'merged_by', 'created', 'last_updated']),
  };
}

/** The branch, or 404. */
export async function loadBranch(ctx: Ctx, id: number): Promise<BranchRow> {
  const row = await findBranch(ctx, id);
  if (!row) throw new NotFound();
  return row;
}
