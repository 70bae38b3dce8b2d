// A branch's objects as documents of the `change-control` scheme, writable where the user may
// write: the paths (`/branches/<branch>/<object type>/<name>.yaml`), the file name of each
// object (its name when that is unique and usable as a file name, else its id beside it), the
// YAML text of an object and back, the problems of a text and of a refused save as lines, the
// template of a new object, and the version clock that tells VS Code a document changed. No VS
// Code here: URIs are handled as their paths and queries.
import type * as Yaml from 'yaml';
import { attributeSpans, documentLabel, lineOfAttribute, serializeState } from './change-documents';

/** The YAML library, loaded when a document is first written or read: activation does without it. */
const yaml = (): typeof Yaml => require('yaml') as typeof Yaml;

/** The first segment of every branch document's path. */
export const BRANCHES_SEGMENT = 'branches';

/** The fields the service computes: shown by the API, never part of a document. */
export const COMPUTED_FIELDS = ['id', 'url', 'display', 'created', 'last_updated'] as const;
/** A top-level attribute name, as the object endpoints accept them. */
export const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const OBJECT_TYPE = /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/;

/** Which version of an object a document shows: the branch's (editable), or read-only snapshots. */
export type ObjectVersion = 'branch' | 'branch-now' | 'main';

/** How a file names its object: by id, or by its name (looked up in the branch). */
export type ObjectFile = { id: number; label: string | null } | { id: null; name: string };

export type BranchDocumentRef =
  | { kind: 'root' }
  | { kind: 'branch'; branch: string }
  | { kind: 'type'; branch: string; objectType: string }
  | { kind: 'object'; branch: string; objectType: string; file: ObjectFile; version: ObjectVersion }
  | { kind: 'new'; branch: string; objectType: string; key: string };

export interface DocumentAddress {
  path: string;
  query: string;
}

/** A path segment for any text: `%` and `/` escaped, so that a branch named `a/b` stays one segment. */
export function encodeSegment(text: string): string {
  return text.replace(/%/g, '%25').replace(/\//g, '%2F');
}

export function decodeSegment(segment: string): string {
  return segment.replace(/%2F/gi, '/').replace(/%25/g, '%');
}

export function isBranchPath(path: string): boolean {
  return path === `/${BRANCHES_SEGMENT}` || path.startsWith(`/${BRANCHES_SEGMENT}/`);
}

/** The folder of a branch (a workspace folder, or the root of the Branch Objects view). */
export function branchFolder(branch: string): DocumentAddress {
  return { path: `/${BRANCHES_SEGMENT}/${encodeSegment(branch)}`, query: '' };
}

export function typeFolder(branch: string, objectType: string): DocumentAddress {
  return { path: `${branchFolder(branch).path}/${objectType}`, query: '' };
}

export function objectDocument(
  branch: string,
  objectType: string,
  fileName: string,
  version: ObjectVersion = 'branch',
): DocumentAddress {
  return {
    path: `${typeFolder(branch, objectType).path}/${fileName}`,
    query: version === 'branch' ? '' : `version=${version}`,
  };
}

/** A new object's document, before it is saved: `…/<type>/New <Type>.yaml?new=<key>`. */
export function newObjectDocument(branch: string, objectType: string, display: string, key: string): DocumentAddress {
  return {
    path: `${typeFolder(branch, objectType).path}/New ${documentLabel(display, 'object')}.yaml`,
    query: `new=${key}`,
  };
}

const positiveInt = (s: string | undefined): number | null => (s && /^[1-9][0-9]{0,15}$/.test(s) ? Number(s) : null);

/** What a file name says of its object: `12.yaml` and `sw1 (12).yaml` name id 12, `sw1.yaml` the object named sw1. */
export function parseObjectFileName(fileName: string): ObjectFile | null {
  if (!fileName.endsWith('.yaml') || fileName.length <= 5) return null;
  const stem = fileName.slice(0, -5);
  const byId = positiveInt(stem);
  if (byId !== null) return { id: byId, label: null };
  const labelled = /^(.*) \(([1-9][0-9]{0,15})\)$/.exec(stem);
  if (labelled) return { id: Number(labelled[2]), label: labelled[1]! };
  return { id: null, name: stem };
}

/** What a document of the branch namespace is, or null (not ours, or malformed). */
export function parseBranchAddress(address: DocumentAddress): BranchDocumentRef | null {
  if (!isBranchPath(address.path)) return null;
  const parts = address.path.split('/').slice(2);
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0) return address.query === '' ? { kind: 'root' } : null;
  if (parts.some((p) => p === '')) return null;
  const branch = decodeSegment(parts[0]!);
  if (parts.length === 1) return address.query === '' ? { kind: 'branch', branch } : null;
  const objectType = parts[1]!;
  if (!OBJECT_TYPE.test(objectType)) return null;
  if (parts.length === 2) return address.query === '' ? { kind: 'type', branch, objectType } : null;
  if (parts.length !== 3) return null;
  const fresh = /^new=([A-Za-z0-9-]{1,64})$/.exec(address.query);
  if (fresh) return parts[2]!.endsWith('.yaml') ? { kind: 'new', branch, objectType, key: fresh[1]! } : null;
  const version = address.query === '' ? 'branch' : /^version=(branch-now|main)$/.exec(address.query)?.[1];
  if (!version) return null;
  const file = parseObjectFileName(parts[2]!);
  return file ? { kind: 'object', branch, objectType, file, version: version as ObjectVersion } : null;
}

