import { changeMark } from '../db/portable';
import type { Scope } from './scope';

/**
 * Answers computed from the database, reused while the database has not changed: no write
 * committed by this process or another (`changeMark`). Only reads outside a transaction use it, so a request always sees what a
 * fresh computation would give. Nothing time-dependent may be memoized here.
 */
export class ReadMemo {
  private version = '';
  private readonly entries = new Map<string, Promise<unknown>>();

  async get<T>(ctx: Scope, key: string, compute: () => Promise<T>): Promise<T> {
    if (ctx.inTransaction) return compute();
    const version = await changeMark(ctx.db);
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
