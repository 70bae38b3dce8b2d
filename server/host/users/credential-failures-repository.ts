import type { Queryable } from '../db/database';

/**
 * Failed password attempts in the database, so that every instance of the service counts them
 * together (`core/throttle.ts` decides from them). Rows older than the window are deleted as new
 * ones are written; the table never holds more than the last window's failures.
 */

/** The failure times (ms, ascending) of each key since `since`. */
export async function recentCredentialFailures(
  db: Queryable,
  keys: readonly string[],
  since: number,
): Promise<Map<string, number[]>> {
  const found = new Map<string, number[]>(keys.map((k) => [k, []]));
  if (keys.length === 0) return found;
  const rows = await db
    .selectFrom('credential_failures')
    .select(['key', 'at'])
    .where('key', 'in', [...keys])
    .where('at', '>', since)
    .orderBy('at')
    .execute();
  for (const row of rows) found.get(row.key)?.push(Number(row.at));
  return found;
}

/** Records one failure under each key at `at`, and forgets failures from before `expired`. */
export async function recordCredentialFailure(
  db: Queryable,
  keys: readonly string[],
  at: number,
  expired: number,
): Promise<void> {
  await db.deleteFrom('credential_failures').where('at', '<=', expired).execute();
  if (keys.length)
    await db
      .insertInto('credential_failures')
      .values(keys.map((key) => ({ key, at })))
      .execute();
}
