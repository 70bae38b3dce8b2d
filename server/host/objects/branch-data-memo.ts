import type { Ctx } from '../core/context';

/**
 * Answers reused within one transaction until `forget` is called (by the code that writes what
 * they were computed from). Outside a transaction it defers to the host's `ReadMemo`.
 */
export class TransactionMemo {
  private readonly byTransaction = new WeakMap<object, Map<string, Promise<unknown>>>();

  constructor(private readonly scope: string) {}

  async get<T>(ctx: Ctx, key: string, compute: () => Promise<T>): Promise<T> {
    if (!ctx.inTransaction) return ctx.host.readMemo.get(ctx, `${this.scope}:${key}`, compute);
    let entries = this.byTransaction.get(ctx.db);
    if (!entries) {
      entries = new Map();
      this.byTransaction.set(ctx.db, entries);
    }
    let entry = entries.get(key) as Promise<T> | undefined;
    if (!entry) {
      entry = compute();
      entries.set(key, entry);
      const map = entries;
      entry.catch(() => map.delete(key));
    }
    return entry;
  }

  /** Drops what this transaction memoized (its data is being written). */
  forget(ctx: Ctx): void {
    if (ctx.inTransaction) this.byTransaction.delete(ctx.db);
  }
}

/**
 * Reads derived from branch data (a branch's changes with main's current state and their
 * conflicts, and the policies matching them), reused within a transaction and between writes.
 * Every writer of main's objects, of branch changes, of branches or of policies calls
 * `branchDataMemo.forget(ctx)`.
 */
export const branchDataMemo = new TransactionMemo('branch-data');
