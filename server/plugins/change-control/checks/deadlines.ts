import type { Ctx } from '../../../host';
import type { MergeCheckRow } from '../db/tables';
import { setCheckDeadline } from '../gate/gate-clock-repository';
import { timeMoved } from '../gate/clock-signal';
import type { DeclaredCheck } from './declared';

/**
 * A pending check's deadline (`timeout_minutes`): a required reported check still pending that
 * long after its row was created or last set pending fails as never reported. Kept on the row
 * (`deadline`), so that the gate's clock finds the next one with one indexed read, whatever the
 * number of requests; written wherever a row's status, its declarations or its request's state
 * move (a report, a refresh), and set again for every pending check at start (the configuration
 * may declare other timeouts).
 */
export function deadlineOf(
  declared: Pick<DeclaredCheck, 'required' | 'registered' | 'timeoutMinutes'> | undefined,
  row: Pick<MergeCheckRow, 'kind' | 'status' | 'last_updated'>,
  live = true,
): string | null {
  if (!live || !declared?.required || declared.registered || !declared.timeoutMinutes) return null;
  if (row.kind !== 'reported' || row.status !== 'pending') return null;
  return new Date(Date.parse(row.last_updated) + declared.timeoutMinutes * 60_000).toISOString();
}

/**
 * Writes the deadline each of a request's checks should have where it differs (`live`: the
 * request is open; a closed request's checks have none). A deadline set or moved earlier wakes the
 * gate's clock once the write commits.
 */
export async function syncCheckDeadlines(
  ctx: Ctx,
  declared: readonly DeclaredCheck[],
  rows: Iterable<
    Pick<MergeCheckRow, 'id' | 'change_request_id' | 'name' | 'kind' | 'status' | 'last_updated' | 'deadline'>
  >,
  live: boolean,
): Promise<void> {
  const byName = new Map(declared.map((d) => [d.name, d]));
  let earlier = false;
  for (const row of rows) {
    const want = deadlineOf(byName.get(row.name), row, live);
    if (want === row.deadline) continue;
    await setCheckDeadline(ctx, row, want);
    if (want !== null && (row.deadline === null || want < row.deadline)) earlier = true;
  }
  if (earlier) timeMoved(ctx);
}
