import type { Queryable } from '../db/database';
import { auditedCompute } from '../db/read-audit';
import {
  readDataVersions,
  readDataVersionsIn,
  tablesStamp,
  writesThrough,
  versionsAfterCommit,
  versionsNow,
  type DataVersions,
} from '../db/data-version';

/** What a cached read needs to know of where it runs: the handle, and whether it is a transaction. */
export interface MemoScope {
  readonly db: Queryable;
  readonly inTransaction: boolean;
}

/** The default bound of a memo's number of answers: beyond it, the least recently used go first. */
export const READ_MEMO_ENTRIES = 256;

/** At most this many answers of one write transaction are kept for the readers at its commit (`keepAtCommit`). */
export const AT_COMMIT_ENTRIES = 64;

/** What an answer kept outside transactions was computed from. */
interface Basis {
  /** The tables it names (undefined: it depends on everything). */
  readonly reads: readonly string[] | undefined;
  /** The versions it was computed at (`stampOf`). */
  readonly stamp: string;
  /** This process's writes (of `reads`, or of everything) through the service's handle then. */
  readonly local: number;
}

interface Kept extends Basis {
  readonly value: Promise<unknown>;
  /** The versions its stamp was last found to stand in (a read answering the same versions is not compared again). */
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
   * of what it reads, and never looked up among (nor added to) the committed answers: its first
   * read needs no read of the versions. For a row every write transaction of a busy workload
   * changes (a check's result), where a committed answer would hardly ever still be good.
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
 *   last one read of the tables it did not write, and the first read after a write reuses what
 *   the write read of the tables it did not write; an answer naming none is shared while the
 *   transaction has written nothing.
 *
 * So no write needs to say what it invalidates. Outside transactions at most `maxEntries`
 * answers are kept, the least recently used going first. Nothing that depends on the time may
 * be memoized here.
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

  /** `root`: the service's handle (without it, answers read inside transactions are never shared). */
  constructor(
    private readonly maxEntries: number = READ_MEMO_ENTRIES,
    private readonly root?: Queryable,
  ) {}

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
    // The order that keeps an answer from being kept as newer than it is: the write count, then the versions, then the data.
    const local = writesThrough(scope.db);
    // On SQLite the versions are read at once, in the process: a kept answer is handed back as it is.
    const now = versionsNow(scope.db);
    if (now !== undefined) return this.lookup(scope, key, compute, reads, local, now);
    return readDataVersions(scope.db).then((versions) => this.lookup(scope, key, compute, reads, local, versions));
  }

  /** `get` outside a transaction, the versions read (`local`: this process's writes before they were). */
  private lookup<T>(
    scope: MemoScope,
    key: string,
    compute: () => Promise<T>,
    reads: readonly string[] | undefined,
    local: number,
    versions: DataVersions,
  ): Promise<T> {
    const localReads = writesThrough(scope.db, reads);
    if (versions.global < this.committed || (versions.global === this.committed && local < this.local)) {
      // A read that started before a newer one saw a later version: a kept answer whose tables
      // stood the same in the versions this read saw is its answer too; otherwise answer, keep nothing.
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
    const entries = this.transactionEntries(scope.db);
    entries.set(key, { stamp: writesThrough(scope.db, reads), value: Promise.resolve(value) });
    if (entries.size > this.maxEntries) entries.delete(entries.keys().next().value!);
  }

  /**
   * Inside a write transaction: `value` is the answer a reader outside it will compute for `key`
   * once it commits, as the transaction leaves the tables `reads` (the writer has just computed
   * it). It becomes a committed answer when the transaction commits (`committed`), unless the
   * transaction writes one of `reads` after this call; so the first read after the write does
   * not compute it again. Outside a transaction it does nothing.
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

  /**
   * The transaction `trx` has committed, having written `tables` (null: it could not say which).
   * The answers it asked to keep are kept as computed at the versions it committed: those it read
   * under the write lock, moved as its bump moved them, on either database without reading them
   * again. A transaction that read no versions keeps nothing; nor does one this memo has seen a
   * later commit than.
   */
  async keepCommitted(trx: object, tables: readonly string[] | null): Promise<void> {
    const kept = this.atCommit.get(trx);
    const start = this.transactionVersions.get(trx);
    if (!kept || !start || !this.root) return;
    this.atCommit.delete(trx);
    const versions = versionsAfterCommit(this.root, await start, tables);
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
  }

  /** How many answers are kept outside transactions (for tests of the bound). */
  get size(): number {
    return this.entries.size;
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
    if (!kept) return undefined;
    if (kept.local !== local || !sameTables(kept.reads, reads)) return this.drop(key, kept, versions);
    if (kept.at !== versions) {
      if (kept.stamp !== stampOf(versions, reads)) return this.drop(key, kept, versions);
      kept.at = versions;
    }
    this.entries.delete(key);
    this.entries.set(key, kept);
    return kept.value;
  }

  /** A kept answer found stale at `versions` goes, unless it may be newer than they are (a read that started earlier). */
  private drop(key: string, kept: Kept, versions: DataVersions): undefined {
    if (versions.global >= this.committed) this.entries.delete(key);
    return undefined;
  }

  private transactionEntries(trx: object): Map<string, { stamp: number; value: Promise<unknown> }> {
    let entries = this.byTransaction.get(trx);
    if (!entries) {
      entries = new Map();
      this.byTransaction.set(trx, entries);
    }
    return entries;
  }

  private async inTransaction<T>(
    scope: MemoScope,
    key: string,
    compute: () => Promise<T>,
    reads: readonly string[] | undefined,
    transactionOnly: boolean,
  ): Promise<T> {
    const stamp = writesThrough(scope.db, reads);
    const entries = this.transactionEntries(scope.db);
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

  /** Inside a transaction that has not written `reads` (nothing, without them): the committed answer, kept or computed and kept. */
  private async shared<T>(
    scope: MemoScope,
    key: string,
    compute: () => Promise<T>,
    reads: readonly string[] | undefined,
  ): Promise<{ value: Promise<T> } | undefined> {
    const root = this.root!;
    // The committed versions, read once per transaction once it holds the write lock.
    let pending = this.transactionVersions.get(scope.db);
    if (!pending) {
      pending = readDataVersionsIn(root, scope.db);
      this.transactionVersions.set(scope.db, pending);
    }
    const versions = await pending;
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

  /**
   * Seen a newer version (or a local write). Stale answers are not swept here (that would cost a
   * walk over every answer at each commit): each is compared when asked for, and the least
   * recently used go first.
   */
  private moveTo(versions: DataVersions, db: Queryable): void {
    this.committed = versions.global;
    this.local = writesThrough(db);
  }

  private remember(key: string, value: Promise<unknown>, basis: Basis, at: DataVersions): void {
    this.entries.delete(key);
    const entry: Kept = { ...basis, value, at };
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
  }
}
