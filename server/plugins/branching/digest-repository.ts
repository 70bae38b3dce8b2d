import { branchChangeBatches, type Ctx } from '../../host';
import { branchingDb } from './db/database';

/** A branch's kept digest: the change count, the LtHash16 state (base64 of 2,048 bytes) and its digest. */
export interface DigestRow {
  changes: number;
  state: string;
  digest: string;
}

export async function digestRow(ctx: Ctx, branchId: number): Promise<DigestRow | undefined> {
  const row = await branchingDb(ctx)
    .selectFrom('branching_digests')
    .select(['changes', 'state', 'digest'])
    .where('branch_id', '=', branchId)
    .executeTakeFirst();
  return row ? { changes: Number(row.changes), state: row.state, digest: row.digest } : undefined;
}

/**
 * A branch's kept digest and change count in one query, with whether the keeper's state is
 * current (its recorded revision is the branch's): undefined when the branch does not exist.
 */
export async function keptDigest(
  ctx: Ctx,
  branchId: number,
  keeper: string,
): Promise<{ current: boolean; changes: number; digest: string | null } | undefined> {
  const row = await branchingDb(ctx)
    .selectFrom('branches as b')
    .leftJoin('branch_state_revisions as r', (join) =>
      join.onRef('r.branch_id', '=', 'b.id').on('r.keeper', '=', keeper),
    )
    .leftJoin('branching_digests as d', 'd.branch_id', 'b.id')
    .select(['b.changes_revision', 'r.revision', 'd.changes', 'd.digest'])
    .where('b.id', '=', branchId)
    .executeTakeFirst();
  if (!row) return undefined;
  const current = row.revision !== null && Number(row.revision) === Number(row.changes_revision) && row.digest !== null;
  return { current, changes: Number(row.changes ?? 0), digest: row.digest };
}

export async function storeDigest(ctx: Ctx, branchId: number, row: DigestRow): Promise<void> {
  await branchingDb(ctx)
    .insertInto('branching_digests')
    .values({ branch_id: branchId, ...row })
    .onConflict((oc) => oc.column('branch_id').doUpdateSet(row))
    .execute();
}

export async function dropDigest(ctx: Ctx, branchId: number): Promise<void> {
  await branchingDb(ctx).deleteFrom('branching_digests').where('branch_id', '=', branchId).execute();
}

/** Rows read per batch when a branch's digest is rebuilt. */
const BATCH = 2000;

/** A branch's changes (what the digest reads of them), in batches by id. */
export async function* branchChangeRows(
  ctx: Ctx,
  branchId: number,
): AsyncGenerator<Array<{ objectType: string; objectId: number; original: unknown; modified: unknown }>> {
  for await (const rows of branchChangeBatches(ctx, branchId, BATCH)) {
    yield rows.map((r) => ({
      objectType: r.object_type,
      objectId: r.object_id,
      original: r.original === null ? null : (JSON.parse(r.original) as unknown),
      modified: r.modified === null ? null : (JSON.parse(r.modified) as unknown),
    }));
  }
}
