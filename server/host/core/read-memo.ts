import type { Queryable } from '../db/database';
import { auditedCompute } from '../db/read-audit';
import {
  readDataVersions,
  readDataVersionsIn,
  tablesStamp,
  versionsKnownNow,
  writesThrough,
  type DataVersions,
} from '../db/data-version';

/** What a cached read needs to know of where it runs: the handle, and whether it is a transaction. */
export interface MemoScope {
  readonly db: Queryable;
  readonly inTransaction: boolean;
  /**
   * Outside a transaction: a kept answer naming its tables is served without reading the
   * versions first, and noted here; the write transaction that follows confirms it
   * (`ReadMemo.confirm`). See `UncheckedReads`.
   */
  readonly unchecked?: UncheckedReads;
}

/**
 * Answers served before a write transaction without reading the versions first: the caller's
 * identity and permission rows, on PostgreSQL, where that read is a round trip to the database
 * for every write (on SQLite it is a read of the reader connection, without leaving the process).
 * The transaction confirms them with the versions it reads under the write lock, with its first
 * statement (`ReadMemo.confirm`): when a table one of them was computed from has moved since,
 * it rolls back (`UncheckedReadsStale`) and the request runs again from the start, reading
 * everything afresh. Such an answer is checked later than a read before the request would
 * have been (under the lock, after every commit made before it), so nothing is served that
 * the read would have refused. A refusal is never drawn from it: the reader asks again, checked.
 */
export class UncheckedReads {
  private readonly bases: Array<{ reads: readonly string[]; stamp: string }> = [];

  /** How many answers were served unchecked. */
  get size(): number {
    return this.bases.length;
  }

  note(reads: readonly string[], stamp: string): void {
    if (!this.bases.some((b) => b.reads === reads && b.stamp === stamp)) this.bases.push({ reads, stamp });
  }

  /** Whether every answer served stands in `versions`. */
  holdIn(versions: DataVersions): boolean {
    return this.bases.every((b) => tablesStamp(versions, b.reads) === b.stamp);
  }
}

/** A write transaction found an answer served before it unchecked stale: it rolled back, and the request runs again. */
export class UncheckedReadsStale extends Error {
  constructor() {
    super('an answer served before the transaction was stale');
  }
}

/** The default bound of a memo's number of answers: beyond it, the least recently used go first. */
export const READ_MEMO_ENTRIES = 2000;

/**
 * At most this many answers of one write transaction are kept for the readers at its commit
 * (`keepAtCommit`): a write that refreshes many requests (a policy's) hands over those of the
 * first ones, and leaves the memo's other answers in place.
 */
export const AT_COMMIT_ENTRIES = 64;

/** The default bound of the memory a memo's answers hold (estimated), in bytes. */
export const READ_MEMO_BYTES = 16 * 1024 * 1024;

export interface ReadMemoLimits {
  /** At most this many answers are kept (default `READ_MEMO_ENTRIES`). */
  readonly maxEntries?: number;
  /** The answers kept hold at most about this many bytes (default `READ_MEMO_BYTES`); 0 keeps none. */
  readonly maxBytes?: number;
}

/** What an answer kept outside transactions was computed from. */
interface Basis {
  /** The tables it names (undefined: it depends on everything). */
  readonly reads: readonly string[] | undefined;
  /** The versions it was computed at (`stampOf`). */
  readonly stamp: string;
  /** This process's writes (of `reads`, or of everything) through the service's handle then. */
  readonly local: number;
}

/** An answer kept outside transactions: `bytes` is its estimated size, 0 until it has resolved. */
interface Kept extends Basis {
  readonly value: Promise<unknown>;
  bytes: number;
  /** The versions its stamp was last found to stand in (compared again only when they are others). */
  at: DataVersions;
}

function stampOf(versions: DataVersions, reads: readonly string[] | undefined): string {
  return reads ? tablesStamp(versions, reads) : `all:${versions.global}`;
}

function sameTables(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  return a.every((t, i) => t === b[i]);
}

