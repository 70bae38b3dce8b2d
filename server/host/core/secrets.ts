import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Password hashes computed at once: all but one core, at least one and at most two. Hashing
 * runs on threads of its own (never on the event loop), and a storm of sign-in attempts queues
 * here instead of taking every core from request handling. Each hash works in 16 MB (scrypt's
 * defaults). glibc left to itself keeps that block in the heap of the thread that hashed once
 * it is freed (64 MB held for good on libuv's pool of four threads); the service's environment
 * (`MALLOC_MMAP_THRESHOLD_`, contract/service-node-options.ts) has it returned when freed.
 */
const HASHING_SLOTS = Math.min(2, Math.max(1, availableParallelism() - 1));
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

/** A hashing thread: scrypt for each message, answered in order. */
const HASHER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', ({ password, salt, length }) => {
  try {
    parentPort.postMessage({ key: scryptSync(password, salt, length) });
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});`;

/** Hashing threads not at work (at most HASHING_SLOTS exist: the slots bound them). They never keep the process alive. */
const idleHashers: Worker[] = [];

/** Hashing threads idle this long end (each holds a JavaScript engine of its own). */
const HASHER_IDLE_MS = 10_000;
let retiring: NodeJS.Timeout | undefined;

function retireIdleHashersLater(): void {
  clearTimeout(retiring);
  retiring = setTimeout(() => {
    for (const worker of idleHashers.splice(0)) void worker.terminate();
  }, HASHER_IDLE_MS);
  retiring.unref();
}

function hasher(): Worker {
  const worker = new Worker(HASHER_SOURCE, { eval: true });
  worker.unref();
  return worker;
}

/** scrypt on a hashing thread: hashing a password never blocks the event loop. */
function scryptAsync(password: string, salt: Buffer, length: number): Promise<Buffer> {
  return withHashingSlot(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        const worker = idleHashers.pop() ?? hasher();
        const settle = (message: { key?: Uint8Array; error?: string }) => {
          worker.off('error', fail);
          worker.off('exit', fail);
          idleHashers.push(worker);
          retireIdleHashersLater();
          if (message.key) resolve(Buffer.from(message.key.buffer, message.key.byteOffset, message.key.byteLength));
          else reject(new Error(message.error ?? 'password hashing failed'));
        };
        // A thread that failed is not reused.
        const fail = (err: unknown) => {
          worker.off('message', settle);
          worker.off('error', fail);
          worker.off('exit', fail);
          reject(err instanceof Error ? err : new Error('the password hashing thread stopped'));
        };
        worker.once('message', settle);
        worker.once('error', fail);
        worker.once('exit', fail);
        worker.postMessage({ password, salt, length });
      }),
  );
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