/** An object as a listing shows it: its id and name (`name` attribute; may be anything). */
export interface NamedObject {
  id: number;
  name?: unknown;
}

/** The object's name when it can be a file name as it is (and cannot be read as an id). */
export function bareName(obj: NamedObject): string | null {
  if (typeof obj.name !== 'string' || obj.name === '') return null;
  const name = obj.name;
  if (documentLabel(name, '') !== name || /^[1-9][0-9]*$/.test(name) || /\(\d+\)$/.test(name)) return null;
  return name;
}

/**
 * The file name of an object: `<name>.yaml` when its name is usable and no other object of the
 * type is known to share it (`shared`); otherwise `<name> (<id>).yaml`, or `<id>.yaml` for an
 * object without a name.
 */
export function objectFileName(obj: NamedObject, shared = false): string {
  const bare = bareName(obj);
  if (bare !== null && !shared) return `${bare}.yaml`;
  const label = typeof obj.name === 'string' && obj.name !== '' ? documentLabel(obj.name, '') : '';
  return label ? `${label} (${obj.id}).yaml` : `${obj.id}.yaml`;
}

/**
 * File names for one page of objects listed in name order: a name shared with a neighbour (in
 * the page, or the objects just before and after it, `around`) takes the id beside it.
 */
export function pageFileNames(
  page: readonly NamedObject[],
  around: { before?: NamedObject; after?: NamedObject } = {},
): string[] {
  const counts = new Map<string, number>();
  for (const o of [around.before, ...page, around.after]) {
    if (!o) continue;
    const bare = bareName(o);
    if (bare !== null) counts.set(bare, (counts.get(bare) ?? 0) + 1);
  }
  return page.map((o) => {
    const bare = bareName(o);
    return objectFileName(o, bare !== null && (counts.get(bare) ?? 0) > 1);
  });
}

// ---------------------------------------------------------------- the text of an object

/** An object's attributes as the API shows the object, without the computed fields. */
export function attributesOf(apiObject: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(apiObject))
    if (!(COMPUTED_FIELDS as readonly string[]).includes(key)) out[key] = value;
  return out;
}

/** The text of an object's document: its attributes as YAML, keys sorted (as the review documents show them). */
export function objectText(apiObject: Record<string, unknown>): string {
  return serializeState(attributesOf(apiObject)) || '{}\n';
}

/** One problem of a document, on a line (0-based). */
export interface DocumentProblem {
  line: number;
  message: string;
  severity: 'error' | 'warning';
}

export type ParsedDocument =
  | { ok: true; attrs: Record<string, unknown>; warnings: DocumentProblem[] }
  | { ok: false; problems: DocumentProblem[] };

