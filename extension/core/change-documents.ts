// Changed objects as documents: the URI of each side of a change (scheme `change-control`), its
// text (the object's state as YAML with sorted keys, so the diff editor highlights exactly the
// lines that changed), and the mapping between attributes (dot paths such as `config` or
// `interfaces.0.name`) and lines, both ways. No VS Code here: URIs are handled as their paths and queries.
import { isDeepStrictEqual } from 'node:util';
import type * as Yaml from 'yaml';
import type { ChangeAction, ChangeDiff } from '../../contract/api/branching';

/** The YAML library, loaded when a document is first written or read: activation does without it. */
const yaml = (): typeof Yaml => require('yaml') as typeof Yaml;

export const DOCUMENT_SCHEME = 'change-control';

/**
 * The sides a changed object is shown from: main at the branch's baseline, the branch, main now,
 * and main as the merge would leave it (main now with the branch's changes applied).
 */
export const CHANGE_SIDES = ['original', 'modified', 'current', 'merged'] as const;
export type ChangeSide = (typeof CHANGE_SIDES)[number];

export type DocumentRef =
  | { kind: 'change'; changeRequestId: number; side: ChangeSide; objectType: string; objectId: number; label: string }
  | { kind: 'description'; changeRequestId: number; label: string };

const OBJECT_TYPE = /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/;
const MAX_LABEL = 80;

/** A file-name-safe label for an object (its repr), kept short. */
export function documentLabel(text: string, fallback: string): string {
  const cleaned = text
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '');
  return (cleaned || fallback).slice(0, MAX_LABEL);
}

/** Where a document is: the path and query of a `change-control:` URI. */
export interface DocumentAddress {
  path: string;
  query: string;
}

/**
 * The first segment of a request's documents: what tabs, breadcrumbs and the Comments panel show
 * (never a title: it may change while documents are open).
 */
export function requestSegment(changeRequestId: number): string {
  return `Change request #${changeRequestId}`;
}

/**
 * A side of a changed object, named as people name it:
 * `change-control:/Change request #<request>/<object_type>/<name>.yaml?id=<object_id>&side=<side>`.
 * Both sides share the path (the diff editors show one object, not a rename); the object's id
 * (which keeps two objects of one name apart) and the side are the query.
 */
export function changeDocument(
  changeRequestId: number,
  side: ChangeSide,
  change: Pick<ChangeDiff, 'object_type' | 'object_id' | 'object_repr'>,
): DocumentAddress {
  const label = documentLabel(change.object_repr, `${change.object_type} ${change.object_id}`);
  return {
    path: `/${requestSegment(changeRequestId)}/${change.object_type}/${label}.yaml`,
    query: `id=${change.object_id}&side=${side}`,
  };
}

/** A request's description, editable: `change-control:/Change request #<request>/<title>.md?doc=description`. */
export function descriptionDocument(changeRequestId: number, title: string): DocumentAddress {
  return {
    path: `/${requestSegment(changeRequestId)}/${documentLabel(title, 'Description')}.md`,
    query: 'doc=description',
  };
}

const positiveInt = (s: string | undefined): number | null => (s && /^[1-9][0-9]{0,15}$/.test(s) ? Number(s) : null);
const REQUEST_SEGMENT = /^Change request #([1-9][0-9]{0,15})$/;

/** What a document of the scheme is (from its URI's decoded path and its query), or null for anything else. */
export function parseDocumentAddress(address: DocumentAddress): DocumentRef | null {
  const parts = address.path.split('/');
  if (parts[0] !== '' || parts.length < 3) return null;
  const changeRequestId = positiveInt(REQUEST_SEGMENT.exec(parts[1])?.[1]);
  if (changeRequestId === null) return null;
  if (address.query === 'doc=description') {
    if (parts.length !== 3 || !parts[2].endsWith('.md')) return null;
    return { kind: 'description', changeRequestId, label: parts[2].slice(0, -3) };
  }
  const q = /^id=([^&]+)&side=([a-z]+)$/.exec(address.query);
  if (!q || parts.length !== 4 || !(CHANGE_SIDES as readonly string[]).includes(q[2]) || !OBJECT_TYPE.test(parts[2]))
    return null;
  const objectId = positiveInt(q[1]);
  if (objectId === null || !parts[3].endsWith('.yaml')) return null;
  return {
    kind: 'change',
    changeRequestId,
    side: q[2] as ChangeSide,
    objectType: parts[2],
    objectId,
    label: parts[3].slice(0, -5),
  };
}