export interface MemoOptions {
  /**
   * Inside a transaction, the answer is kept for the transaction only, dropped at each write
   * of what it reads, and never looked up among (nor added to) the committed answers: its first read needs
   * no read of the versions before it. For a row every write transaction of a busy workload
   * changes (a check's result), where a committed answer would hardly ever still be good: on
   * PostgreSQL the read then goes in the round trip that begins the transaction.
   */
  readonly transactionOnly?: boolean;
}

/**
 * The service's one cache of answers computed from the database, and its one invalidation
 * rule: an answer is served only while the data it was computed from cannot have changed.
 *
 * - Outside a transaction, every read compares the data version (`db/data-version.ts`: moved
 *   by every committed write transaction, ours or another process's, plus the writes this
 *   process made outside transactions). An answer that names the tables it reads (`reads`) is
 *   served while none of those tables' versions moved; any other answer is dropped at any commit.
 * - Inside a transaction, answers are kept for that transaction only, and dropped at each
 *   write it makes (the transaction's handle counts them), or, when the answer names the
 *   tables it reads, at each write of one of those. An answer that names its tables is also
 *   shared with reads outside the transaction while the transaction has not written them (it is
 *   the committed state: write transactions run one at a time), so one write reuses what the
 *   last one read of the tables it did not write; an answer naming none is shared while the
 *   transaction has written nothing (a write reuses what the read before it computed).
 *
 * So no write needs to say what it invalidates. Outside transactions, what is kept is bounded
 * by its size as well as by its number of answers: each answer's size is estimated when it
 * resolves (`estimateBytes`), and the least recently used answers go first until the total is
 * within the budget. An answer larger than the whole budget is never kept; reads that asked
 * for it while it was being computed still share it. Nothing that depends on the time may be
 * memoized here.
 */
export class ReadMemo {
  private committed = -1;
  private local = -1;
  private readonly entries = new Map<string, Kept>();
  private readonly byTransaction = new WeakMap<object, Map<string, { stamp: number; value: Promise<unknown> }>>();
  private readonly transactionVersions = new WeakMap<object, Promise<DataVersions>>();
  /** Per write transaction: the answers it computed for readers, kept once it commits (`keepAtCommit`). */
  private readonly atCommit = new WeakMap<
    object,
    Map<string, { value: unknown; reads: readonly string[]; stamp: number }>
  >();
  private keptBytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;

  /** `root`: the service's handle (without it, answers read inside transactions are never shared). */
  constructor(
    limits: ReadMemoLimits = {},
    private readonly root?: Queryable,
  ) {
    this.maxEntries = limits.maxEntries ?? READ_MEMO_ENTRIES;
    this.maxBytes = limits.maxBytes ?? READ_MEMO_BYTES;
  }

  /**
   * The answer for `key`, computed by `compute` unless kept. `reads` names the tables the answer
   * is computed from: a write of another table keeps it, inside a transaction or committed.
   * Without `reads`, any write drops it.
   */
  get<T>(
    scope: MemoScope,
    key: string,
    compute: () => Promise<T>,
    reads?: readonly string[],
    options?: MemoOptions,
  ): Promise<T> {
    try {
      compute = auditedCompute(key, reads, compute);
    } catch (error) {
      return Promise.reject(error);
    }
    if (scope.inTransaction) return this.inTransaction(scope, key, compute, reads, options?.transactionOnly === true);
    if (!scope.unchecked) {
      // The versions of this request already read, nothing written since: a kept answer is served
      // at once (no wait for the versions, no promise of its own, no stamp made while they stand).
      const versions = versionsKnownNow(scope.db);
      if (versions !== undefined && versions.global === this.committed && writesThrough(scope.db) === this.local) {
        const kept = this.served(key, reads, writesThrough(scope.db, reads), versions);
        if (kept) return kept as Promise<T>;
      }
    }
    return this.checked(scope, key, compute, reads);
  }