/**
 * A document's text as the attributes to write: a YAML mapping of attribute names (identifiers);
 * an empty text is no attribute at all. The computed fields are dropped with a warning; YAML
 * errors, another top-level shape and bad names are errors on their lines.
 */
export function parseObjectText(text: string): ParsedDocument {
  if (!text.trim()) return { ok: true, attrs: {}, warnings: [] };
  const { LineCounter, isMap, isPair, isScalar, parseDocument } = yaml();
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true });
  const lineOf = (offset: number | undefined) => (offset === undefined ? 0 : counter.linePos(offset).line - 1);
  const problems: DocumentProblem[] = doc.errors.map((e) => ({
    line: Math.max(0, (e.linePos?.[0]?.line ?? 1) - 1),
    // The line is the diagnostic's own: the library's "at line 3, column 1:" is left out.
    message: e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''),
    severity: 'error',
  }));
  if (problems.length > 0) return { ok: false, problems };
  if (doc.contents === null) return { ok: true, attrs: {}, warnings: [] };
  if (!isMap(doc.contents))
    return {
      ok: false,
      problems: [
        {
          line: lineOf(doc.contents.range?.[0]),
          message: 'An object is a mapping of attribute names to values.',
          severity: 'error',
        },
      ],
    };
  const warnings: DocumentProblem[] = [];
  for (const pair of doc.contents.items) {
    if (!isPair(pair)) continue;
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    const line = lineOf(isScalar(pair.key) ? pair.key.range?.[0] : undefined);
    if (typeof key !== 'string' || !ATTRIBUTE_NAME.test(key))
      problems.push({
        line,
        message: 'Attribute names are letters, digits and underscores, not starting with a digit.',
        severity: 'error',
      });
    else if ((COMPUTED_FIELDS as readonly string[]).includes(key))
      warnings.push({ line, message: `${key} is computed by the service: it is not saved.`, severity: 'warning' });
  }
  if (problems.length > 0) return { ok: false, problems };
  const attrs = attributesOf(doc.toJS({ maxAliasCount: 100 }) as Record<string, unknown>);
  return { ok: true, attrs, warnings };
}

/**
 * The problems of a refused save (a 400's field errors, or its `detail`) on the lines of the
 * attributes they name; anything else on the first line.
 */
export function problemsOfRefusal(
  text: string,
  refusal: { message: string; fields: Record<string, string[]> },
): DocumentProblem[] {
  const entries = Object.entries(refusal.fields);
  if (entries.length === 0) return [{ line: 0, message: refusal.message, severity: 'error' }];
  let spans: ReturnType<typeof attributeSpans> = [];
  try {
    spans = attributeSpans(text);
  } catch {
    /* the text no longer parses: the first line then */
  }
  return entries.flatMap(([field, messages]) => {
    const { line, exact } = lineOfAttribute(spans, field);
    return messages.map((m) => ({
      line: exact ? line : 0,
      message: exact ? m : `${field}: ${m}`,
      severity: 'error' as const,
    }));
  });
}

// ---------------------------------------------------------------- new objects

/**
 * The fields NetBox requires of each object type of the default catalogue, with the value a
 * template starts from (null: to fill in). The service stores free-form attributes; the
 * extension asks for these before it creates an object, so that what reaches main is complete.
 */
export const REQUIRED_FIELDS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  'dcim.site': { name: null, slug: null, status: 'active' },
  'dcim.rack': { name: null, site: null, status: 'active' },
  'dcim.device': { name: null, device_type: null, role: null, site: null, status: 'active' },
  'dcim.interface': { device: null, name: null, type: null },
  'dcim.cable': { a_terminations: [], b_terminations: [], status: 'connected' },
  'ipam.vrf': { name: null },
  'ipam.prefix': { prefix: null, status: 'active' },
  'ipam.ipaddress': { address: null, status: 'active' },
  'ipam.vlan': { vid: null, name: null, status: 'active' },
  'circuits.circuit': { cid: null, provider: null, type: null, status: 'active' },
  'tenancy.tenant': { name: null, slug: null },
};

