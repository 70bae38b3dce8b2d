import {
  createCtx,
  inTransaction,
  recordChange,
  type BackgroundTask,
  type Ctx,
  type HostServices,
} from '../../../host';
import { requestRefresh } from '../change-requests/refresh';
import { nowIso } from '../db/database';
import { MERGE_CHECK_TYPE } from '../names';
import { attachedPolicies } from '../policies/governing';
import { snapshotCheck } from './present';
import { pendingChecksNamed, requestsWithPendingReportedChecks, updateCheckFields } from './repository';
import { declaredFor } from './state';

/**
 * `timeout_minutes` of a required reported check: still `pending` that long after its row was
 * created or last set pending, it becomes `failure` with a summary saying it never reported (a
 * changelog entry, refresh as for any reported result). A later report replaces it as usual.
 * A sweep runs every minute while the service is up.
 */
export async function sweepCheckTimeouts(host: HostServices): Promise<number> {
  const ctx = createCtx({
    host,
    user: null,
    requestId: `check-timeouts-${host.clock.now().toISOString()}`,
    baseUrl: '',
  });
  const pending = await requestsWithPendingReportedChecks(ctx);
  let failed = 0;
  for (const crId of pending) {
    try {
      failed += await inTransaction(ctx, (tx) => expireOverdue(tx, crId));
    } catch (err) {
      host.log.error(`check timeouts: change request ${crId}: ${(err as Error).message}`);
    }
  }
  return failed;
}

async function expireOverdue(ctx: Ctx, crId: number): Promise<number> {
  const declared = declaredFor(ctx, await attachedPolicies(ctx, crId)).filter(
    (d) => d.required && !d.registered && d.timeoutMinutes,
  );
  if (declared.length === 0) return 0;
  const rows = await pendingChecksNamed(
    ctx,
    crId,
    declared.map((d) => d.name),
  );
  const now = ctx.host.clock.now().getTime();
  let failed = 0;
  for (const row of rows) {
    const minutes = declared.find((d) => d.name === row.name)!.timeoutMinutes!;
    if (now - Date.parse(row.last_updated) < minutes * 60_000) continue;
    const at = nowIso(ctx);
    const next = {
      status: 'failure' as const,
      summary: `Never reported: still pending after ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      completed: at,
      last_updated: at,
    };
    await updateCheckFields(ctx, row, next);
    await recordChange(ctx, {
      action: 'update',
      objectType: MERGE_CHECK_TYPE,
      objectId: row.id,
      repr: row.name,
      prechange: snapshotCheck(ctx, row),
      postchange: snapshotCheck(ctx, { ...row, ...next }),
    });
    failed++;
  }
  if (failed > 0) await requestRefresh(ctx, crId, { rematch: false, evaluate: false });
  return failed;
}

export function checkTimeoutSweeper(host: HostServices): BackgroundTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  return {
    start() {
      timer = setInterval(() => {
        running = running
          .then(() => sweepCheckTimeouts(host))
          .catch((err) => host.log.error(`check timeout sweep failed: ${(err as Error).message}`));
      }, 60_000);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
