import type { HostDb, Queryable } from '../db/database';
import {
  bumpDataVersion,
  countingWrites,
  versionsBeingCommitted,
  writesThrough,
  writtenTables,
  type DataVersions,
} from '../db/data-version';
import { retryingStalePlan } from '../db/pg-client';
import type { EventBus } from '../events/bus';
import type { BranchStateKeepers } from '../objects/branch-state-keepers';
import type { ObjectTypeRegistry } from '../objects/object-types';
import type { PermissionService } from '../users/object-permissions';
import type { BranchHooks, MergeValidators } from './hooks';
import type { AuthUser, BranchRef } from './identity';
import { UncheckedReadsStale, type ReadMemo, type UncheckedReads } from './read-memo';
import type { CoreServices, Scope } from './scope';
import type { SearchRegistry } from './search';
import type { RelatedVisibility } from '../objects/related-visibility';
import type { CredentialThrottle } from './throttle';
import type { WriteTurns } from './write-turns';

export type { AuthUser, BranchRef } from './identity';

/**
 * Consulted before every direct write of a source-of-truth object on main (no branch).
 * Returns null to allow, or the reason the write is refused (answered as 400 with `detail`).
 */
export type MainWriteGuard = (ctx: Ctx, objectType: string) => Promise<string | null>;

/** Background work a plugin runs while the service is up (timers, sweeps). */
export interface BackgroundTask {
  start(): void;
  stop(): Promise<void>;
}

/** The services of the host that domain code reaches through `ctx.host`. */
export interface HostServices extends CoreServices {
  readonly db: HostDb;
  readonly objectTypes: ObjectTypeRegistry;
  readonly permissions: PermissionService;
  readonly events: EventBus<Ctx>;
  readonly branchHooks: BranchHooks<Ctx>;
  readonly mergeValidators: MergeValidators<Ctx>;
  /** Guards of direct writes on main (`protect_main`); merges are not direct writes. */
  readonly mainWriteGuards: MainWriteGuard[];
  readonly search: SearchRegistry<Ctx>;
  /** What the changelog and notifications show of plugins' object types (`objects/related-visibility.ts`). */
  readonly relatedVisibility: RelatedVisibility<Ctx>;
  /** Loaded plugins and their versions, for `/api/status/`. */
  readonly plugins: Map<string, string>;
  readonly background: BackgroundTask[];
  /** Failed credentials per client address and username (token authentication, token provisioning). */
  readonly credentialThrottle: CredentialThrottle;
  /** Reads reused while the data they come from cannot have changed (the one cache mechanism). */
  readonly readMemo: ReadMemo;
  /** Per-branch state kept current by every write of a branch's changes (`objects/branch-state.ts`). */
  readonly branchState: BranchStateKeepers<Ctx>;
  /** Turns to write (`write-turns.ts`): on PostgreSQL; none on SQLite, whose writer is in the process. */
  readonly writeTurns: WriteTurns | null;
}

/**
 * Everything a domain function needs to act for one request (or one background task):
 * the database handle (a transaction during writes), the caller, the request id that ties
 * changelog entries and event payloads together, and the host's services.
 */
export interface Ctx extends Scope {
  readonly host: HostServices;
  /**
   * Work to run at the end of the transaction, before it commits: the one place where triggers
   * collapse. Tasks with the same key collapse into one run (several triggers arriving together
   * make one run); the wishes of a later trigger are merged into the queued ones by `merge`
   * (without it, the first trigger's wishes hold), and the task gets the merged wishes. A task
   * may queue more. Outside a transaction the task runs at once.
   */
  beforeCommit<W = undefined>(
    key: string,
    task: (tx: Ctx, wishes: W) => Promise<void>,
    wishes?: W,
    merge?: (queued: W, more: W) => void,
  ): Promise<void>;
  /**
   * Runs the before-commit work queued so far, now (a route does this before presenting its
   * answer, so the answer reflects it). Work queued later still runs before the commit.
   */
  flushBeforeCommit(): Promise<void>;
}

export interface CtxInit {
  host: HostServices;
  user: AuthUser | null;
  requestId: string;
  baseUrl: string;
  branch?: BranchRef | null;
}

interface QueuedWork {
  task: (tx: Ctx, wishes: unknown) => Promise<void>;
  wishes: unknown;
  merge?: (queued: unknown, more: unknown) => void;
}

type BeforeCommitQueue = Map<string, QueuedWork>;

class RequestCtx implements Ctx {
  readonly host: HostServices;
  readonly user: AuthUser | null;
  readonly requestId: string;
  readonly baseUrl: string;
  readonly branch: BranchRef | null;
  constructor(
    init: CtxInit,
    readonly db: Queryable,
    readonly inTransaction: boolean,
    private readonly tasks: Array<() => Promise<void> | void>,
    readonly pending: BeforeCommitQueue = new Map(),
  ) {
    this.host = init.host;
    this.user = init.user;
    this.requestId = init.requestId;
    this.baseUrl = init.baseUrl;
    this.branch = init.branch ?? null;
  }
  afterCommit(task: () => Promise<void> | void): void {
    this.tasks.push(task);
  }
  async beforeCommit<W = undefined>(
    key: string,
    task: (tx: Ctx, wishes: W) => Promise<void>,
    wishes?: W,
    merge?: (queued: W, more: W) => void,
  ): Promise<void> {
    if (!this.inTransaction) {
      await task(this, wishes as W);
      return;
    }
    const queued = this.pending.get(key);
    if (!queued) {
      this.pending.set(key, { task: task as QueuedWork['task'], wishes, merge: merge as QueuedWork['merge'] });
      return;
    }
    queued.merge?.(queued.wishes, wishes);
  }
  async flushBeforeCommit(): Promise<void> {
    await runPending(this);
  }
}