/** The key a changed object is known by within a request (viewed marks, URIs). */
export function objectKey(change: Pick<ChangeDiff, 'object_type' | 'object_id'>): string {
  return `${change.object_type}:${change.object_id}`;
}

/** The state a side shows; a create has nothing at the baseline, a delete nothing in the branch. */
export function sideState(
  change: Pick<ChangeDiff, 'action' | 'original' | 'modified' | 'current'>,
  side: ChangeSide,
): Record<string, unknown> | null {
  if (side === 'merged') return mergedState(change);
  return change[side] ?? null;
}

/**
 * Main as the merge would leave the object: main now, with each attribute the branch changed
 * (from its baseline) set to the branch's value. Main's own later changes to other attributes
 * stay, so comparing it with main now shows only what the merge does.
 */
export function mergedState(
  change: Pick<ChangeDiff, 'action' | 'original' | 'modified' | 'current'>,
): Record<string, unknown> | null {
  if (change.action === 'delete') return null;
  if (change.action === 'create' || !change.current) return change.modified ?? null;
  const merged: Record<string, unknown> = { ...change.current };
  const original = change.original ?? {};
  const modified = change.modified ?? {};
  for (const key of new Set([...Object.keys(original), ...Object.keys(modified)])) {
    if (isDeepStrictEqual(original[key], modified[key])) continue;
    if (Object.prototype.hasOwnProperty.call(modified, key)) merged[key] = modified[key];
    else delete merged[key];
  }
  return merged;
}

/** An object's state as YAML, keys sorted at every level, long lines never folded; empty for none. */
export function serializeState(state: Record<string, unknown> | null | undefined): string {
  if (!state) return '';
  if (Object.keys(state).length === 0) return '{}\n';
  const { Document } = yaml();
  return new Document(state, { sortMapEntries: true }).toString({ lineWidth: 0, minContentWidth: 0 });
}

/** One key (or array item) of a YAML document and the lines it spans (0-based, inclusive). */
export interface AttributeSpan {
  path: string;
  depth: number;
  line: number;
  endLine: number;
}

/** Every key path of a YAML text with its lines, in document order. */
export function attributeSpans(text: string): AttributeSpan[] {
  if (!text.trim()) return [];
  const { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } = yaml();
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  const lineOf = (offset: number) => counter.linePos(offset).line - 1;
  const spans: AttributeSpan[] = [];
  const endLineOf = (start: number, node: Yaml.Node | null | undefined): number => {
    const range = node?.range;
    if (!range) return lineOf(start);
    // A block value's end offset sits on the next line's start; its last character does not.
    return Math.max(lineOf(start), lineOf(Math.max(range[0], range[1] - 1)));
  };
  const walk = (node: unknown, prefix: string[]) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair) || !isScalar(pair.key) || !pair.key.range) continue;
        const path = [...prefix, String(pair.key.value)];
        const value = pair.value as Yaml.Node | null;
        spans.push({
          path: path.join('.'),
          depth: path.length,
          line: lineOf(pair.key.range[0]),
          endLine: endLineOf(pair.key.range[0], value ?? pair.key),
        });
        walk(value, path);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        const itemNode = item as Yaml.Node | null;
        if (!itemNode?.range) return;
        const path = [...prefix, String(index)];
        spans.push({
          path: path.join('.'),
          depth: path.length,
          line: lineOf(itemNode.range[0]),
          endLine: endLineOf(itemNode.range[0], itemNode),
        });
        walk(itemNode, path);
      });
    }
  };
  walk(doc.contents, []);
  return spans;
}

/**
 * The line (0-based) a thread on `attribute` sits on: the attribute's key line; when the text
 * lacks it, its nearest parent that the text has; the first line for no attribute.
 */
export function lineOfAttribute(
  spans: readonly AttributeSpan[],
  attribute: string | null,
): { line: number; exact: boolean } {
  if (!attribute) return { line: 0, exact: true };
  const byPath = new Map(spans.map((s) => [s.path, s]));
  const parts = attribute.split('.');
  for (let n = parts.length; n > 0; n -= 1) {
    const span = byPath.get(parts.slice(0, n).join('.'));
    if (span) return { line: span.line, exact: n === parts.length };
  }
  return { line: 0, exact: false };
}

