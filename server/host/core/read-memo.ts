import type { Queryable } from '../db/database';
import { readDataVersion, writesThrough } from '../db/data-version';

/** What a cached read needs to know of where it runs: the handle, and whether it is a transaction. */
export interface MemoScope {
  readonly db: Queryable;
  readonly inTransaction: boolean;
}

/** The default bound of a memo: entries beyond it push out the least recently used. */
export const READ_MEMO_ENTRIES = 2000;

/**
 * The service's one cache of answers computed from the database, and its one invalidation
 * rule: an answer is served only while the data it was computed from cannot have changed.
 *
 * - Outside a transaction, every read compares the data version (`db/data-version.ts`: moved
 *   by every committed write transaction, ours or another process's, plus the writes this
 *   process made outside transactions); when it moved, everything kept is dropped.
 * - Inside a transaction, answers are kept for that transaction only, and dropped at each
 *   write it makes (the transaction's handle counts them), or, when the answer names the
 *   tables it reads, at each write of one of those.
 *
 * So no write needs to say what it invalidates. Entries are bounded (least recently used go
 * first). Nothing that depends on the time may be memoized here.
 */
export class ReadMemo {
  private committed = -1;
  private local = -1;
  private readonly entries = new Map<string, Promise<unknown>>();
  private readonly byTransaction = new WeakMap<object, Map<string, { stamp: number; value: Promise<unknown> }>>();

  constructor(private readonly maxEntries = READ_MEMO_ENTRIES) {}

  /**
   * The answer for `key`, computed by `compute` unless kept. `reads` names the tables the answer
   * is computed from: inside a transaction, a write of another table keeps it (without `reads`,
   * any write drops it). Outside one, any committed write drops everything.
   */
  async get<T>(scope: MemoScope, key: string, compute: () => Promise<T>, reads?: readonly string[]): Promise<T> {
    if (scope.inTransaction) {
      const stamp = writesThrough(scope.db, reads);
      let entries = this.byTransaction.get(scope.db);
      if (!entries) {
        entries = new Map();
        this.byTransaction.set(scope.db, entries);
      }
      const kept = entries.get(key);
      if (kept && kept.stamp === stamp) return kept.value as Promise<T>;
      const value = compute();
      const entry = { stamp, value };
      entries.set(key, entry);
      if (entries.size > this.maxEntries) entries.delete(entries.keys().next().value!);
      value.catch(() => {
        if (entries.get(key) === entry) entries.delete(key);
      });
      return value;
    }
    const local = writesThrough(scope.db);
    const committed = await readDataVersion(scope.db);
    if (committed < this.committed || (committed === this.committed && local < this.local)) {
      // A read that started before a newer one saw a later version: answer, keep nothing.
      return compute();
    }
    if (committed !== this.committed || local !== this.local) {
      this.entries.clear();
      this.committed = committed;
      this.local = local;
    }
    return remember(this.entries, key, compute, this.maxEntries);
  }

  /** How many answers are kept outside transactions (for tests of the bound). */
  get size(): number {
    return this.entries.size;
  }
}

function remember<T>(entries: Map<string, Promise<unknown>>, key: string, compute: () => Promise<T>, max: number): Promise<T> {
  let entry = entries.get(key) as Promise<T> | undefined;
  if (entry) {
    // Most recently used last.
    entries.delete(key);
    entries.set(key, entry);
    return entry;
  }
  entry = compute();
  entries.set(key, entry);
  if (entries.size > max) entries.delete(entries.keys().next().value!);
  entry.catch(() => {
    if (entries.get(key) === entry) entries.delete(key);
  });
  return entry;
}
