// Which version of an object a context shows, as an opaque token: what the object endpoints send
// as its ETag and compare with If-Match (RFC 9110 sections 8.8.3 and 13.1.1). It is made of
// stored values only (no hashing of bodies): the row's version counter, moved by every write of
// the row, so two writes within one millisecond still differ.

/**
 * Main's object: its row's version and its last update. The time keeps the token from coming
 * back when an object deleted on main is put back (a merge's revert), its counter starting again.
 */
export function mainVersion(version: number, lastUpdated: string): string {
  return `m${version}-${Date.parse(lastUpdated).toString(36)}`;
}

/**
 * The object as a branch shows it. Changed by the branch: the change's own version (change ids
 * are never reused, so a change removed and written again starts afresh). Not changed by the
 * branch: main's version seen from this branch, so a token of main never passes in a branch.
 */
export function branchVersion(
  branchId: number,
  change: { id: number; version: number } | undefined,
  main: string | undefined,
): string | undefined {
  if (change) return `c${change.id}-${change.version}`;
  return main === undefined ? undefined : `b${branchId}-${main}`;
}

/** The version a client names as an ETag: a strong entity tag, the token in double quotes. */
export function entityTag(version: string): string {
  return `"${version}"`;
}

/** An If-Match header as parsed: any current version (`*`), or the entity tags listed. */
export type IfMatch = { any: true } | { any: false; tags: string[] };

/** One entity tag: optionally weak (`W/`), then an opaque tag of visible characters but `"` in double quotes. */
const ENTITY_TAG = /^\s*((?:W\/)?"[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/;

/**
 * Parses an If-Match header (`*`, or a comma-separated list of entity tags, as several headers
 * joined); null when it is malformed. Empty list elements are allowed, as the list syntax says.
 */
export function parseIfMatch(header: string): IfMatch | null {
  if (header.trim() === '*') return { any: true };
  const tags: string[] = [];
  let rest = header;
  while (rest.trim() !== '') {
    const empty = /^\s*,/.exec(rest);
    if (empty) {
      rest = rest.slice(empty[0].length);
      continue;
    }
    const m = ENTITY_TAG.exec(rest);
    if (!m) return null;
    tags.push(m[1]!);
    rest = rest.slice(m[0].length);
  }
  return tags.length > 0 ? { any: false, tags } : null;
}

/**
 * Whether an If-Match condition holds for an object's current version (undefined: the object
 * has none, it does not exist): `*` holds for any, a list when one of its tags is the current
 * one by strong comparison (a weak tag never matches).
 */
export function ifMatchHolds(condition: IfMatch, current: string | undefined): boolean {
  if (current === undefined) return false;
  if (condition.any) return true;
  const tag = entityTag(current);
  return condition.tags.some((t) => t === tag);
}
