import type { HostDb, Queryable } from '../db/database';
import { bumpDataVersion } from '../db/data-version';
import type { Clock } from '../core/clock';
import { hashTokenKey, newTokenKey } from '../core/secrets';
import {
  adminUserId,
  anyUserExists,
  insertAdminToken,
  insertAdminUser,
  makeActiveSuperuser,
  reassignToken,
  tokenIdByHash,
} from './bootstrap-repository';

/** The least length of `CHANGE_CONTROL_ADMIN_TOKEN`: a superuser's token must not be guessable. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

/** Why an administrator token from the environment is refused, or null. */
export function adminTokenProblem(token: string): string | null {
  return token.length < MIN_ADMIN_TOKEN_LENGTH
    ? `CHANGE_CONTROL_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long (it has ${token.length}); use a random value, e.g. \`openssl rand -hex 20\`.`
    : null;
}

/**
 * Makes sure a superuser `admin` exists at start. With a given token, `admin` holds exactly
 * that token (created or updated). Without one, a first start on an empty database creates
 * `admin` with a fresh token and returns the key so it can be printed once.
 *
 * One write transaction: instances of a team server starting at the same moment take turns (on
 * PostgreSQL every write transaction holds the write lock), so `admin` is created once, and the
 * data version moves so that running instances read the token afresh.
 */
export async function bootstrapAdmin(db: HostDb, clock: Clock, token: string | undefined): Promise<string | null> {
  return db.transaction().execute(async (trx) => {
    const key = await bootstrapIn(trx, clock, token);
    await bumpDataVersion(trx);
    return key;
  });
}

async function bootstrapIn(db: Queryable, clock: Clock, token: string | undefined): Promise<string | null> {
  const now = clock.now().toISOString();
  const ensureAdmin = async (): Promise<number> => {
    const existing = await adminUserId(db);
    if (existing !== undefined) {
      await makeActiveSuperuser(db, existing, now);
      return existing;
    }
    return insertAdminUser(db, now);
  };
  const giveToken = async (userId: number, key: string): Promise<void> => {
    const hash = hashTokenKey(key);
    const existing = await tokenIdByHash(db, hash);
    if (existing !== undefined) {
      await reassignToken(db, existing, userId, now);
      return;
    }
    await insertAdminToken(db, userId, hash, key.slice(0, 6), now);
  };

  if (token) {
    await giveToken(await ensureAdmin(), token);
    return null;
  }
  if (await anyUserExists(db)) return null;
  const key = newTokenKey();
  await giveToken(await ensureAdmin(), key);
  return key;
}
