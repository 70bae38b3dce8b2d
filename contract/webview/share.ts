// Structural sharing between two snapshots: every part of the new value that is deep-equal to
// the same part of the old one is replaced by the old object. After a refresh, whatever did not
// change keeps its identity, so the renderers can tell what changed with `===` alone.

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Deep equality of JSON-like values (no allocation: the common case of a refresh is "equal"). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  let count = 0;
  for (const key in a) {
    if (!Object.prototype.hasOwnProperty.call(a, key)) continue;
    count += 1;
    if (!Object.prototype.hasOwnProperty.call(b, key) || !deepEqual(a[key], b[key])) return false;
  }
  for (const key in b) if (Object.prototype.hasOwnProperty.call(b, key)) count -= 1;
  return count === 0;
}

/**
 * `next`, with each subtree deep-equal to the matching subtree of `prev` replaced by `prev`'s.
 * Returns `prev` itself when the two are deep-equal. Arrays are matched by position, objects by key.
 */
export function shareEqual<T>(prev: unknown, next: T): T {
  if (deepEqual(prev, next)) return prev as T;
  if (Array.isArray(prev) && Array.isArray(next)) {
    return next.map((item, i) => (i < prev.length ? shareEqual(prev[i], item) : item)) as T;
  }
  if (isPlainObject(prev) && isPlainObject(next)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(next))
      out[key] = Object.prototype.hasOwnProperty.call(prev, key) ? shareEqual(prev[key], next[key]) : next[key];
    return out as T;
  }
  return next;
}

/** Two lists of inputs are the same when each item is identical; items that are arrays are compared item by item (one level). */
export function sameInputs(a: readonly unknown[] | undefined, b: readonly unknown[]): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (Object.is(x, y)) continue;
    if (Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((v, j) => Object.is(v, y[j])))
      continue;
    return false;
  }
  return true;
}
