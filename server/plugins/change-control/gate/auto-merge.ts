import { mergeBranch } from '../../branching';
import {
  Conflict,
  actingUser,
  branchAccess,
  createCtx,
  findBranch,
  inTransaction,
  type AuthUser,
  type Ctx,
  type BackgroundTask,
  type HostServices,
  type BranchRow,
} from '../../../host';
import { requestRefresh } from '../change-requests/refresh';
import { nowIso } from '../db/database';
import { autoMergeCandidateIds, requesterOf } from '../change-requests/repository';
import type { ChangeRequestRow } from '../db/tables';
import type { GateState } from './merge-gate';
import {
  claimQueue,
  failInterruptedMergeJobs,
  insertMergeJob,
  mergeJobRow,
  pendingJobs,
  queueClaimRow,
  releaseQueue,
  setMergeJobState,
} from './queue-repository';
import { randomUUID } from 'node:crypto';
import { freezesHolding } from './queue-freezes';

/**
 * Automatic merge through the merge queue: a request with `auto_merge` whose gates are all
 * clear (change window and freezes included) joins the queue (a `pending` job) in the write
 * that made it ready; right after that write commits, the queue runs. The queue merges one
 * request at a time, oldest job first: the instance that claims the queue in the database
 * (`cc_merge_queue_claim`) takes the head, re-validates it (a refresh that re-matches its
 * policies and runs its checks, `mergeable` and `no-conflicts` among them, then the merge gate
 * again: the merge before it may have moved main) and merges its branch, as its requester;
 * a head that is no longer ready leaves the queue (its job fails, saying why) and joins again
 * at the back once it is ready again.
 * A branch never has a second merge job while one is pending, scheduled or running (the
 * database refuses it), and the merge gate decides again when the job runs. A periodic sweep
 * (`auto_merge_interval` minutes) catches requests that became ready with time (a window opening).
 * Automatic merge grants no permission of its own: the requester must be allowed to merge the
 * branch (`branching.merge_branch` for it), and it never overrides the change window.
 */
export async function queueAutoMerge(ctx: Ctx, cr: ChangeRequestRow, gate: GateState): Promise<void> {
  const settings = ctx.host.config.change_control;
  if (!settings.enable_auto_merge || cr.auto_merge !== 1 || !gate.readyToMerge || cr.branch_id === null || !gate.branch)
    return;
  if (!(await mayMerge(ctx, await actingUser(ctx, cr.requester_id), gate.branch))) return;
  const now = nowIso(ctx);
  const inserted = await insertMergeJob(ctx, {
    change_request_id: cr.id,
    branch_id: cr.branch_id,
    state: 'pending',
    detail: '',
    created: now,
    last_updated: now,
  });
  if (!inserted) return;
  const host = ctx.host;
  const requestId = ctx.requestId;
  const baseUrl = ctx.baseUrl;
  ctx.afterCommit(() => drainMergeQueue(host, requestId, baseUrl));
}

/** How long a claim on the queue holds without being renewed (a stopped instance's claim lapses). */
export const QUEUE_CLAIM_MS = 5 * 60_000;

/**
 * Runs the merge queue until it is empty, if this caller can claim it; otherwise the instance
 * holding the claim runs it (and finds the new jobs). The claim is renewed before each job.
 */
export async function drainMergeQueue(host: HostServices, requestId: string, baseUrl: string): Promise<void> {
  const ctx = createCtx({ host, user: null, requestId, baseUrl });
  const holder = `${process.pid}:${randomUUID()}`;
  // An empty queue, or one a freeze holds whole, is left alone: nothing is written.
  if (!(await runnableHead(ctx))) return;
  const claim = async () => {
    const now = host.clock.now();
    return claimQueue(ctx, holder, now.toISOString(), new Date(now.getTime() + QUEUE_CLAIM_MS).toISOString());
  };
  for (;;) {
    if (!(await claim())) return;
    try {
      // Holding the claim, nobody else runs a job: one left running belongs to a holder whose claim lapsed.
      await failInterruptedJobs(ctx);
      for (let head = await runnableHead(ctx); head; head = await runnableHead(ctx)) {
        if (!(await claim())) return;
        await runMergeJob(host, head.id, requestId, baseUrl);
      }
    } finally {
      await releaseQueue(ctx, holder);
    }
    // A job queued while the claim was being given back found the queue claimed: look again.
    if (!(await runnableHead(ctx))) return;
  }
}

/** Pending jobs looked at for one a freeze does not hold. */
const RUNNABLE_WINDOW = 100;

/**
 * The job the queue runs next: the oldest pending one that no freeze in force holds. A held one
 * keeps its place and waits (the gate's clock runs the queue when a freeze ends), rather than
 * leaving the queue as a job the gate refused for another reason does.
 */
async function runnableHead(ctx: Ctx) {
  const pending = await pendingJobs(ctx, RUNNABLE_WINDOW);
  if (pending.length === 0) return undefined;
  const held = await freezesHolding(
    ctx,
    pending.map((j) => j.change_request_id),
  );
  return pending.find((j) => !held.has(j.change_request_id));
}