/** Required fields of a type: those above, or a name for a type the table does not know. */
export function requiredFields(objectType: string): Readonly<Record<string, unknown>> {
  return REQUIRED_FIELDS[objectType] ?? { name: null };
}

/** The document a new object starts from: a comment saying what saving does, then its required fields. */
export function newObjectTemplate(objectType: string, display: string, branch: string): string {
  const fields = serializeState({ ...requiredFields(objectType) });
  return `# A new ${display} in branch ${branch}: fill in the fields, then save to create it there.\n${fields}`;
}

/** The required fields a new object's attributes leave empty (missing, null, blank or an empty list), on their lines. */
export function missingRequired(objectType: string, text: string, attrs: Record<string, unknown>): DocumentProblem[] {
  const empty = (v: unknown) =>
    v === undefined || v === null || (typeof v === 'string' && !v.trim()) || (Array.isArray(v) && v.length === 0);
  let spans: ReturnType<typeof attributeSpans> = [];
  try {
    spans = attributeSpans(text);
  } catch {
    /* first line then */
  }
  return Object.keys(requiredFields(objectType))
    .filter((name) => empty(attrs[name]))
    .map((name) => ({
      line: lineOfAttribute(spans, name).exact ? lineOfAttribute(spans, name).line : 0,
      message: `${name} is required to create the object.`,
      severity: 'error' as const,
    }))
    .sort((a, b) => a.line - b.line);
}

// ---------------------------------------------------------------- versions

/**
 * The modification time VS Code is told for each document: it moves forward (at least by one)
 * whenever the text read differs from the one before, and only then, so that VS Code reads a
 * document again exactly when it changed.
 */
export class VersionClock {
  private readonly known = new Map<string, { text: string; mtime: number }>();

  observe(key: string, text: string, now: number): { text: string; mtime: number } {
    const before = this.known.get(key);
    if (before && before.text === text) return before;
    const next = { text, mtime: Math.max(now, (before?.mtime ?? 0) + 1) };
    this.known.set(key, next);
    return next;
  }

  get(key: string): { text: string; mtime: number } | undefined {
    return this.known.get(key);
  }

  forget(key: string): void {
    this.known.delete(key);
  }
}

/** The version of an object a document was read from or last saved as: its text, and its ETag then (null: the service gave none). */
export interface DocumentBase {
  text: string;
  etag: string | null;
}

/**
 * How a save writes. The service is the authority: the save names the version the document was
 * read from (If-Match), and the service refuses it (412) when someone saved a newer one since,
 * in the same transaction as the write. Only a service that gives no ETag leaves the check to
 * the client: the branch's text now is compared with the document's (`saveVerdict`). What the
 * document was read from is not known (a document restored with the window): the user chooses.
 */
export type SavePlan = { kind: 'write'; ifMatch: string } | { kind: 'compare'; base: string } | { kind: 'choose' };

export function savePlan(base: DocumentBase | undefined): SavePlan {
  if (!base) return { kind: 'choose' };
  return base.etag === null ? { kind: 'compare', base: base.text } : { kind: 'write', ifMatch: base.etag };
}

/**
 * After a save refused as stale (412), with the object as the branch shows it now: when its
 * text is still the document's base (someone saved the same attributes, or saved and undid), the
 * save writes over the version now, once; otherwise the user chooses (Compare, Overwrite,
 * Discard), the version now becoming the one a next save names.
 */
export function afterStale(
  base: DocumentBase | undefined,
  current: DocumentBase,
  retried: boolean,
): { kind: 'retry'; ifMatch: string } | { kind: 'choose' } {
  if (!retried && base && current.etag !== null && base.text === current.text)
    return { kind: 'retry', ifMatch: current.etag };
  return { kind: 'choose' };
}

/**
 * Whether a save may write, for a service that gives no ETag: the branch's text now is the one
 * the document was read from (or last saved as). Otherwise someone changed the object in the
 * branch since: the save is refused and the user chooses.
 */
export function saveVerdict(base: string, current: string): 'write' | 'conflict' {
  return base === current ? 'write' : 'conflict';
}
