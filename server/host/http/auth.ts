import type { AuthUser } from '../core/identity';
import { AuthenticationFailed } from '../core/errors';
import type { HostServices } from '../core/context';
import { hashTokenKey } from '../core/secrets';

interface CachedToken {
  tokenId: number;
  user: AuthUser;
  expires: string | null;
  isActive: boolean;
  cachedAt: number;
  lastUsedWritten: number;
}

const CACHE_MS = 5_000;
const LAST_USED_EVERY_MS = 60_000;

/**
 * Resolves `Authorization: Token <key>` to the caller. Keys are looked up by their hash.
 * A short cache keeps hot paths fast; `invalidate()` is called on every write to users,
 * groups, memberships or tokens.
 */
export class TokenAuthenticator {
  private cache = new Map<string, CachedToken>();

  constructor(private readonly host: HostServices) {}

  invalidate(): void {
    this.cache.clear();
  }

  /** Null when no credentials were sent; throws 403 for bad ones. */
  async authenticate(header: string | undefined): Promise<AuthUser | null> {
    if (!header) return null;
    const match = /^(?:Token|Bearer)\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new AuthenticationFailed('Invalid token header. Use "Authorization: Token <key>".');
    const hash = hashTokenKey(match[1]!);
    const nowMs = this.host.clock.now().getTime();
    let entry = this.cache.get(hash);
    if (!entry || nowMs - entry.cachedAt > CACHE_MS || nowMs < entry.cachedAt) {
      entry = await this.load(hash, nowMs);
    }
    if (!entry) throw new AuthenticationFailed('Invalid token.');
    if (!entry.isActive) throw new AuthenticationFailed('User is inactive.');
    if (entry.expires && Date.parse(entry.expires) <= nowMs) throw new AuthenticationFailed('Token expired.');
    if (nowMs - entry.lastUsedWritten > LAST_USED_EVERY_MS) {
      entry.lastUsedWritten = nowMs;
      await this.host.db
        .updateTable('tokens')
        .set({ last_used: new Date(nowMs).toISOString() })
        .where('id', '=', entry.tokenId)
        .execute();
    }
    return entry.user;
  }

  private async load(hash: string, nowMs: number): Promise<CachedToken | undefined> {
    const row = await this.host.db
      .selectFrom('tokens')
      .innerJoin('users', 'users.id', 'tokens.user_id')
      .select([
        'tokens.id as token_id',
        'tokens.write_enabled',
        'tokens.expires',
        'tokens.last_used',
        'users.id as user_id',
        'users.username',
        'users.is_superuser',
        'users.is_active',
      ])
      .where('tokens.key_hash', '=', hash)
      .executeTakeFirst();
    if (!row) {
      this.cache.delete(hash);
      return undefined;
    }
    const groups = await this.host.db.selectFrom('user_groups').select('group_id').where('user_id', '=', row.user_id).execute();
    const entry: CachedToken = {
      tokenId: row.token_id,
      user: {
        id: row.user_id,
        username: row.username,
        isSuperuser: row.is_superuser === 1,
        groupIds: groups.map((g) => g.group_id),
        writeEnabled: row.write_enabled === 1,
      },
      expires: row.expires,
      isActive: row.is_active === 1,
      cachedAt: nowMs,
      lastUsedWritten: row.last_used ? Date.parse(row.last_used) : 0,
    };
    this.cache.set(hash, entry);
    return entry;
  }
}
