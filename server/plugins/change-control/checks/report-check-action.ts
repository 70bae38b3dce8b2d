import { CHECK_STATUSES, type CheckStatus } from '../../../../contract/api/change-control';
import { isHttpUrl } from '../../../../contract/api/common';
import {
  actingUser,
  createCtx,
  inTransaction,
  type Ctx,
  type EmittedEvent,
  type EventPayload,
  type EventRuleRow,
  type Host,
} from '../../../host';
import { findChangeRequestForBranch, getChangeRequestRow } from '../change-requests/repository';
import { isOpen } from '../change-requests/status';
import { BRANCH_TYPE } from '../../branching';
import { CHANGE_REQUEST_TYPE, PERMISSIONS } from '../names';
import { presentCheckRows } from './present';
import { attachedPolicies } from '../policies/governing';
import { reportCheckResult } from './report-result';
import { checkRowNamed } from './repository';
import { declaredFor } from './state';

/**
 * The event-rule action `change_control.report_check` (contract 4.6, provisional): writes a
 * result onto a check of the open change request of the branch the event came from, only
 * when that check is declared as a reported check (a governing policy's `checks` or
 * `required_external_checks`, not a registered check); otherwise it does nothing and logs why.
 *
 * It acts with the authority of the rule's creator (`created_by`: who wrote the rule last),
 * never the triggering user's: it runs only while the creator is active and holds
 * `change_control.change_mergecheck` whose constraints admit the check, a check that declares
 * its reporter takes the result only when the reporter admits the creator, and the result and
 * its changelog entry name the creator, with the rule as the result's `source`.
 */
export const REPORT_CHECK_ACTION = 'change_control.report_check';

interface ReportData {
  check: string;
  status: CheckStatus;
  summary?: string;
  details_url?: string;
}

export function reportDataProblem(data: Record<string, unknown> | null): string | null {
  if (!data || typeof data !== 'object') return 'action_data must be an object with "check"';
  if (typeof data.check !== 'string' || data.check.trim() === '') return 'action_data.check must name a check';
  if (data.status !== undefined && !(CHECK_STATUSES as readonly unknown[]).includes(data.status)) {
    return `action_data.status must be one of: ${CHECK_STATUSES.join(', ')}`;
  }
  if (data.summary !== undefined && typeof data.summary !== 'string') return 'action_data.summary must be a string';
  if (
    data.details_url !== undefined &&
    (typeof data.details_url !== 'string' || (data.details_url !== '' && !isHttpUrl(data.details_url)))
  ) {
    return 'action_data.details_url must be an absolute http:// or https:// URL (or empty)';
  }
  const unknown = Object.keys(data).filter((k) => !['check', 'status', 'summary', 'details_url'].includes(k));
  if (unknown.length > 0) return `action_data: unknown key "${unknown[0]}"`;
  return null;
}

/**
 * The branch an event came from: the request's branch, the branch itself, the branch of the
 * request a review, check or comment belongs to, or the branch the write was made in.
 */
async function eventBranchId(reader: Ctx, event: EmittedEvent, writtenIn: number | null): Promise<number | null> {
  if (event.objectType === CHANGE_REQUEST_TYPE) return (event.data.branch as number | null | undefined) ?? null;
  if (event.objectType === BRANCH_TYPE) return event.objectId;
  if (typeof event.data.branch === 'number' && event.objectType.startsWith('branching.')) return event.data.branch;
  if (typeof event.data.change_request === 'number' && event.objectType.startsWith('change_control.'))
    return (await getChangeRequestRow(reader, event.data.change_request))?.branch_id ?? null;
  return writtenIn;
}

async function report(ctx: Ctx, rule: EventRuleRow, branchId: number, data: ReportData): Promise<void> {
  const creator = ctx.user!;
  const log = (why: string) =>
    ctx.host.log.info(`event rule "${rule.name}" (${REPORT_CHECK_ACTION}): ${why}; nothing reported`);
  const cr = await findChangeRequestForBranch(ctx, branchId);
  if (!cr || !isOpen(cr.status)) return log(`branch ${branchId} has no open change request`);
  const declared = declaredFor(ctx, await attachedPolicies(ctx, cr.id)).find((d) => d.name === data.check);
  if (!declared) return log(`check "${data.check}" is not declared for change request ${cr.id}`);
  // A registered check computes its own result; a report would only be overwritten by the next refresh.
  if (declared.registered) return log(`check "${data.check}" is a registered check, whose result the service computes`);
  const row = await checkRowNamed(ctx, cr.id, data.check);
  if (!row) return log(`check "${data.check}" has no row on change request ${cr.id} yet`);
  // The creator's permission to report this check, constraints included, as a PATCH of it needs.
  const perms = await ctx.host.permissions.forUser(creator, ctx.db);
  const [presented] = await presentCheckRows(ctx, [row]);
  if (!presented || !perms.allows(PERMISSIONS.reportCheck, presented))
    return log(`its creator "${creator.username}" may not report check "${data.check}" (${PERMISSIONS.reportCheck})`);
  // A check that names its reporter takes results from that reporter only: the rule's creator must be it.
  const outcome = await reportCheckResult(ctx, row, {
    status: data.status,
    summary: data.summary,
    details_url: data.details_url,
    source: { event_rule: rule.id },
  });
  if (outcome.refused) log(outcome.refused);
}

export function registerReportCheckAction(host: Host): void {
  host.events.registerAction(REPORT_CHECK_ACTION, {
    permissions: [PERMISSIONS.reportCheck],
    checkData: reportDataProblem,
    run: async (ctx: Ctx, rule: EventRuleRow, payload: EventPayload, event: EmittedEvent) => {
      // The triggering write has committed: what is read from here on is read afresh.
      const base = createCtx({ host: ctx.host, user: null, requestId: payload.request.id, baseUrl: ctx.baseUrl });
      const branchId = await eventBranchId(base, event, ctx.branch?.id ?? null);
      if (branchId === null) {
        ctx.host.log.info(
          `event rule "${rule.name}" (${REPORT_CHECK_ACTION}): the ${event.event} event of ${event.objectType} ${event.objectId} came from no branch; nothing reported`,
        );
        return;
      }
      const raw = rule.action_data ?? {};
      const data: ReportData = {
        check: String(raw.check),
        status: (raw.status as CheckStatus | undefined) ?? 'failure',
        summary: raw.summary as string | undefined,
        details_url: raw.details_url as string | undefined,
      };
      // Reported in a transaction of its own, as the rule's creator (never the triggering user),
      // while they are active.
      const creator = await actingUser(base, rule.created_by);
      if (!creator) {
        ctx.host.log.info(
          `event rule "${rule.name}" (${REPORT_CHECK_ACTION}): its creator is gone or inactive; nothing reported`,
        );
        return;
      }
      const own = createCtx({
        host: ctx.host,
        user: creator,
        requestId: payload.request.id,
        baseUrl: ctx.baseUrl,
        branch: null,
      });
      await inTransaction(own, (tx) => report(tx, rule, branchId, data));
    },
  });
}
