import type { Queryable } from '../db/database';

/**
 * What bootstrapping the administrator reads and writes, on the handle of its own transaction
 * (it runs at start, before any request context exists).
 */

/** The id of the user named `admin`, if there is one. */
export async function adminUserId(db: Queryable): Promise<number | undefined> {
  return (await db.selectFrom('users').select('id').where('username', '=', 'admin').executeTakeFirst())?.id;
}

/** Makes a user an active superuser. */
export async function makeActiveSuperuser(db: Queryable, id: number, now: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ is_superuser: 1, is_active: 1, last_updated: now })
    .where('id', '=', id)
    .execute();
}

/** Creates the active superuser `admin` (no password); answers its id. */
export async function insertAdminUser(db: Queryable, now: string): Promise<number> {
  const row = await db
    .insertInto('users')
    .values({
      username: 'admin',
      password_hash: null,
      first_name: '',
      last_name: '',
      email: '',
      is_superuser: 1,
      is_active: 1,
      created: now,
      last_updated: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The id of the token with this key hash, if there is one. */
export async function tokenIdByHash(db: Queryable, keyHash: string): Promise<number | undefined> {
  return (await db.selectFrom('tokens').select(['id', 'user_id']).where('key_hash', '=', keyHash).executeTakeFirst())
    ?.id;
}

/** Gives an existing token to a user: write-enabled, never expiring. */
export async function reassignToken(db: Queryable, id: number, userId: number, now: string): Promise<void> {
  await db
    .updateTable('tokens')
    .set({ user_id: userId, write_enabled: 1, expires: null, last_updated: now })
    .where('id', '=', id)
    .execute();
}

/** Stores the administrator's token (write-enabled, never expiring) by its key's hash and prefix. */
export async function insertAdminToken(
  db: Queryable,
  userId: number,
  keyHash: string,
  keyPrefix: string,
  now: string,
): Promise<void> {
  await db
    .insertInto('tokens')
    .values({
      user_id: userId,
      key_hash: keyHash,
      key_prefix: keyPrefix,
      write_enabled: 1,
      expires: null,
      description: 'Administrator token',
      last_used: null,
      created: now,
      last_updated: now,
    })
    .execute();
}

/** Whether any user exists. */
export async function anyUserExists(db: Queryable): Promise<boolean> {
  return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
}