  /** `get` outside a transaction, the versions read first. */
  private async checked<T>(
    scope: MemoScope,
    key: string,
    compute: () => Promise<T>,
    reads: readonly string[] | undefined,
  ): Promise<T> {
    if (scope.unchecked && reads) {
      // Kept, and this process has not written its tables since: the transaction confirms the rest.
      const kept = this.entries.get(key);
      if (kept && sameTables(kept.reads, reads) && kept.local === writesThrough(scope.db, reads)) {
        scope.unchecked.note(kept.reads!, kept.stamp);
        this.entries.delete(key);
        this.entries.set(key, kept);
        return kept.value as Promise<T>;
      }
    }
    const local = writesThrough(scope.db);
    const versions = await readDataVersions(scope.db);
    const localReads = writesThrough(scope.db, reads);
    if (versions.global < this.committed || (versions.global === this.committed && local < this.local)) {
      // A read that started before a newer one saw a later version (on PostgreSQL, under a
      // stream of commits, most reads): a kept answer whose tables stood the same in the
      // versions this read saw is its answer too; otherwise answer, keep nothing.
      return (this.served(key, reads, localReads, versions) as Promise<T> | undefined) ?? compute();
    }
    this.moveTo(versions, scope.db);
    const kept = this.served(key, reads, localReads, versions);
    if (kept) return kept as Promise<T>;
    const value = compute();
    this.remember(key, value, { reads, stamp: stampOf(versions, reads), local: localReads }, versions);
    return value;
  }

  /**
   * Inside a transaction, after a write: `value` is the answer for `key` now (the writer knows
   * it), kept for the transaction as if just computed. Outside one it does nothing.
   */
  written<T>(scope: MemoScope, key: string, value: T, reads?: readonly string[]): void {
    if (!scope.inTransaction) return;
    let entries = this.byTransaction.get(scope.db);
    if (!entries) {
      entries = new Map();
      this.byTransaction.set(scope.db, entries);
    }
    entries.set(key, { stamp: writesThrough(scope.db, reads), value: Promise.resolve(value) });
    if (entries.size > this.maxEntries) entries.delete(entries.keys().next().value!);
  }

  /**
   * Inside a write transaction: `value` is the answer a reader outside it will compute for `key`
   * once it commits, as the transaction leaves the tables `reads` (the writer has just computed
   * it). It becomes a committed answer when the transaction commits (`keepCommitted`), unless the
   * transaction writes one of `reads` after this call; so the first read after the write does
   * not compute it again (the first `AT_COMMIT_ENTRIES` keys of a transaction). Outside a
   * transaction, or without the service's handle, it does nothing.
   */
  keepAtCommit(scope: MemoScope, key: string, value: unknown, reads: readonly string[]): void {
    if (!scope.inTransaction || !this.root) return;
    let kept = this.atCommit.get(scope.db);
    if (!kept) {
      kept = new Map();
      this.atCommit.set(scope.db, kept);
    }
    if (kept.size >= AT_COMMIT_ENTRIES && !kept.has(key)) return;
    kept.set(key, { value, reads, stamp: writesThrough(scope.db, reads) });
  }

  /** Whether the transaction `trx` has answers to keep once it commits (it then reads the versions it commits). */
  keepsAtCommit(trx: object): boolean {
    return this.atCommit.has(trx);
  }

  /**
   * The transaction `trx` has committed, at `versions` (read through it after its last write):
   * the answers it asked to keep and has not written the tables of since are kept as computed at
   * those versions. Dropped if this memo has already seen a later commit (of another process).
   */
  keepCommitted(trx: object, versions: DataVersions): void {
    const kept = this.atCommit.get(trx);
    if (!kept || !this.root) return;
    this.atCommit.delete(trx);
    if (versions.global < this.committed) return;
    const root = this.root;
    this.moveTo(versions, root);
    for (const [key, { value, reads, stamp }] of kept) {
      if (writesThrough(trx as Queryable, reads) !== stamp) continue;
      this.remember(
        key,
        Promise.resolve(value),
        { reads, stamp: stampOf(versions, reads), local: writesThrough(root, reads) },
        versions,
      );
    }
  }

  /** Drops every answer kept outside transactions (tests compare a kept answer with one computed afresh). */
  clear(): void {
    this.entries.clear();
    this.keptBytes = 0;
  }

  /** How many answers are kept outside transactions (for tests of the bound). */
  get size(): number {
    return this.entries.size;
  }

