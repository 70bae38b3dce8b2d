import type { HostDb, Queryable } from '../db/database';
import { bumpDataVersion, countingWrites, writesThrough, writtenTables } from '../db/data-version';
import type { EventBus } from '../events/bus';
import type { BranchStateKeepers } from '../objects/branch-state-keepers';
import type { ObjectTypeRegistry } from '../objects/object-types';
import type { PermissionService } from '../users/object-permissions';
import type { BranchHooks, MergeValidators } from './hooks';
import type { AuthUser, BranchRef } from './identity';
import type { ReadMemo } from '../cache/read-memo';
import type { CoreServices, Scope } from './scope';
import type { SearchRegistry } from './search';
import type { RelatedVisibility } from '../objects/related-visibility';
import type { CredentialThrottle } from './throttle';
import type { UnawaitedWork } from './unawaited';

export type { AuthUser, BranchRef } from './identity';

/**
 * Consulted before every direct write of a source-of-truth object on main (no branch).
 * Returns null to allow, or the reason the write is refused (answered as 400 with `detail`).
 */
export type MainWriteGuard = (ctx: Ctx, objectType: string) => Promise<string | null>;
/** Says why a user may not be deleted (records that name them must stay), or null. */
export type UserDeletionGuard = (ctx: Ctx, userId: number) => Promise<string | null>;

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
  /** Guards of deleting a user (a plugin's records of what the user did). */
  readonly userDeletionGuards: UserDeletionGuard[];
  readonly search: SearchRegistry<Ctx>;
  /** What the changelog and notifications show of plugins' object types (`objects/related-visibility.ts`). */
  readonly relatedVisibility: RelatedVisibility<Ctx>;
  /** Loaded plugins and their versions, for `/api/status/`. */
  readonly plugins: Map<string, string>;
  readonly background: BackgroundTask[];
  /** Work set off and not awaited (by background tasks, or woken by a commit): a stop drains it. */
  readonly unawaited: UnawaitedWork;
  /** Failed credentials per client address and username (token authentication, token provisioning). */
  readonly credentialThrottle: CredentialThrottle;
  /** Reads reused while the data they come from cannot have changed (the one cache mechanism). */
  readonly readMemo: ReadMemo;
  /** Per-branch state kept current by every write of a branch's changes (`objects/branch-state.ts`). */
  readonly branchState: BranchStateKeepers<Ctx>;
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
 * that its answers may be stale. Answers it computed for readers (`ReadMemo.keepAtCommit`) are
 * handed to the read memo once it has committed.
 */
export async function inTransaction<T>(ctx: Ctx, work: (tx: Ctx) => Promise<T>): Promise<T> {
  if (ctx.inTransaction) return work(ctx);
  const tasks: Array<() => Promise<void> | void> = [];
  let written: { trx: object; tables: string[] | null } | undefined;
  const result = await ctx.host.db.transaction().execute(async (trx) => {
    const init: CtxInit = {
      host: ctx.host,
      user: ctx.user,
      requestId: ctx.requestId,
      baseUrl: ctx.baseUrl,
      branch: ctx.branch,
    };
    const counted = countingWrites(trx);
    const tx = new RequestCtx(init, counted, true, tasks);
    const value = await work(tx);
    await runPending(tx);
    // Last, so that the rows are held for the shortest time (several instances write them).
    if (writesThrough(counted) > 0) {
      const tables = writtenTables(counted);
      await bumpDataVersion(counted, tables);
      written = { trx: counted, tables };
    }
    return value;
  });
  // What the transaction computed for the readers (`ReadMemo.keepAtCommit`) is theirs now.
  if (written) await ctx.host.readMemo.keepCommitted(written.trx, written.tables);
  for (const task of tasks) {
    try {
      await task();
    } catch (err) {
      ctx.host.log.error(`after-commit task failed: ${(err as Error).stack ?? String(err)}`);
    }
  }
  return result;
}
