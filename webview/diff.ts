// Attribute-level view of one changed object: main at the branch's baseline (original), the
// branch (modified) and main now (current), with changed and conflicting attributes marked; and,
// inside one attribute, a line diff with the changed characters of each changed line (jsdiff).
import { diffChars, diffLines } from 'diff';
import type { ChangeDiff } from '../contract/api/branching';

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
  if (Object.is(a, b)) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(normalize(a)) === JSON.stringify(normalize(b));
}

function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v as object)
        .sort()
        .map((k) => [k, normalize((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

type Sides = Pick<ChangeDiff, 'original' | 'modified' | 'current' | 'conflicts'>;

/** Rows of the diff table; only changed or conflicting attributes unless `all`. */
export function attributeRows(change: Sides, all = false): AttributeRow[] {
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

/** How a value shows in one line: absent as an em dash, strings as themselves, the rest as JSON. */
export function formatValue(v: unknown): string {
  if (v === undefined) return '—';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** A value as the text its diff is computed on: strings as themselves, the rest as indented JSON with sorted keys; null when absent. */
export function valueText(v: unknown): string | null {
  if (v === undefined) return null;
  if (typeof v === 'string') return v;
  if (v !== null && typeof v === 'object') return JSON.stringify(normalize(v), null, 2);
  return JSON.stringify(v);
}

// ---- segmentation ------------------------------------------------------------------------

export interface Segment {
  text: string;
  /** This part of the line is what changed (the character highlight). */
  changed: boolean;
}

export interface DiffLine {
  kind: 'context' | 'removed' | 'added';
  /** Line numbers in the original and modified value (1-based), null on the side it is not on. */
  oldNo: number | null;
  newNo: number | null;
  segments: Segment[];
}

/** Unchanged lines left out between two shown ones. */
export interface DiffGap {
  kind: 'gap';
  count: number;
}

export type DiffRow = DiffLine | DiffGap;

export interface DiffOptions {
  /** Unchanged lines kept around each change (the rest become gaps). */
  context?: number;
}

/** Above this many characters a line is shown whole, without a character diff. */
const MAX_CHAR_DIFF_LINE = 2000;
/** Above this many edits a line diff gives up and shows the whole values as removed and added. */
const MAX_LINE_EDITS = 4000;
/** Below this share of unchanged characters two lines are unrelated: no character highlight. */
const MIN_SIMILARITY = 0.4;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Unchanged runs this short between two changes are shown as changed: "n[etops]" reads better than "n[et]o[ps]". */
const MIN_COMMON_RUN = 3;

/** The changed characters of a pair of lines, or null when the lines have too little in common to say. */
export function charSegments(before: string, after: string): { removed: Segment[]; added: Segment[] } | null {
  if (before.length > MAX_CHAR_DIFF_LINE || after.length > MAX_CHAR_DIFF_LINE) return null;
  const parts = diffChars(before, after);
  let common = 0;
  const removed: Segment[] = [];
  const added: Segment[] = [];
  parts.forEach((p, i) => {
    if (p.added) added.push({ text: p.value, changed: true });
    else if (p.removed) removed.push({ text: p.value, changed: true });
    else if (i > 0 && i < parts.length - 1 && p.value.length < MIN_COMMON_RUN) {
      removed.push({ text: p.value, changed: true });
      added.push({ text: p.value, changed: true });
    } else {
      common += p.value.length;
      removed.push({ text: p.value, changed: false });
      added.push({ text: p.value, changed: false });
    }
  });
  const longest = Math.max(before.length, after.length);
  if (longest > 0 && common / longest < MIN_SIMILARITY) return null;
  return { removed: merge(removed), added: merge(added) };
}

function merge(segments: Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    const last = out[out.length - 1];
    if (last && last.changed === s.changed) last.text += s.text;
    else if (s.text) out.push({ ...s });
  }
  return out;
}

const whole = (text: string): Segment[] => [{ text, changed: false }];
/** The lines of a value; an empty value is one empty line. */
const linesOf = (text: string): string[] => (text === '' ? [''] : splitLines(text));

/**
 * The line diff of two attribute values, with character highlights on changed lines that pair
 * up (the n-th removed line of a block with its n-th added line), and long unchanged stretches
 * folded into gaps.
 */
export function diffValues(original: unknown, modified: unknown, options: DiffOptions = {}): DiffRow[] {
  const context = options.context ?? 3;
  const before = valueText(original);
  const after = valueText(modified);
  const lines: DiffLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  const pushRemoved = (text: string, segments = whole(text)) =>
    lines.push({ kind: 'removed', oldNo: ++oldNo, newNo: null, segments });
  const pushAdded = (text: string, segments = whole(text)) =>
    lines.push({ kind: 'added', oldNo: null, newNo: ++newNo, segments });

  if (before !== null && before === after) {
    // Nothing to fold around: the value as it is.
    for (const l of linesOf(before))
      lines.push({ kind: 'context', oldNo: ++oldNo, newNo: ++newNo, segments: whole(l) });
    return lines;
  }
  const diffable = before !== null && after !== null && before !== '' && after !== '';
  const parts = diffable
    ? diffLines(before, after, { maxEditLength: MAX_LINE_EDITS, ignoreNewlineAtEof: true })
    : undefined;
  if (!parts) {
    // One side absent (a create or a delete) or empty, or the two too different to diff line by line.
    if (before !== null) for (const l of linesOf(before)) pushRemoved(l);
    if (after !== null) for (const l of linesOf(after)) pushAdded(l);
  } else {
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (!p.added && !p.removed) {
        for (const l of splitLines(p.value))
          lines.push({ kind: 'context', oldNo: ++oldNo, newNo: ++newNo, segments: whole(l) });
        continue;
      }
      if (p.removed && parts[i + 1]?.added) {
        const gone = splitLines(p.value);
        const come = splitLines(parts[i + 1]!.value);
        const pairs = gone.map((l, j) => (j < come.length ? charSegments(l, come[j]!) : null));
        gone.forEach((l, j) => pushRemoved(l, pairs[j]?.removed ?? whole(l)));
        come.forEach((l, j) => pushAdded(l, pairs[j]?.added ?? whole(l)));
        i += 1;
        continue;
      }
      if (p.removed) for (const l of splitLines(p.value)) pushRemoved(l);
      else for (const l of splitLines(p.value)) pushAdded(l);
    }
  }
  return fold(lines, context);
}

/** Keeps `context` unchanged lines around each changed one; the rest become gaps. */
export function fold(lines: DiffLine[], context: number): DiffRow[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.kind === 'context') return;
    for (let j = Math.max(0, i - context); j <= Math.min(lines.length - 1, i + context); j++) keep[j] = true;
  });
  const out: DiffRow[] = [];
  let hidden = 0;
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (hidden) out.push({ kind: 'gap', count: hidden });
      hidden = 0;
      out.push(l);
    } else hidden += 1;
  });
  if (hidden) out.push({ kind: 'gap', count: hidden });
  return out;
}

/** True when a value shows on more than one line. */
export function isMultiLine(v: unknown): boolean {
  const t = valueText(v);
  return t !== null && t.includes('\n');
}

/** A cheap guess of how many lines the changed attributes of a change show (for the list's height estimate). */
export function estimateLines(change: Sides): number {
  let lines = 0;
  const keys = new Set([...Object.keys(change.original ?? {}), ...Object.keys(change.modified ?? {})]);
  for (const k of keys) {
    if (BOOKKEEPING.has(k)) continue;
    const a = change.original?.[k];
    const b = change.modified?.[k];
    if (Object.is(a, b)) continue;
    if (typeof a === 'string' && typeof b === 'string' && (a.includes('\n') || b.includes('\n')))
      lines += 1 + Math.min(10, a.split('\n').length);
    else if ((a && typeof a === 'object') || (b && typeof b === 'object')) lines += 5;
    else lines += 3;
  }
  return lines;
}