/** Runs collapsed before-commit work until none is left (a task may queue more). */
async function runPending(tx: RequestCtx): Promise<void> {
  for (let round = 0; tx.pending.size > 0; round++) {
    if (round > 20) throw new Error('before-commit work keeps queueing more work');
    const batch = [...tx.pending.values()];
    tx.pending.clear();
    for (const { task, wishes } of batch) await task(tx, wishes);
  }
}

export function createCtx(init: CtxInit): Ctx {
  return new RequestCtx(init, init.host.db, false, []);
}

/** The same context with another caller or branch (for system work on behalf of someone). */
export function deriveCtx(ctx: Ctx, changes: Partial<Pick<CtxInit, 'user' | 'branch' | 'requestId'>>): Ctx {
  const init: CtxInit = {
    host: ctx.host,
    user: changes.user !== undefined ? changes.user : ctx.user,
    requestId: changes.requestId ?? ctx.requestId,
    baseUrl: ctx.baseUrl,
    branch: changes.branch !== undefined ? changes.branch : ctx.branch,
  };
  const tasks: Array<() => Promise<void> | void> = [];
  const pending = ctx instanceof RequestCtx ? ctx.pending : new Map();
  const derived = new RequestCtx(init, ctx.db, ctx.inTransaction, tasks, pending);
  derived.afterCommit = (task) => ctx.afterCommit(task);
  return derived;
}

/**
 * Runs `work` in one transaction; tasks queued with `afterCommit` run after it commits,
 * in order, each failure logged and not rethrown. Inside a transaction already, it simply
 * runs `work` in it. A transaction that wrote anything moves the data version before it
 * commits (`db/data-version.ts`): that is what tells every cache, in this process or another,
 * that its answers may be stale. With `unchecked`, the answers served before it without reading
 * the versions (`UncheckedReads`) are confirmed inside it, before it commits (or when its work
 * failed, before the failure is told): when one is stale it rolls back with `UncheckedReadsStale`.
 * Answers the transaction computed for readers (`ReadMemo.keepAtCommit`) are handed to the read
 * memo once it has committed, with the versions it committed (read through it after that bump;
 * on SQLite only). Where the host has turns to write (PostgreSQL), the transaction begins in its
 * turn, which ends when its work is done (`write-turns.ts`).
 */
export async function inTransaction<T>(
  ctx: Ctx,
  work: (tx: Ctx) => Promise<T>,
  unchecked?: UncheckedReads,
): Promise<T> {
  if (ctx.inTransaction) return work(ctx);
  // The turn ends when the work is done (the COMMIT is what is left), or when it failed.
  const endTurn = ctx.host.writeTurns ? await ctx.host.writeTurns.take() : undefined;
  try {
    return await transactionOf(ctx, work, unchecked, endTurn);
  } finally {
    endTurn?.();
  }
}

async function transactionOf<T>(
  ctx: Ctx,
  work: (tx: Ctx) => Promise<T>,
  unchecked: UncheckedReads | undefined,
  endTurn: (() => void) | undefined,
): Promise<T> {
  let tasks: Array<() => Promise<void> | void> = [];
  // What the transaction asked the read memo to keep for readers, and the versions it commits.
  let keeping: { trx: Queryable; versions: DataVersions } | undefined;
  const attempt = () =>
    ctx.host.db.transaction().execute(async (trx) => {
      tasks = [];
      keeping = undefined;
      const init: CtxInit = {
        host: ctx.host,
        user: ctx.user,
        requestId: ctx.requestId,
        baseUrl: ctx.baseUrl,
        branch: ctx.branch,
      };
      const counted = countingWrites(trx);
      const tx = new RequestCtx(init, counted, true, tasks);
      let value: T;
      try {
        value = await work(tx);
        await runPending(tx);
      } catch (err) {
        endTurn?.();
        // Decided on an identity that may be stale: the request runs again, checked.
        if (unchecked && !(await ctx.host.readMemo.confirm(tx, unchecked).catch(() => false)))
          throw new UncheckedReadsStale();
        throw err;
      }
      // What was served before the transaction unchecked stands under the write lock, or nothing is written.
      if (unchecked && !(await ctx.host.readMemo.confirm(tx, unchecked))) throw new UncheckedReadsStale();
      // Last, so that the one row is held for the shortest time (several instances write it).
      if (writesThrough(counted) > 0) {
        await bumpDataVersion(counted, writtenTables(counted));
        if (ctx.host.readMemo.keepsAtCommit(counted)) {
          const versions = await versionsBeingCommitted(ctx.host.db, counted);
          if (versions) keeping = { trx: counted, versions };
        }
      }
      endTurn?.();
      return value;
    });
  // A prepared statement that another instance's schema change made stale ended the
  // transaction (PostgreSQL; nothing was written): once more, on statements prepared afresh.
  const result = await retryingStalePlan(attempt);
  if (keeping) ctx.host.readMemo.keepCommitted(keeping.trx, keeping.versions);
  for (const task of tasks) {
    try {
      await task();
    } catch (err) {
      ctx.host.log.error(`after-commit task failed: ${(err as Error).stack ?? String(err)}`);
    }
  }
  return result;
}
