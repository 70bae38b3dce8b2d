import type { Queryable } from '../db/database';
import { readDataVersions, readDataVersionsIn, tablesStamp, writesThrough, type DataVersions } from '../db/data-version';

/** What a cached read needs to know of where it runs: the handle, and whether it is a transaction. */
export interface MemoScope {
  readonly db: Queryable;
  readonly inTransaction: boolean;
}

/** The default bound of a memo: entries beyond it push out the least recently used. */
export const READ_MEMO_ENTRIES = 2000;

/** An answer kept outside transactions, with what it was computed from. */
interface Kept {
  value: Promise<unknown>;
  /** The tables it names (undefined: it depends on everything). */
  reads: readonly string[] | undefined;
  /** The versions it was computed at (`stampOf`). */
  stamp: string;
  /** This process's writes (of `reads`, or of everything) through the service's handle then. */
  local: number;
}

function stampOf(versions: DataVersions, reads: readonly string[] | undefined): string {
  return reads ? tablesStamp(versions, reads) : `all:${versions.global}`;
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
 *   last one read of the tables it did not write.
 *
 * So no write needs to say what it invalidates. Entries are bounded (least recently used go
 * first). Nothing that depends on the time may be memoized here.
 */
export class ReadMemo {
  private committed = -1;
  private local = -1;
  private readonly entries = new Map<string, Kept>();
  private readonly byTransaction = new WeakMap<object, Map<string, { stamp: number; value: Promise<unknown> }>>();
  private readonly transactionVersions = new WeakMap<object, Promise<DataVersions>>();

  /** `root`: the service's handle (without it, answers read inside transactions are never shared). */
  constructor(
    private readonly maxEntries = READ_MEMO_ENTRIES,
    private readonly root?: Queryable,
  ) {}

  /**
   * The answer for `key`, computed by `compute` unless kept. `reads` names the tables the answer
   * is computed from: a write of another table keeps it, inside a transaction or committed.
   * Without `reads`, any write drops it.
   */
  async get<T>(scope: MemoScope, key: string, compute: () => Promise<T>, reads?: readonly string[]): Promise<T> {
    if (scope.inTransaction) return this.inTransaction(scope, key, compute, reads);
    const local = writesThrough(scope.db);
    const versions = await readDataVersions(scope.db);
    if (versions.global < this.committed || (versions.global === this.committed && local < this.local)) {
      // A read that started before a newer one saw a later version: answer, keep nothing.
      return compute();
    }
    this.moveTo(versions, scope.db);
    const stamp = stampOf(versions, reads);
    const localNow = writesThrough(scope.db, reads);
    const kept = this.entries.get(key);
    if (kept && kept.stamp === stamp && kept.local === localNow && sameTables(kept.reads, reads)) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, kept);
      return kept.value as Promise<T>;
    }
    const value = compute();
    this.keep(key, { value, reads, stamp, local: localNow });
    return value;
  }

  /** How many answers are kept outside transactions (for tests of the bound). */
  get size(): number {
    return this.entries.size;
  }

  private async inTransaction<T>(scope: MemoScope, key: string, compute: () => Promise<T>, reads: readonly string[] | undefined): Promise<T> {
    const stamp = writesThrough(scope.db, reads);
    let entries = this.byTransaction.get(scope.db);
    if (!entries) {
      entries = new Map();
      this.byTransaction.set(scope.db, entries);
    }
    const kept = entries.get(key);
    if (kept && kept.stamp === stamp) return kept.value as Promise<T>;
    let value: Promise<T> | undefined;
    // Tables this transaction has not written read as committed: share the answer both ways.
    if (reads && this.root && stamp === 0) value = (await this.shared(scope, key, compute, reads))?.value;
    value ??= compute();
    const entry = { stamp, value };
    entries.set(key, entry);
    if (entries.size > this.maxEntries) entries.delete(entries.keys().next().value!);
    value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return value;
  }

  /** Inside a transaction that has not written `reads`: the committed answer, kept or computed and kept. */
  private async shared<T>(scope: MemoScope, key: string, compute: () => Promise<T>, reads: readonly string[]): Promise<{ value: Promise<T> } | undefined> {
    const root = this.root!;
    let pending = this.transactionVersions.get(scope.db);
    if (!pending) {
      pending = readDataVersionsIn(root, scope.db);
      this.transactionVersions.set(scope.db, pending);
    }
    const versions = await pending;
    if (versions.global < this.committed) return undefined;
    this.moveTo(versions, root);
    const stamp = tablesStamp(versions, reads);
    const local = writesThrough(root, reads);
    const kept = this.entries.get(key);
    if (kept && kept.stamp === stamp && kept.local === local && sameTables(kept.reads, reads)) return { value: kept.value as Promise<T> };
    const value = compute();
    // Kept once computed, and only if the transaction has still not written what it read.
    void value.then(
      () => {
        if (writesThrough(scope.db, reads) === 0 && writesThrough(root, reads) === local) this.keep(key, { value, reads, stamp, local });
      },
      () => undefined,
    );
    return { value };
  }

  /** Seen a newer version (or local write): drops every answer it makes stale. */
  private moveTo(versions: DataVersions, db: Queryable): void {
    const local = writesThrough(db);
    if (versions.global === this.committed && local === this.local) return;
    for (const [key, kept] of this.entries) {
      if (kept.stamp !== stampOf(versions, kept.reads) || kept.local !== writesThrough(db, kept.reads)) this.entries.delete(key);
    }
    this.committed = versions.global;
    this.local = local;
  }

  private keep(key: string, kept: Kept): void {
    this.entries.delete(key);
    this.entries.set(key, kept);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    kept.value.catch(() => {
      if (this.entries.get(key) === kept) this.entries.delete(key);
    });
  }
}

function sameTables(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  return a.every((t, i) => t === b[i]);
}