/**
 * Whether this user may merge the branch by hand: view it and hold `branching.merge_branch` whose
 * constraints admit it (owning the branch is not asked: it was asked when automatic merge was turned on).
 */
async function mayMerge(ctx: Ctx, user: AuthUser | null, branch: BranchRow): Promise<boolean> {
  if (!user) return false;
  return (await branchAccess(ctx, user)).mayAct(branch, 'merge');
}

async function setJob(
  host: HostServices,
  id: number,
  state: 'running' | 'completed' | 'failed',
  detail = '',
): Promise<void> {
  await setMergeJobState(
    createCtx({ host, user: null, requestId: 'auto-merge', baseUrl: '' }),
    id,
    state,
    detail.slice(0, 2000),
    host.clock.now().toISOString(),
  );
}

/**
 * Runs one queued merge job. The merge re-validates the request first (the merge gate's
 * validator re-matches its policies, runs its registered checks again, `mergeable` and
 * `no-conflicts` among them, and asks the gate, checks bound to the branch's content
 * included); one that is no longer ready leaves the queue, saying why. The outcome is kept on the job.
 */
export async function runMergeJob(
  host: HostServices,
  jobId: number,
  requestId: string,
  baseUrl: string,
): Promise<void> {
  const base = createCtx({ host, user: null, requestId, baseUrl });
  const job = await mergeJobRow(base, jobId);
  if (!job || job.state !== 'pending') return;
  await setJob(host, jobId, 'running');
  try {
    const cr = await requesterOf(base, job.change_request_id);
    const user = await actingUser(base, cr?.requester_id ?? null);
    const branch = await findBranch(base, job.branch_id);
    if (!branch) throw new Error('the branch no longer exists');
    if (!(await mayMerge(base, user, branch))) throw new Error('the requester may not merge this branch');
    try {
      await mergeBranch(createCtx({ host, user, requestId, baseUrl }), job.branch_id, { commit: true });
    } catch (err) {
      // The merge gate refused it now: it leaves the queue (and joins it again once ready).
      if (err instanceof Conflict) throw new Error(`left the merge queue: ${err.message}`, { cause: err });
      throw err;
    }
    await setJob(host, jobId, 'completed');
    host.log.info(`auto-merge: merged branch ${job.branch_id} of change request ${job.change_request_id}`);
  } catch (err) {
    await setJob(host, jobId, 'failed', (err as Error).message);
    host.log.info(
      `auto-merge: branch ${job.branch_id} of change request ${job.change_request_id} was not merged: ${(err as Error).message}`,
    );
  }
}

/** The sweep: refreshes open requests that ask for automatic merge, so the ready ones are queued. */
export async function sweepAutoMerge(host: HostServices): Promise<number> {
  if (!host.config.change_control.enable_auto_merge) return 0;
  const ctx = createCtx({
    host,
    user: null,
    requestId: `auto-merge-sweep-${host.clock.now().toISOString()}`,
    baseUrl: '',
  });
  const rows = await autoMergeCandidateIds(ctx);
  for (const id of rows) {
    try {
      await inTransaction(ctx, (tx) => requestRefresh(tx, id, { rematch: true }));
    } catch (err) {
      host.log.error(`auto-merge sweep: change request ${id}: ${(err as Error).message}`);
    }
  }
  return rows.length;
}

async function failInterruptedJobs(ctx: Ctx): Promise<void> {
  await failInterruptedMergeJobs(ctx, nowIso(ctx));
}

/**
 * At start: a job left running while nobody holds a live claim on the queue was interrupted (the
 * instance running it stopped): it is marked failed, so the branch can be queued again. Pending
 * jobs stay queued; the queue runs at start and at every sweep.
 */
export async function recoverInterruptedJobs(host: HostServices): Promise<void> {
  const ctx = createCtx({ host, user: null, requestId: 'auto-merge-recovery', baseUrl: '' });
  const now = host.clock.now().toISOString();
  const claim = await queueClaimRow(ctx);
  if (claim?.holder && claim.expires !== null && claim.expires >= now) return;
  await failInterruptedMergeJobs(ctx, now);
}

export function autoMergeSweeper(host: HostServices): BackgroundTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  return {
    start() {
      const minutes = host.config.change_control.auto_merge_interval;
      timer = setInterval(() => {
        running = host.unawaited.run(
          running
            .then(() => sweepAutoMerge(host))
            .then(() => drainMergeQueue(host, 'auto-merge-sweep', ''))
            .catch((err) => host.log.error(`auto-merge sweep failed: ${(err as Error).message}`)),
        );
      }, minutes * 60_000);
      timer.unref();
      // Jobs queued before a restart go now.
      running = host.unawaited.run(
        drainMergeQueue(host, 'auto-merge-start', '').catch((err) =>
          host.log.error(`merge queue failed: ${(err as Error).message}`),
        ),
      );
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
