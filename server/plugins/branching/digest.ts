import { createHash } from 'node:crypto';
import { endianness } from 'node:os';
import {
  BRANCH_DATA_TABLES,
  ensureBranchState,
  type BranchChange,
  type BranchChangeWrite,
  type BranchStateKeeper,
  type Ctx,
} from '../../host';
import { branchChangeRows, digestRow, dropDigest, keptDigest, storeDigest } from './digest-repository';

/**
 * The digest of a branch's net diff: what the branch would change on main, independent of how
 * and when its writes were made. Two branches (or one branch at two moments) holding the same
 * net changes have the same digest; a sync that rebases nothing, or an edit that is undone,
 * leaves it unchanged.
 *
 * Algorithm (stable; a pipeline can compute it from `GET /api/plugins/branching/changes/`;
 * docs/digest-and-override.md has a reference snippet): a multiset hash (LtHash16) of the
 * canonical lines of the changed objects.
 *
 * 1. For every changed object of the branch, its line: the canonical JSON of
 *    `[object_type, object_id, original, modified]` (object keys sorted by code unit, no
 *    whitespace, numbers and strings as JSON.stringify writes them; `original` null for a
 *    create, `modified` null for a delete) followed by a line feed, in UTF-8.
 * 2. Each line is expanded with SHAKE-256 to 2,048 bytes, read as 1,024 little-endian 16-bit lanes.
 * 3. The state is the lane-wise sum of every line's lanes, modulo 2^16 (a branch without
 *    changes: 2,048 zero bytes).
 * 4. The digest is the SHA-256 of the state (1,024 lanes written little-endian), as 64 lowercase
 *    hex digits.
 *
 * A sum does not depend on order, so the state is kept per branch and moved at every write of
 * a change (the line it had out, the line it has in: O(1) per write; the keeper below), and
 * read, not recomputed. A plain sum of SHA-256 values modulo 2^256 would not do: an author who
 * crafts many changes could find a set summing to a given value (generalised birthday
 * attacks); 1,024 lanes of 16 bits make that lattice problem far too large.
 */
export const DIGEST_KEEPER = 'branching:digest';

const LANES = 1024;
const LITTLE_ENDIAN = endianness() === 'LE';
const STATE_BYTES = LANES * 2;

/** JSON with object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

interface DigestedChange {
  objectType: string;
  objectId: number;
  original: unknown;
  modified: unknown;
}

/** A changed object's canonical line (with its line feed). */
export function digestLine(c: DigestedChange): string {
  return `${canonicalJson([c.objectType, c.objectId, c.original ?? null, c.modified ?? null])}\n`;
}

/** The state of an empty branch. */
export function emptyState(): Uint16Array {
  return new Uint16Array(LANES);
}

/** Adds (sign 1) or takes out (sign -1) one line's lanes to the state, in place. */
export function addLine(state: Uint16Array, line: string, sign: 1 | -1): void {
  const bytes = createHash('shake256', { outputLength: STATE_BYTES }).update(line, 'utf8').digest();
  // A Uint16Array stores modulo 2^16; on a little-endian machine it reads the lanes as written.
  if (LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
    const lanes = new Uint16Array(bytes.buffer, bytes.byteOffset, LANES);
    if (sign === 1) for (let i = 0; i < LANES; i++) state[i] = state[i]! + lanes[i]!;
    else for (let i = 0; i < LANES; i++) state[i] = state[i]! - lanes[i]!;
    return;
  }
  for (let i = 0; i < LANES; i++) state[i] = state[i]! + sign * bytes.readUInt16LE(2 * i);
}

function stateBytes(state: Uint16Array): Buffer {
  const out = Buffer.alloc(STATE_BYTES);
  for (let i = 0; i < LANES; i++) out.writeUInt16LE(state[i]!, 2 * i);
  return out;
}

function stateFrom(bytes: Buffer): Uint16Array {
  const state = emptyState();
  for (let i = 0; i < LANES; i++) state[i] = bytes.readUInt16LE(2 * i);
  return state;
}

