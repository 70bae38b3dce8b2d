import { withTables, type Ctx, type HostTables, type Queryable } from '../../../host';

/** The branching plugin's own tables. */
export interface BranchingTables {
  /** Per branch: its digest state, kept by every write of its changes (`digest.ts`). */
  branching_digests: {
    branch_id: number;
    changes: number;
    /** The LtHash16 state: 2,048 bytes, base64. */
    state: string;
    digest: string;
  };
}

/** The context's database handle (a transaction during writes), seeing the plugin's tables too. */
export function branchingDb(ctx: Ctx): Queryable<HostTables & BranchingTables> {
  return withTables<BranchingTables>(ctx.db);
}
