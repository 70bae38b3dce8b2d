import type { AuthUser } from '../core/identity';
import { AuthenticationFailed } from '../core/errors';
import type { HostServices } from '../core/context';
import { hashTokenKey } from '../core/secrets';
import { groupIdsOfTokenUser, markTokenUsed, tokenWithUser } from '../users/tokens-repository';

interface CachedToken {
  tokenId: number;
  user: AuthUser;
  expires: string | null;
  isActive: boolean;
  lastUsedWritten: number;
}

const LAST_USED_EVERY_MS = 60_000;

/**
 * Resolves `Authorization: Token <key>` to the caller. Keys are looked up by their hash; the
 * answer is kept in the host's read memo, so any committed write (of users, groups,
 * memberships, tokens or anything else, by any instance) drops it.
 */
/** What an identity is read from: a commit of any other table keeps it. */
const IDENTITY_TABLES: readonly string[] = ['tokens', 'users', 'user_groups'];

export class TokenAuthenticator {
  constructor(private readonly host: HostServices) {}

  /** Null when no credentials were sent; throws 403 for bad ones. */
  async authenticate(header: string | undefined): Promise<AuthUser | null> {
    if (!header) return null;
    const match = /^(?:Token|Bearer)\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new AuthenticationFailed('Invalid token header. Use "Authorization: Token <key>".');
    const hash = hashTokenKey(match[1]!);
    const nowMs = this.host.clock.now().getTime();
    const entry = await this.host.readMemo.get(
      { db: this.host.db, inTransaction: false },
      `token|${hash}`,
      () => this.load(hash),
      IDENTITY_TABLES,
    );
    if (!entry) throw new AuthenticationFailed('Invalid token.');
    if (!entry.isActive) throw new AuthenticationFailed('User is inactive.');
    if (entry.expires && Date.parse(entry.expires) <= nowMs) throw new AuthenticationFailed('Token expired.');
    if (nowMs - entry.lastUsedWritten > LAST_USED_EVERY_MS) {
      entry.lastUsedWritten = nowMs;
      await markTokenUsed(this.host.db, entry.tokenId, new Date(nowMs).toISOString());
    }
    return entry.user;
  }

  private async load(hash: string): Promise<CachedToken | undefined> {
    const row = await tokenWithUser(this.host.db, hash);
    if (!row) return undefined;
    const groupIds = await groupIdsOfTokenUser(this.host.db, row.user_id);
    const entry: CachedToken = {
      tokenId: row.token_id,
      user: {
        id: row.user_id,
        username: row.username,
        isSuperuser: row.is_superuser === 1,
        groupIds,
        writeEnabled: row.write_enabled === 1,
      },
      expires: row.expires,
      isActive: row.is_active === 1,
      lastUsedWritten: row.last_used ? Date.parse(row.last_used) : 0,
    };
    return entry;
  }
}
