import type { Clock } from './clock';

/** The limits of credential guessing (documented in docs/security.md). */
export const CREDENTIAL_LIMITS = {
  /** Failures allowed within the window; the next attempt is refused (429). */
  failures: 10,
  windowMs: 60_000,
  /** Keys kept at most (oldest dropped first), so a flood of usernames cannot exhaust memory. */
  maxKeys: 100_000,
} as const;

export type CredentialKind = 'password' | 'token';

/** Recent failure times of a key (ascending, within the window). */
export type FailureLookup = (key: string) => readonly number[];

/** The keys a failed attempt counts under: the address, and with a username the username and the pair. */
export function failureKeys(kind: CredentialKind, address: string, username?: string): string[] {
  const keys = [`${kind}|a|${address}`];
  if (username !== undefined) keys.push(`${kind}|u|${username}`, `${kind}|ua|${username}|${address}`);
  return keys;
}

/** When the key drops below the limit again (0: it is below now). */
function blockedUntil(times: readonly number[]): number {
  if (times.length < CREDENTIAL_LIMITS.failures) return 0;
  return times[times.length - CREDENTIAL_LIMITS.failures]! + CREDENTIAL_LIMITS.windowMs;
}

/**
 * Seconds until an attempt may be made again (0: now), from the recent failures `lookup` gives.
 *
 * - An address with `failures` failed attempts within the window is refused (429).
 * - With a username: a username with `failures` failed attempts (from anywhere) is refused to
 *   every address that itself failed on it within the window; an address that has not failed on
 *   it (the user signing in from their own machine) is unaffected.
 */
export function retryAfterFrom(
  lookup: FailureLookup,
  now: number,
  kind: CredentialKind,
  address: string,
  username?: string,
): number {
  const [addressKey, userKey, pairKey] = failureKeys(kind, address, username);
  let until = blockedUntil(lookup(addressKey!));
  if (username !== undefined) {
    const own = lookup(pairKey!);
    if (own.length > 0) {
      const userUntil = blockedUntil(lookup(userKey!));
      // Blocked until the username's count falls below the limit or this address's own failures expire.
      if (userUntil > 0)
        until = Math.max(until, Math.min(userUntil, own[own.length - 1]! + CREDENTIAL_LIMITS.windowMs));
    }
  }
  return until > now ? Math.ceil((until - now) / 1000) : 0;
}

/**
 * Failed credentials per client address and per username, in a sliding window, in this process's
 * memory: token authentication, which runs on every request with a token (a 40-character random
 * token is not guessable anyway; the limit keeps a flood cheap). Passwords are counted in the
 * database instead, so that every instance of the service shares one count
 * (`users/credential-failures-repository.ts`, the token provisioning route).
 *
 * Only failures count: a success neither resets nor adds.
 */
export class CredentialThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly clock: Clock) {}

  /** Seconds until an attempt may be made again, or 0 when it may be made now. */
  retryAfter(kind: CredentialKind, address: string, username?: string): number {
    const now = this.clock.now().getTime();
    return retryAfterFrom((key) => this.recent(key, now), now, kind, address, username);
  }

  /** Records one failed attempt. */
  fail(kind: CredentialKind, address: string, username?: string): void {
    const now = this.clock.now().getTime();
    for (const key of failureKeys(kind, address, username)) this.add(key, now);
  }

  private recent(key: string, now: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const from = now - CREDENTIAL_LIMITS.windowMs;
    const kept = times.filter((t) => t > from && t <= now);
    if (kept.length === 0) this.failures.delete(key);
    else if (kept.length !== times.length) this.failures.set(key, kept);
    return kept;
  }

  private add(key: string, now: number): void {
    const times = this.recent(key, now);
    times.push(now);
    // Only the last `failures` matter; re-inserting moves the key to the end (newest).
    this.failures.delete(key);
    this.failures.set(key, times.slice(-CREDENTIAL_LIMITS.failures));
    while (this.failures.size > CREDENTIAL_LIMITS.maxKeys) this.failures.delete(this.failures.keys().next().value!);
  }
}
