import { z } from 'zod';
import { deriveCtx, inTransaction } from '../core/context';
import { AuthenticationFailed, TooManyRequests } from '../core/errors';
import { CREDENTIAL_LIMITS, failureKeys, retryAfterFrom } from '../core/throttle';
import { recentCredentialFailures, recordCredentialFailure } from './credential-failures-repository';
import type { Host } from '../host';
import { verifyPassword } from '../core/secrets';
import { Reply } from '../http/routes';
import { provisionedToken } from '../../../contract/api/host';
import { createToken, tokenSettings } from './tokens-routes';
import { groupIdsOfUsers, userByUsername } from './users-repository';

const provisionBody = z.strictObject({
  username: z.string().max(150, { error: 'at most 150 characters' }),
  password: z.string().max(256, { error: 'at most 256 characters' }),
  ...tokenSettings,
});

/** Compared against when the username is unknown, so both failures take the same time. */
const DUMMY_HASH =
  'scrypt$00000000000000000000000000000000$0000000000000000000000000000000000000000000000000000000000000000';

/** `POST /api/users/tokens/provision/`: a new token for a username and password (no token needed). */
export function registerTokenProvisioning(host: Host): void {
  host.routes.add({
    method: 'POST',
    path: '/api/users/tokens/provision/',
    access: { public: true },
    summary: 'Provision a token with a username and password; the answer holds its key, shown this once',
    tag: 'users',
    body: provisionBody,
    response: provisionedToken,
    status: 201,
    // The password is checked outside any transaction: hashing takes tens of milliseconds.
    transaction: false,
    handler: async ({ ctx, body, address }) => {
      const { username, password, ...settings } = body;
      // Failures are counted in the database: every instance of the service shares the count.
      const now = ctx.host.clock.now().getTime();
      const keys = failureKeys('password', address, username);
      const recent = await recentCredentialFailures(ctx.db, keys, now - CREDENTIAL_LIMITS.windowMs);
      const wait = retryAfterFrom((key) => recent.get(key) ?? [], now, 'password', address, username);
      if (wait > 0) throw new TooManyRequests(wait);
      const user = await userByUsername(ctx, username);
      const valid = (await verifyPassword(password, user?.password_hash ?? DUMMY_HASH)) && user !== undefined;
      if (!user || !valid) {
        await recordCredentialFailure(ctx.db, keys, now, now - CREDENTIAL_LIMITS.windowMs);
        throw new AuthenticationFailed('Invalid username or password.');
      }
      if (user.is_active !== 1) throw new AuthenticationFailed('User is inactive.');
      const groupIds = (await groupIdsOfUsers(ctx, [user.id])).get(user.id) ?? [];
      const asUser = deriveCtx(ctx, {
        user: {
          id: user.id,
          username: user.username,
          isSuperuser: user.is_superuser === 1,
          groupIds,
          writeEnabled: true,
        },
      });
      return new Reply(201, await inTransaction(asUser, (tx) => createToken(tx, { ...settings, userId: user.id })));
    },
  });
}
