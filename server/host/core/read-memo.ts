import { sql } from 'kysely';
import type { Scope } from './scope';

/**
 * Answers computed from the database, reused while the database has not changed: no write on
 * the service's own connection (`total_changes()`) and none committed by another connection
 * (`data_version`). Only reads outside a transaction use it, so a request always sees what a
 * fresh computation would give. Nothing time-dependent may be memoized here.
 */
export class ReadMemo {
  private version = '';
  private readonly entries = new Map<string, Promise<unknown>>();

  async get<T>(ctx: Scope, key: string, compute: () => Promise<T>): Promise<T> {
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
