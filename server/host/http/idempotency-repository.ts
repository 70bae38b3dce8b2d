import type { Queryable } from '../db/database';

/** A kept answer: what the request that first used the key looked like, and its answer. */
export interface KeptAnswer {
  fingerprint: string;
  status: number;
  body: string | null;
}

/** The answer kept for this caller's key, if it was kept after `since` (an ISO time). */
export function keptAnswer(db: Queryable, userId: number, key: string, since: string): Promise<KeptAnswer | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status', 'body'])
    .where('user_id', '=', userId)
    .where('key', '=', key)
    .where('created', '>', since)
    .executeTakeFirst();
}

/** Keeps the answer of this caller's key (replacing an older one); answers kept up to `expiredUpTo` go. */
export async function keepAnswer(
  db: Queryable,
  userId: number,
  key: string,
  answer: KeptAnswer & { created: string },
  expiredUpTo: string,
): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created', '<=', expiredUpTo).execute();
  await db
    .insertInto('idempotency_keys')
    .values({ user_id: userId, key, ...answer })
    .onConflict((oc) => oc.columns(['user_id', 'key']).doUpdateSet(answer))
    .execute();
}