  /** The estimated bytes of the answers kept outside transactions (for tests of the bound). */
  get bytes(): number {
    return this.keptBytes;
  }

  /**
   * The answer kept for `key` if it was computed from `reads` as they stand in `versions`, with
   * `local` writes of them by this process (most recently used from now).
   */
  private served(
    key: string,
    reads: readonly string[] | undefined,
    local: number,
    versions: DataVersions,
  ): Promise<unknown> | undefined {
    const kept = this.entries.get(key);
    if (!kept || kept.local !== local || !sameTables(kept.reads, reads)) return undefined;
    if (kept.at !== versions) {
      if (kept.stamp !== stampOf(versions, reads)) return undefined;
      kept.at = versions;
    }
    this.entries.delete(key);
    this.entries.set(key, kept);
    return kept.value;
  }

  private async inTransaction<T>(
    scope: MemoScope,
    key: string,
    compute: () => Promise<T>,
    reads: readonly string[] | undefined,
    transactionOnly: boolean,
  ): Promise<T> {
    const stamp = writesThrough(scope.db, reads);
    let entries = this.byTransaction.get(scope.db);
    if (!entries) {
      entries = new Map();
      this.byTransaction.set(scope.db, entries);
    }
    const kept = entries.get(key);
    if (kept && kept.stamp === stamp) return kept.value as Promise<T>;
    let value: Promise<T> | undefined;
    // Tables this transaction has not written read as committed: share the answer both ways (an
    // answer naming no tables, while the transaction has written nothing at all).
    if (this.root && stamp === 0 && !transactionOnly) value = (await this.shared(scope, key, compute, reads))?.value;
    value ??= compute();
    const entry = { stamp, value };
    entries.set(key, entry);
    if (entries.size > this.maxEntries) entries.delete(entries.keys().next().value!);
    value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return value;
  }

  /**
   * Inside a write transaction (`scope`): whether the answers served unchecked before it
   * (`UncheckedReads`) stand in the versions it read under the write lock. On PostgreSQL those
   * came with its first statement: no round trip of its own once the transaction has sent one.
   */
  async confirm(scope: MemoScope, unchecked: UncheckedReads): Promise<boolean> {
    if (unchecked.size === 0) return true;
    if (!this.root) return false;
    return unchecked.holdIn(await this.versionsIn(scope));
  }

  /** The versions a transaction (`scope`) read first: read once per transaction. */
  private versionsIn(scope: MemoScope): Promise<DataVersions> {
    let pending = this.transactionVersions.get(scope.db);
    if (!pending) {
      pending = readDataVersionsIn(this.root!, scope.db);
      this.transactionVersions.set(scope.db, pending);
    }
    return pending;
  }

  /** Inside a transaction that has not written `reads` (nothing, without them): the committed answer, kept or computed and kept. */
  private async shared<T>(
    scope: MemoScope,
    key: string,
    compute: () => Promise<T>,
    reads: readonly string[] | undefined,
  ): Promise<{ value: Promise<T> } | undefined> {
    const root = this.root!;
    const versions = await this.versionsIn(scope);
    if (versions.global < this.committed) return undefined;
    this.moveTo(versions, root);
    const basis: Basis = { reads, stamp: stampOf(versions, reads), local: writesThrough(root, reads) };
    const kept = this.served(key, reads, basis.local, versions);
    if (kept) return { value: kept as Promise<T> };
    const value = compute();
    // Kept once computed, and only if the transaction has still not written what it read.
    value.then(
      () => {
        if (
          writesThrough(scope.db, reads) === 0 &&
          writesThrough(root, reads) === basis.local &&
          !this.entries.has(key)
        )
          this.remember(key, value, basis, versions);
      },
      () => undefined,
    );
    return { value };
  }

