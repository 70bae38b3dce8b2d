// Attribute-level view of one changed object: main at the branch's baseline (original), the
// branch (modified) and main now (current), with changed and conflicting attributes marked.
import type { ChangeDiff } from '../server/contract/branching';

/** Fields every object carries that say nothing about the change. */
const BOOKKEEPING = new Set(['id', 'url', 'display', 'created', 'last_updated']);

export interface AttributeRow {
  name: string;
  original: unknown;
  modified: unknown;
  current: unknown;
  /** The branch changes this attribute. */
  changed: boolean;
  /** Branching flags this attribute as conflicting with main. */
  conflict: boolean;
  /** Main moved this attribute since the branch's baseline. */
  mainMoved: boolean;
}

export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalize(a)) === JSON.stringify(normalize(b));
}

function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, normalize((v as Record<string, unknown>)[k])]));
  }
  return v;
}

/** Rows of the diff table; only changed or conflicting attributes unless `all`. */
export function attributeRows(change: Pick<ChangeDiff, 'original' | 'modified' | 'current' | 'conflicts'>, all = false): AttributeRow[] {
  const names = new Set<string>();
  for (const side of [change.original, change.modified, change.current]) {
    for (const k of Object.keys(side ?? {})) if (!BOOKKEEPING.has(k)) names.add(k);
  }
  const conflicts = new Set(change.conflicts ?? []);
  const rows = [...names].sort().map((name) => {
    const original = change.original ? change.original[name] : undefined;
    const modified = change.modified ? change.modified[name] : undefined;
    const current = change.current ? change.current[name] : undefined;
    return {
      name,
      original,
      modified,
      current,
      changed: !sameValue(original, modified),
      conflict: conflicts.has(name),
      mainMoved: change.original !== null && change.current !== null && !sameValue(original, current),
    };
  });
  return all ? rows : rows.filter((r) => r.changed || r.conflict);
}

/** How a value shows in a cell: absent as an em dash, strings as themselves, the rest as JSON. */
export function formatValue(v: unknown): string {
  if (v === undefined) return '—';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}