/** The attribute a line stands for: the deepest key path whose lines include it; null outside any. */
export function attributeAtLine(spans: readonly AttributeSpan[], line: number): string | null {
  let best: AttributeSpan | null = null;
  for (const s of spans) {
    if (line < s.line || line > s.endLine) continue;
    if (!best || s.depth > best.depth) best = s;
  }
  return best?.path ?? null;
}

/** Whether a dot path names something in a state (`interfaces.0.name` reads array index 0). */
export function hasAttribute(state: Record<string, unknown> | null | undefined, attribute: string): boolean {
  if (!state) return false;
  let value: unknown = state;
  for (const part of attribute.split('.')) {
    if (value === null || typeof value !== 'object') return false;
    if (!Object.prototype.hasOwnProperty.call(value, part)) return false;
    value = (value as Record<string, unknown>)[part];
  }
  return true;
}

/** How a changed object is decorated: its action, or conflicted when it conflicts with main. */
export const CHANGE_KINDS = ['added', 'modified', 'deleted', 'conflicted'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

const KIND_OF_ACTION = { create: 'added', update: 'modified', delete: 'deleted' } as const satisfies Record<
  ChangeAction,
  ChangeKind
>;

export function changeKind(change: Pick<ChangeDiff, 'action' | 'conflicts'>): ChangeKind {
  return change.conflicts && change.conflicts.length > 0 ? 'conflicted' : KIND_OF_ACTION[change.action];
}

/** Badge, colour (VS Code's own git decoration colours) and words of each kind. */
export const CHANGE_DECORATION = {
  added: { badge: 'A', color: 'gitDecoration.addedResourceForeground', tooltip: 'Created in the branch' },
  modified: { badge: 'M', color: 'gitDecoration.modifiedResourceForeground', tooltip: 'Modified in the branch' },
  deleted: { badge: 'D', color: 'gitDecoration.deletedResourceForeground', tooltip: 'Deleted in the branch' },
  conflicted: { badge: '!', color: 'gitDecoration.conflictingResourceForeground', tooltip: 'Conflicts with main' },
} as const satisfies Record<ChangeKind, { badge: string; color: string; tooltip: string }>;

/** The side a thread of this change is shown on: the branch's, unless the object is deleted or only the baseline has the attribute. */
export function threadSide(
  change: Pick<ChangeDiff, 'action' | 'original' | 'modified'>,
  attribute: string | null,
): ChangeSide {
  if (change.action === 'delete' || !change.modified) return 'original';
  if (attribute && !hasAttribute(change.modified, attribute) && hasAttribute(change.original, attribute))
    return 'original';
  return 'modified';
}

/**
 * The two sides the diff editor compares for a change: the baseline and the branch; or main now
 * and main after the merge (not the branch itself, which would show main's own later changes as
 * if the branch undid them).
 */
export function diffSides(mode: 'change' | 'main'): [ChangeSide, ChangeSide] {
  return mode === 'main' ? ['current', 'merged'] : ['original', 'modified'];
}

/** The one side a created (the branch's) or deleted (the baseline's) object is shown from; null for an update. */
export function singleSide(change: Pick<ChangeDiff, 'action'>): ChangeSide | null {
  return change.action === 'create' ? 'modified' : change.action === 'delete' ? 'original' : null;
}

/** Whether comments may be written on a side (the branch's and the baseline's; not main now or after the merge). */
export function commentableSide(side: ChangeSide): boolean {
  return side === 'original' || side === 'modified';
}

const ACTION_WORD = { create: 'Created', update: 'Modified', delete: 'Deleted' } as const satisfies Record<
  ChangeAction,
  string
>;

/** The diff editor's title. */
export function diffTitle(
  change: Pick<ChangeDiff, 'object_repr' | 'action' | 'conflicts'>,
  mode: 'change' | 'main' = 'change',
): string {
  if (mode === 'main') return `${change.object_repr} (main now ↔ after the merge)`;
  return `${change.object_repr} (${ACTION_WORD[change.action]}${change.conflicts?.length ? ', conflicts with main' : ''})`;
}
