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

/**
 * Failed credentials per client address and per username, in a sliding window, in memory.
 *
 * - Token authentication: an address with `failures` failed tokens within the window is
 *   refused (429) for every request carrying a token until the window passes.
 * - Token provisioning (username and password): an address with `failures` failed attempts is
 *   refused likewise. A username with `failures` failed attempts (from anywhere) is refused to
 *   every address that itself failed on it within the window; an address that has not failed
 *   on it (the user signing in from their own machine) is unaffected.
 *
 * Only failures count: a success neither resets nor adds.
 */
export class CredentialThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly clock: Clock) {}

  /** Seconds until an attempt may be made again, or 0 when it may be made now. */
  retryAfter(kind: CredentialKind, address: string, username?: string): number {
    const now = this.clock.now().getTime();
    let until = this.blockedUntil(`${kind}|a|${address}`, now);
    if (username !== undefined) {
      const own = this.recent(`${kind}|ua|${username}|${address}`, now);
      if (own.length > 0) {
        const userUntil = this.blockedUntil(`${kind}|u|${username}`, now);
        // Blocked until the username's count falls below the limit or this address's own failures expire.
        if (userUntil > 0) until = Math.max(until, Math.min(userUntil, own[own.length - 1]! + CREDENTIAL_LIMITS.windowMs));
      }
    }
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }

  /** Records one failed attempt. */
  fail(kind: CredentialKind, address: string, username?: string): void {
    const now = this.clock.now().getTime();
    this.add(`${kind}|a|${address}`, now);
    if (username !== undefined) {
      this.add(`${kind}|u|${username}`, now);
      this.add(`${kind}|ua|${username}|${address}`, now);
    }
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

  /** When the key drops below the limit again (0: it is below now). */
  private blockedUntil(key: string, now: number): number {
    const times = this.recent(key, now);
    if (times.length < CREDENTIAL_LIMITS.failures) return 0;
    return times[times.length - CREDENTIAL_LIMITS.failures]! + CREDENTIAL_LIMITS.windowMs;
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
