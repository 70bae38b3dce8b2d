import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

/** A new API token key: 40 hexadecimal characters. */
export function newTokenKey(): string {
  return randomBytes(20).toString('hex');
}

/** Token keys are high-entropy, so a plain SHA-256 is the stored form; the key itself is never stored. */
export function hashTokenKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32);
  return `scrypt$${salt.toString('hex')}$${hash.toString('hex')}`;
}

export function verifyPassword(password: string, stored: string | null): boolean {
  if (!stored) return false;
  const [scheme, saltHex, hashHex] = stored.split('$');
  if (scheme !== 'scrypt' || !saltHex || !hashHex) return false;
  const expected = Buffer.from(hashHex, 'hex');
  const actual = scryptSync(password, Buffer.from(saltHex, 'hex'), expected.length);
  return timingSafeEqual(actual, expected);
}
