import type { Insertable, Updateable } from 'kysely';
import { compiledSelect, type Ctx } from '../../../host';
import { ccDb, ccTables } from '../db/database';
import type { MergeCheckRow, MergeChecksTable } from '../db/tables';

/** What a read of checks is computed from: a write of another table keeps it (read memo). */
const CHECK_TABLES: readonly string[] = ['cc_merge_checks'];

/**
 * One check's row. Kept in the read memo while no check is written, so the reads of one write
 * (the route finding the check, the report, the answer) read it once. Inside a write it is kept
 * for that write only: the reports of a pipeline write checks one after the other, so a row kept
 * from before the write would hardly ever still be good (`MemoOptions.transactionOnly`). The row is shared:
 * never change it, copy it.
 */
export function checkRow(ctx: Ctx, id: number): Promise<MergeCheckRow | undefined> {
  return ctx.host.readMemo.get(ctx, `cc-check|${id}`, () => readCheckRow(ctx, id), CHECK_TABLES, {
    transactionOnly: true,
  });
}

/** The select of `readCheckRow`, built and compiled once (every check report reads its check). */
const checkById = compiledSelect((db, id: number) =>
  ccTables(db).selectFrom('cc_merge_checks').selectAll().where('id', '=', id),
);

/** One check's row, read now (a row of its own, not the shared one of `checkRow`). */
export async function readCheckRow(ctx: Ctx, id: number): Promise<MergeCheckRow | undefined> {
  return (await checkById(ctx.db, id))[0];
}

/** The check of a request with this name, if it has a row. */
export async function checkRowNamed(
  ctx: Ctx,
  changeRequestId: number,
  name: string,
): Promise<MergeCheckRow | undefined> {
  return ccDb(ctx)
    .selectFrom('cc_merge_checks')
    .selectAll()
    .where('change_request_id', '=', changeRequestId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Every check row of a request, oldest first. */
export async function checkRowsOf(ctx: Ctx, changeRequestId: number): Promise<MergeCheckRow[]> {
  return ccDb(ctx)
    .selectFrom('cc_merge_checks')
    .selectAll()
    .where('change_request_id', '=', changeRequestId)
    .orderBy('id')
    .execute();
}

/** The gate's view of a request's stored checks (only the columns it reads). */
export type CheckFacts = Pick<
  MergeCheckRow,
  | 'id'
  | 'change_request_id'
  | 'name'
  | 'label'
  | 'kind'
  | 'status'
  | 'summary'
  | 'digest'
  | 'reported_by'
  | 'last_updated'
  | 'deadline'
  | 'timed_out'
>;

const checkFactsById = compiledSelect((db, changeRequestId: number) =>
  ccTables(db)
    .selectFrom('cc_merge_checks')
    .select([
      'id',
      'change_request_id',
      'name',
      'label',
      'kind',
      'status',
      'summary',
      'digest',
      'reported_by',
      'last_updated',
      'deadline',
      'timed_out',
    ])
    .where('change_request_id', '=', changeRequestId),
);

export async function checkFactsOf(ctx: Ctx, changeRequestId: number): Promise<CheckFacts[]> {
  return checkFactsById(ctx.db, changeRequestId);
}

export async function insertCheck(ctx: Ctx, values: Insertable<MergeChecksTable>): Promise<MergeCheckRow> {
  return ccDb(ctx).insertInto('cc_merge_checks').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A reported result's fields, written onto one check. */
export type CheckResultFields = Pick<
  MergeCheckRow,
  | 'status'
  | 'summary'
  | 'details_url'
  | 'digest'
  | 'reported_by'
  | 'source'
  | 'completed'
  | 'last_updated'
  | 'deadline'
  | 'timed_out'
>;

/** Writes a result onto the check `row`; the rest of the transaction reads the row written without asking again. */
export async function updateCheckResult(
  ctx: Ctx,
  row: MergeCheckRow,
  fields: CheckResultFields,
): Promise<MergeCheckRow> {
  await ccDb(ctx).updateTable('cc_merge_checks').set(fields).where('id', '=', row.id).execute();
  const written = { ...row, ...fields };
  ctx.host.readMemo.written(ctx, `cc-check|${row.id}`, written, CHECK_TABLES);
  return written;
}

/** Writes these fields onto one check. */
export async function updateCheckFields(
  ctx: Ctx,
  row: Pick<MergeCheckRow, 'id'>,
  fields: Updateable<MergeChecksTable>,
): Promise<void> {
  await ccDb(ctx).updateTable('cc_merge_checks').set(fields).where('id', '=', row.id).execute();
}

/** The open change requests with a reported check still pending. */
export async function requestsWithPendingReportedChecks(ctx: Ctx): Promise<number[]> {
  const rows = await ccDb(ctx)
    .selectFrom('cc_merge_checks')
    .innerJoin('cc_change_requests', 'cc_change_requests.id', 'cc_merge_checks.change_request_id')
    .select(['cc_merge_checks.change_request_id as crId'])
    .distinct()
    .where('cc_merge_checks.kind', '=', 'reported')
    .where('cc_merge_checks.status', '=', 'pending')
    .where('cc_change_requests.status', 'not in', ['completed', 'abandoned'])
    .execute();
  return rows.map((r) => r.crId);
}

/** A request's pending checks with these names (none for no names). */
export async function pendingChecksNamed(
  ctx: Ctx,
  changeRequestId: number,
  names: readonly string[],
): Promise<MergeCheckRow[]> {
  if (names.length === 0) return [];
  return ccDb(ctx)
    .selectFrom('cc_merge_checks')
    .selectAll()
    .where('change_request_id', '=', changeRequestId)
    .where('status', '=', 'pending')
    .where('name', 'in', [...names])
    .execute();
}

export async function deleteCheck(ctx: Ctx, row: Pick<MergeCheckRow, 'id'>): Promise<void> {
  await ccDb(ctx).deleteFrom('cc_merge_checks').where('id', '=', row.id).execute();
}
