import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';

/**
 * Password hashes computed at once: all but one core, at least one. Hashing runs on libuv's
 * thread pool (never on the event loop), and a storm of sign-in attempts queues here instead
 * of taking every core from request handling.
 */
const HASHING_SLOTS = Math.max(1, availableParallelism() - 1);
let hashing = 0;
const waiting: Array<() => void> = [];

async function withHashingSlot<T>(work: () => Promise<T>): Promise<T> {
  if (hashing >= HASHING_SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  else hashing++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else hashing--;
  }
}

/** scrypt on libuv's thread pool: hashing a password never blocks the event loop. */
function scryptAsync(password: string, salt: Buffer, length: number): Promise<Buffer> {
  return withHashingSlot(() => new Promise((resolve, reject) => scrypt(password, salt, length, (err, key) => (err ? reject(err) : resolve(key)))));
}

/** A new API token key: 40 hexadecimal characters. */
export function newTokenKey(): string {
  return randomBytes(20).toString('hex');
}

/** Token keys are high-entropy, so a plain SHA-256 is the stored form; the key itself is never stored. */
export function hashTokenKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32);
  return `scrypt$${salt.toString('hex')}$${hash.toString('hex')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const [scheme, saltHex, hashHex] = stored.split('$');
  if (scheme !== 'scrypt' || !saltHex || !hashHex) return false;
  const expected = Buffer.from(hashHex, 'hex');
  const actual = await scryptAsync(password, Buffer.from(saltHex, 'hex'), expected.length);
  return timingSafeEqual(actual, expected);
}
