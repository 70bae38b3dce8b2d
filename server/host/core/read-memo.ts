import { sql } from 'kysely';
import type { Ctx } from './context';

/**
 * Answers computed from the database, reused while the database has not changed: no write on
 * the service's own connection (`total_changes()`) and none committed by another connection
 * (`data_version`). Only reads outside a transaction use it, so a request always sees what a
 * fresh computation would give. Nothing time-dependent may be memoized here.
 */
export class ReadMemo {
  private version = '';
  private readonly entries = new Map<string, Promise<unknown>>();

  async get<T>(ctx: Ctx, key: string, compute: () => Promise<T>): Promise<T> {
    if (ctx.inTransaction) return compute();
    const { rows } = await sql<{ t: number; v: number }>`select total_changes() as t, (select data_version from pragma_data_version) as v`.execute(ctx.db);
    const version = `${rows[0]!.t}:${rows[0]!.v}`;
    if (version !== this.version) {
      this.entries.clear();
      this.version = version;
    }
    let entry = this.entries.get(key) as Promise<T> | undefined;
    if (!entry) {
      entry = compute();
      this.entries.set(key, entry);
      entry.catch(() => this.entries.delete(key));
    }
    return entry;
  }
}

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
