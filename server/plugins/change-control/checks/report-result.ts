import type { CheckStatus } from '../../../../contract/api/change-control';
import { recordChange, type Ctx } from '../../../host';
import { requestRefresh } from '../change-requests/refresh';
import { nowIso } from '../db/database';
import type { MergeCheckRow } from '../db/tables';
import { MERGE_CHECK_TYPE } from '../names';
import { attachedPolicies } from '../policies/governing';
import { snapshotCheck } from './present';
import { updateCheckResult } from './repository';
import { deadlineOf } from './deadlines';
import { timeMoved } from '../gate/clock-signal';
import { reporterRefusal } from './reporter';
import { checkedRequest, declaredFor } from './state';

/** A reported result: a field left out keeps the stored one; the digest defaults to the branch's now. */
export interface CheckReport {
  status?: CheckStatus;
  summary?: string;
  details_url?: string;
  digest?: string;
  /** An event rule's report: the rule (the reporter is its creator, the context's user). */
  source?: { event_rule: number } | null;
}

/** What became of a report: refused (why), or accepted (`written` false when it repeated the stored result). */
export type ReportOutcome = { refused: string } | { refused: null; written: boolean };

/**
 * A result reported onto a check, however it arrives (a pipeline's PATCH of the check, an event
 * rule's `change_control.report_check` action): one rule for both.
 *
 * - A check that names its reporter takes results from that reporter only (the caller's identity,
 *   superusers included; for an event rule's report, its creator's). Who reported the result, and
 *   the rule it came through, are kept with it.
 * - A reported check's result is bound to the digest it ran on: the one sent, or the branch's now.
 * - `completed` marks when the result last changed: a report of the same result writes nothing.
 * - A change is recorded in the changelog and moves the request's gate (only check results moved:
 *   no re-evaluation), before the caller reads anything back.
 */
export async function reportCheckResult(ctx: Ctx, row: MergeCheckRow, report: CheckReport): Promise<ReportOutcome> {
  const declared = declaredFor(ctx, await attachedPolicies(ctx, row.change_request_id)).find(
    (d) => d.name === row.name,
  );
  const refusal = await reporterRefusal(ctx, declared);
  if (refusal) return { refused: refusal };
  const next = {
    status: report.status ?? row.status,
    summary: report.summary ?? row.summary,
    details_url: report.details_url ?? row.details_url,
    digest:
      row.kind === 'reported'
        ? (report.digest ?? (await checkedRequest(ctx, row.change_request_id))?.digest ?? null)
        : row.digest,
    // Who reported it, and through what: a result counts only from the reporter a check declares.
    reported_by: ctx.user?.id ?? null,
    source: report.source ? JSON.stringify(report.source) : null,
  };
  if (
    next.status === row.status &&
    next.summary === row.summary &&
    next.details_url === row.details_url &&
    next.digest === row.digest &&
    next.reported_by === row.reported_by &&
    next.source === row.source
  )
    return { refused: null, written: false };
  const now = nowIso(ctx);
  // A result set pending again starts its timeout afresh; any other ends it (and the timeout's own result).
  const deadline = deadlineOf(declared, { kind: row.kind, status: next.status, last_updated: now });
  const written = { ...next, completed: now, last_updated: now, deadline, timed_out: 0 };
  const after = await updateCheckResult(ctx, row, written);
  await recordChange(ctx, {
    action: 'update',
    objectType: MERGE_CHECK_TYPE,
    objectId: row.id,
    repr: row.name,
    prechange: snapshotCheck(ctx, row),
    postchange: snapshotCheck(ctx, after),
  });
  if (deadline !== null) timeMoved(ctx);
  // A result for an older digest is outdated as it is written; one replacing the timeout's clears it.
  const current = row.kind === 'reported' ? (await checkedRequest(ctx, row.change_request_id))?.digest : undefined;
  const staleChecks = row.timed_out === 1 || (next.digest !== null && current != null && next.digest !== current);
  await requestRefresh(ctx, row.change_request_id, { rematch: false, evaluate: false, staleChecks });
  await ctx.flushBeforeCommit();
  return { refused: null, written: true };
}
