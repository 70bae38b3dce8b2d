import { CompiledQuery } from 'kysely';
import { createHash } from 'node:crypto';
import { databaseKind, type HostDb } from './database';

/**
 * Claims: "this piece of work is mine while I do it", across every instance of the service
 * sharing the database. A claim is named (`'webhook-delivery'`, `'merge-job'`, a queue's name)
 * and numbered (the row it is about).
 *
 * On PostgreSQL a claim is a session advisory lock held on a connection of its own for as long
 * as the work runs: `pg_try_advisory_lock` never waits, and the lock goes with the session, so
 * an instance killed mid-work (SIGKILL, a lost machine) leaves nothing claimed behind it. On
 * SQLite (one process) it is an entry in this process's memory.
 *
 * A claim does not replace the row's own state: claim first, then read the row again and check
 * that the work is still to be done (another instance may have finished it just before), then
 * write the outcome before the claim ends. Use it for work that must not hold a transaction
 * (an HTTP delivery, a merge made of several transactions); inside one write transaction
 * nothing is needed (write transactions run one at a time).
 */
export interface Claimed<T> {
  ran: boolean;
  value?: T;
}

const local = new WeakMap<HostDb, Set<string>>();

function lockKey(name: string): number {
  // A stable 32-bit number per claim name (PostgreSQL's two-key advisory locks take int4 keys).
  return createHash('sha256').update(name).digest().readInt32BE(0);
}

/** Runs `work` if nobody (this instance or another) holds the claim `name`/`id` now; otherwise returns `{ ran: false }` at once. */
export async function withClaim<T>(db: HostDb, name: string, id: number, work: () => Promise<T>): Promise<Claimed<T>> {
  if (databaseKind(db) === 'sqlite') {
    let held = local.get(db);
    if (!held) local.set(db, (held = new Set()));
    const key = `${name}:${id}`;
    if (held.has(key)) return { ran: false };
    held.add(key);
    try {
      return { ran: true, value: await work() };
    } finally {
      held.delete(key);
    }
  }
  return db.connection().execute(async (conn) => {
    const { rows } = await conn.executeQuery<{ ok: boolean }>(
      CompiledQuery.raw('select pg_try_advisory_lock($1, $2) as ok', [lockKey(name), Math.trunc(id) | 0]),
    );
    if (!rows[0]!.ok) return { ran: false };
    try {
      return { ran: true, value: await work() };
    } finally {
      await conn.executeQuery(
        CompiledQuery.raw('select pg_advisory_unlock($1, $2)', [lockKey(name), Math.trunc(id) | 0]),
      );
    }
  });
}

/** Whether someone holds the claim `name`/`id` now (work in progress somewhere; false for work whose instance died). */
export async function isClaimed(db: HostDb, name: string, id: number): Promise<boolean> {
  const free = await withClaim(db, name, id, async () => true);
  return !free.ran;
}
