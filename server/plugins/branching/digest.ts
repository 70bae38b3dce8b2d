import { createHash } from 'node:crypto';
import type { Ctx } from '../../host';

/**
 * The digest of a branch's net diff: what the branch would change on main, independent of how
 * and when its writes were made. Two branches (or one branch at two moments) holding the same
 * net changes have the same digest; a sync that rebases nothing, or an edit that is undone,
 * leaves it unchanged.
 *
 * Algorithm (stable; a pipeline can compute it from `GET /api/plugins/branching/changes/`):
 *
 * 1. Take every changed object of the branch: its object type, object id, `original` (main's
 *    state at the branch's baseline, null for a create) and `modified` (the branch's state, null
 *    for a delete).
 * 2. Sort them by object type (code-unit order), then object id (numeric).
 * 3. Write each as the canonical JSON of `[object_type, object_id, original, modified]`
 *    (object keys sorted by code unit, no whitespace, numbers and strings as JSON.stringify
 *    writes them) followed by a line feed.
 * 4. The digest is the SHA-256 of that text (UTF-8), as 64 lowercase hex digits. A branch
 *    without changes has the digest of the empty text.
 *
 * It is computed once per state of the branch data: reused within a transaction until a write
 * of branch data, and between writes through the read memo.
 */
export const EMPTY_DIGEST = createHash('sha256').update('').digest('hex');

/** JSON with object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** The digest of the given changed objects (in any order). */
export function digestOfChanges(changes: ReadonlyArray<{ objectType: string; objectId: number; original: unknown; modified: unknown }>): string {
  const sorted = [...changes].sort((a, b) => (a.objectType < b.objectType ? -1 : a.objectType > b.objectType ? 1 : a.objectId - b.objectId));
  const hash = createHash('sha256');
  for (const c of sorted) hash.update(`${canonicalJson([c.objectType, c.objectId, c.original ?? null, c.modified ?? null])}\n`);
  return hash.digest('hex');
}

/** The digest of a branch's net diff now. */
export async function branchDigest(ctx: Ctx, branchId: number): Promise<string> {
  return ctx.host.readMemo.get(ctx, `branch-data:digest|${branchId}`, async () => {
    const rows = await ctx.db.selectFrom('branch_changes').select(['object_type', 'object_id', 'original', 'modified']).where('branch_id', '=', branchId).execute();
    return digestOfChanges(
      rows.map((r) => ({
        objectType: r.object_type,
        objectId: r.object_id,
        original: r.original === null ? null : (JSON.parse(r.original) as unknown),
        modified: r.modified === null ? null : (JSON.parse(r.modified) as unknown),
      })),
    );
  });
}