  /** Seen a newer version (or a local write): drops every answer it makes stale. */
  private moveTo(versions: DataVersions, db: Queryable): void {
    const local = writesThrough(db);
    if (versions.global === this.committed && local === this.local) return;
    // Answers naming the same tables (most name one of a few shared lists) share one basis.
    const bases = new Map<readonly string[] | undefined, { stamp: string; local: number }>();
    for (const [key, kept] of this.entries) {
      let basis = bases.get(kept.reads);
      if (!basis) {
        basis = { stamp: stampOf(versions, kept.reads), local: writesThrough(db, kept.reads) };
        bases.set(kept.reads, basis);
      }
      if (kept.stamp !== basis.stamp || kept.local !== basis.local) {
        this.entries.delete(key);
        this.keptBytes -= kept.bytes;
      } else kept.at = versions;
    }
    this.committed = versions.global;
    this.local = local;
  }

  private remember(key: string, value: Promise<unknown>, basis: Basis, at: DataVersions): void {
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.keptBytes -= previous.bytes;
    }
    const entry: Kept = { reads: basis.reads, stamp: basis.stamp, local: basis.local, value, bytes: 0, at };
    this.entries.set(key, entry);
    this.evict();
    value.then(
      (answer) => {
        if (this.entries.get(key) !== entry) return; // dropped meanwhile (a write, or evicted)
        const bytes = ENTRY_BYTES + 2 * key.length + estimateBytes(answer, this.maxBytes);
        if (bytes > this.maxBytes) {
          this.entries.delete(key);
          return;
        }
        entry.bytes = bytes;
        this.keptBytes += bytes;
        this.evict();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
  }

  /** Drops the least recently used answers until both bounds hold. */
  private evict(): void {
    for (const [key, kept] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.keptBytes <= this.maxBytes) return;
      this.entries.delete(key);
      this.keptBytes -= kept.bytes;
    }
  }
}

/** What keeping one answer costs besides the answer: its entry, its key, the map's slot. */
const ENTRY_BYTES = 160;

/** Arrays longer than this are estimated from this many of their items, evenly spaced. */
const SAMPLED_ITEMS = 256;

/**
 * An estimate of the memory `value` holds (V8 on a 64-bit machine: object headers, 8 bytes a
 * slot, strings by their length), counting what several parts share once. The items of a long
 * array are estimated from an even sample of them, and the walk stops once the estimate exceeds
 * `limit` (it then returns more than `limit`): measuring a branch's 10,000 changes costs about
 * what measuring 256 of them does. Functions and private state are not walked.
 */
export function estimateBytes(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  const seen = new Set<object>();
  // Each value to measure, and beside it the number of values it stands for (items of a sampled
  // array): two stacks kept in step, so that measuring allocates no pair per value.
  const pending: unknown[] = [value];
  const weights: number[] = [1];
  const push = (item: unknown, weight: number): void => {
    pending.push(item);
    weights.push(weight);
  };
  let total = 0;
  while (pending.length > 0 && total <= limit) {
    const v = pending.pop();
    const weight = weights.pop()!;
    switch (typeof v) {
      case 'string':
        total += weight * (24 + v.length);
        continue;
      case 'number':
      case 'bigint':
        total += weight * 16;
        continue;
      case 'function':
        total += weight * 64;
        continue;
      case 'object':
        break;
      default:
        continue; // booleans, undefined, symbols: immediates or shared
    }
    if (v === null || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      total += weight * (32 + 8 * v.length);
      if (v.length <= SAMPLED_ITEMS) {
        for (const item of v) push(item, weight);
      } else {
        const step = v.length / SAMPLED_ITEMS;
        for (let i = 0; i < SAMPLED_ITEMS; i++) push(v[Math.floor(i * step)], weight * step);
      }
    } else if (v instanceof Map) {
      total += weight * (64 + 40 * v.size);
      for (const [k, item] of v) {
        push(k, weight);
        push(item, weight);
      }
    } else if (v instanceof Set) {
      total += weight * (64 + 24 * v.size);
      for (const item of v) push(item, weight);
    } else if (ArrayBuffer.isView(v)) {
      total += weight * (96 + v.byteLength);
    } else if (v instanceof ArrayBuffer) {
      total += weight * (64 + v.byteLength);
    } else if (v instanceof Date || v instanceof RegExp || v instanceof Promise) {
      total += weight * 48;
    } else {
      let slots = 0;
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        slots++;
        push((v as Record<string, unknown>)[k], weight);
      }
      total += weight * (32 + 8 * slots);
    }
  }
  return total;
}
