import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** scrypt on libuv's thread pool: hashing a password never blocks the event loop. */
function scryptAsync(password: string, salt: Buffer, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, length, (err, key) => (err ? reject(err) : resolve(key))));
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
