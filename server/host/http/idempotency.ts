import { createHash } from 'node:crypto';
import { Conflict, Unprocessable, ValidationError } from '../core/errors';
import type { Queryable } from '../db/database';
import { keepAnswer, keptAnswer } from './idempotency-repository';

/**
 * `Idempotency-Key` on writes (POST, PUT, PATCH, DELETE): a client that lost an answer sends
 * the same request again with the same key and gets the first answer back instead of a second
 * write. The first successful answer (status and body) is kept per caller and key for
 * `IDEMPOTENCY_RETENTION_MS`, written in the same transaction as the write itself, so a key is
 * remembered exactly when its write committed. A failed request (4xx, 5xx) is not kept: it may
 * be retried with the same key. The same key with another method, path, branch or body is 422;
 * while a request with a key is running, another with that key is 409.
 *
 * Requests in flight are known to this process only; with several service instances the claim
 * would have to be a row of its own (see `docs/architecture.md`).
 */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENT_REPLAY_HEADER = 'Idempotent-Replayed';

const KEY_PATTERN = /^[\x20-\x7e]{1,200}$/;

/** The key a request carries, or null; one that is not 1–200 printable ASCII characters is a 400 naming the header. */
export function readIdempotencyKey(raw: string | string[] | undefined): string | null {
  if (raw === undefined) return null;
  const value = Array.isArray(raw) ? raw.join(', ') : raw;
  if (!KEY_PATTERN.test(value))
    throw ValidationError.field(IDEMPOTENCY_HEADER, 'An idempotency key is 1 to 200 printable ASCII characters.');
  return value;
}

/** What makes two requests the same: method, path with query, branch header and body. */
export interface RequestIdentity {
  method: string;
  pathAndQuery: string;
  branch: string | null;
  body: unknown;
}

export function fingerprintOf(request: RequestIdentity): string {
  return createHash('sha256')
    .update(JSON.stringify([request.method, request.pathAndQuery, request.branch, request.body ?? null]))
    .digest('hex');
}

/** An answer as sent: status and JSON text (null: no body), and headers of its own (not kept for a replay). */
export interface Answer {
  status: number;
  text: string | null;
  headers?: Readonly<Record<string, string>>;
}

/** One key of one caller, for one request. */
export interface IdempotencyClaim {
  userId: number;
  key: string;
  fingerprint: string;
  /** Frees the key for the next request (the claimed one finished, one way or another). */
  release(): void;
}

function reusedFor(key: string): Unprocessable {
  return new Unprocessable(`Idempotency-Key "${key}" was already used for a different request.`);
}

export class IdempotencyKeys {
  /** Keys of requests running now, by caller and key, with their fingerprint. */
  private readonly running = new Map<string, string>();

  /** Claims the key for a request starting now; another request with that key still running is 409 (422 when it differs). */
  claim(userId: number, key: string, fingerprint: string): IdempotencyClaim {
    const slot = `${userId}\n${key}`;
    const other = this.running.get(slot);
    if (other !== undefined) {
      if (other !== fingerprint) throw reusedFor(key);
      throw new Conflict(
        `A request with Idempotency-Key "${key}" is still being processed; send it again once it has finished.`,
      );
    }
    this.running.set(slot, fingerprint);
    let released = false;
    return {
      userId,
      key,
      fingerprint,
      release: () => {
        if (released) return;
        released = true;
        this.running.delete(slot);
      },
    };
  }

  /** The kept answer of this key, when the same request was answered within the retention; another request with it is 422. */
  async storedAnswer(db: Queryable, claim: IdempotencyClaim, now: Date): Promise<Answer | null> {
    const row = await keptAnswer(db, claim.userId, claim.key, cutoff(now));
    if (!row) return null;
    if (row.fingerprint !== claim.fingerprint) throw reusedFor(claim.key);
    return { status: row.status, text: row.body };
  }

  /** Keeps a successful answer (inside the write's transaction); expired keys go at the same time. */
  async remember(db: Queryable, claim: IdempotencyClaim, answer: Answer, now: Date): Promise<void> {
    await keepAnswer(
      db,
      claim.userId,
      claim.key,
      { fingerprint: claim.fingerprint, status: answer.status, body: answer.text, created: now.toISOString() },
      cutoff(now),
    );
  }
}

function cutoff(now: Date): string {
  return new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS).toISOString();
}