/** The digest of a state. */
export function stateDigest(state: Uint16Array): string {
  return createHash('sha256').update(stateBytes(state)).digest('hex');
}

export const EMPTY_DIGEST = stateDigest(emptyState());

/** The digest of the given changed objects (in any order): the full computation. */
export function digestOfChanges(changes: readonly DigestedChange[]): string {
  const state = emptyState();
  for (const c of changes) addLine(state, digestLine(c), 1);
  return stateDigest(state);
}

/**
 * The digest as it was computed before the multiset hash: the SHA-256 of the canonical lines
 * sorted by object type and id. Only to recognise digests recorded then (a migration rewrites
 * them to the digest of the same content now).
 */
export function formerDigestOfChanges(changes: readonly DigestedChange[]): string {
  const sorted = [...changes].sort((a, b) =>
    a.objectType < b.objectType ? -1 : a.objectType > b.objectType ? 1 : a.objectId - b.objectId,
  );
  const hash = createHash('sha256');
  for (const c of sorted) hash.update(digestLine(c));
  return hash.digest('hex');
}

/** The digest of a branch's net diff now, and how many changes it holds (kept per branch). */
export async function branchDigestState(ctx: Ctx, branchId: number): Promise<{ digest: string; changes: number }> {
  // One query when the kept state is current (the usual case); else rebuilt, then read.
  const kept = await keptDigest(ctx, branchId, DIGEST_KEEPER);
  if (!kept) return { digest: EMPTY_DIGEST, changes: 0 };
  if (kept.current) return { digest: kept.digest!, changes: kept.changes };
  await ensureBranchState(ctx, DIGEST_KEEPER, branchId);
  const row = await digestRow(ctx, branchId);
  return row ? { digest: row.digest, changes: row.changes } : { digest: EMPTY_DIGEST, changes: 0 };
}

/** The tables a branch's digest and change count are read from: what a cached read of them names. */
export const DIGEST_TABLES: readonly string[] = ['branching_digests', ...BRANCH_DATA_TABLES];

/** The digest of a branch's net diff now. */
export async function branchDigest(ctx: Ctx, branchId: number): Promise<string> {
  return (await branchDigestState(ctx, branchId)).digest;
}

/** How many changes a branch holds now. */
export async function branchChangeCount(ctx: Ctx, branchId: number): Promise<number> {
  return (await branchDigestState(ctx, branchId)).changes;
}

async function save(ctx: Ctx, branchId: number, state: Uint16Array, changes: number): Promise<void> {
  await storeDigest(ctx, branchId, {
    changes,
    state: stateBytes(state).toString('base64'),
    digest: stateDigest(state),
  });
}

const lineOf = (c: BranchChange) => digestLine(c);

/** Keeps each branch's digest state and change count: a write moves it by the line out and the line in. */
export const digestKeeper: BranchStateKeeper = {
  name: DIGEST_KEEPER,
  async apply(ctx: Ctx, writes: readonly BranchChangeWrite[]) {
    const branchId = writes[0]!.branchId;
    const row = await digestRow(ctx, branchId);
    const state = row ? stateFrom(Buffer.from(row.state, 'base64')) : emptyState();
    let changes = row?.changes ?? 0;
    for (const write of writes) {
      if (write.before) addLine(state, lineOf(write.before), -1);
      if (write.after) addLine(state, lineOf(write.after), 1);
      changes += (write.after ? 1 : 0) - (write.before ? 1 : 0);
    }
    await save(ctx, branchId, state, changes);
  },
  async rebuild(ctx: Ctx, branchId: number) {
    const state = emptyState();
    let changes = 0;
    for await (const batch of branchChangeRows(ctx, branchId)) {
      for (const c of batch) addLine(state, digestLine(c), 1);
      changes += batch.length;
    }
    await save(ctx, branchId, state, changes);
  },
  drop: (ctx: Ctx, branchId: number) => dropDigest(ctx, branchId),
};
