// VS Code's quick open (Go to File) and Search (Find in Files) over a branch's object documents:
// which objects a query asks the service for, the document paths of what it answers (the same
// paths the branch's folders list, so a result opens the writable document), and the lines of a
// document's text that a search pattern matches. Every search is bounded: a page per object type,
// never a whole type. No VS Code here.
import type { BranchObjectTypeAccess } from '../../contract/api/branching';
import {
  objectDocument,
  objectText,
  pageFileNames,
  parseBranchAddress,
  type DocumentAddress,
  type NamedObject,
} from './branch-documents';

/** Objects of one type a quick open query asks for (by part of the name). */
export const FILE_SEARCH_PER_TYPE = 50;
/** Objects of one type whose text a text search reads beyond those named like the pattern. */
export const TEXT_SEARCH_SCAN_PER_TYPE = 500;
/** Objects of one type named like a text search's pattern that it reads. */
export const TEXT_SEARCH_NAMED_PER_TYPE = 100;

/**
 * Calls the registration of a proposed API: what it answers, or why the editor did not lend it
 * (the function is missing in an editor without the API; it throws where the proposal is not
 * granted to the extension).
 */
export function registerIfLent<T>(register: () => T | undefined): { lent: T } | { refused: string } {
  try {
    const lent = register();
    return lent === undefined ? { refused: 'the editor has no such API' } : { lent };
  } catch (e) {
    return { refused: (e instanceof Error ? e.message : String(e)).split('\n')[0]! };
  }
}

/** The part of the branch namespace a workspace folder shows: a branch, or one type of it. */
export interface SearchScope {
  branch: string;
  objectType: string | null;
}

/** The scope of a workspace folder's path, or null when it is not a branch's (or a type's) folder. */
export function searchScopeOf(folder: DocumentAddress): SearchScope | null {
  const ref = parseBranchAddress(folder);
  if (ref?.kind === 'branch') return { branch: ref.branch, objectType: null };
  if (ref?.kind === 'type') return { branch: ref.branch, objectType: ref.objectType };
  return null;
}

/** The types a search reads: those the user may see, within the scope. */
export function searchTypes(types: readonly BranchObjectTypeAccess[], scope: SearchScope): BranchObjectTypeAccess[] {
  return types.filter((t) => t.view && (scope.objectType === null || t.object_type === scope.objectType));
}

/**
 * What a quick open pattern asks the service: the text of the name (`q`; the last path segment,
 * without the `.yaml` it may end with) and, when the pattern has a folder part, the part of the
 * type's name it names. Null for a pattern naming nothing.
 */
export function fileQuery(pattern: string): { name: string; typePart: string | null } | null {
  const text = pattern.trim().replace(/\\/g, '/');
  const cut = text.lastIndexOf('/');
  const name = text
    .slice(cut + 1)
    .replace(/\.(y(a(ml?)?)?)?$/i, '')
    .trim();
  const typePart = cut > 0 ? text.slice(0, cut).split('/').filter(Boolean).pop()?.toLowerCase() || null : null;
  if (name === '') return null;
  return { name, typePart };
}

/** The types a quick open pattern's folder part selects (all when it has none). */
export function typesNamed(
  types: readonly BranchObjectTypeAccess[],
  typePart: string | null,
): BranchObjectTypeAccess[] {
  if (typePart === null) return [...types];
  return types.filter((t) => t.object_type.includes(typePart) || t.display.toLowerCase().includes(typePart));
}

/**
 * The document paths of one page of a type's objects listed in name order, asked with one object
 * more than kept: an object whose name another shares takes its id beside it (as the branch's
 * folder names it). Answers the kept objects with their paths.
 */
export function pageDocuments<T extends NamedObject>(
  branch: string,
  objectType: string,
  page: readonly T[],
  kept: number,
): Array<{ object: T; address: DocumentAddress }> {
  const shown = page.slice(0, kept);
  const names = pageFileNames(shown, { after: page[kept] });
  return shown.map((object, i) => ({ object, address: objectDocument(branch, objectType, names[i]!) }));
}

// ---------------------------------------------------------------- text search

/** A text search's query, as VS Code gives it. */
export interface TextQuery {
  pattern: string;
  isRegExp?: boolean;
  isCaseSensitive?: boolean;
  isWordMatch?: boolean;
  isMultiline?: boolean;
}

/** A position in a document's text (0-based line and character). */
export interface TextPosition {
  line: number;
  character: number;
}

/** One match: where it is in the document, and the preview (its lines) with where it is there. */
export interface TextMatch {
  start: TextPosition;
  end: TextPosition;
  preview: string;
  previewStart: TextPosition;
  previewEnd: TextPosition;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The regular expression of a query (global; case-insensitive unless asked; a whole word when
 * asked), or an error message when the pattern is not a valid expression.
 */
export function queryRegExp(query: TextQuery): RegExp | { error: string } {
  const source = query.isRegExp ? query.pattern : escapeRegExp(query.pattern);
  const flags = `g${query.isCaseSensitive ? '' : 'i'}${query.isMultiline ? 'm' : ''}`;
  try {
    const word = (s: string) => `(?<![\\p{L}\\p{N}_])(?:${s})(?![\\p{L}\\p{N}_])`;
    return new RegExp(query.isWordMatch ? word(source) : source, `${flags}u`);
  } catch (e) {
    // Not a Unicode expression (e.g. `\-`, a lone `{`): read as the editor's own search reads it.
    try {
      return new RegExp(query.isWordMatch ? `\\b(?:${source})\\b` : source, flags);
    } catch {
      return { error: (e as Error).message };
    }
  }
}

/**
 * The text the service is asked for (`q`, part of an object's name): the pattern itself when it
 * is plain text (a regular expression without special characters counts), else null.
 */
export function literalOf(query: TextQuery): string | null {
  const text = query.pattern.trim();
  if (text === '' || /[\r\n]/.test(text)) return null;
  if (query.isRegExp && /[\\^$.*+?()[\]{}|]/.test(text)) return null;
  return text;
}

/** Where each line of a text starts (offsets). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function positionAt(starts: readonly number[], offset: number): TextPosition {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, character: offset - starts[lo]! };
}

/**
 * The matches of a regular expression in a text, at most `max`: one line at a time (a match never
 * spans lines) unless the query is multiline. The preview is the lines a match spans, cut to
 * `charsPerLine` characters a line.
 */
export function textMatches(
  text: string,
  re: RegExp,
  max: number,
  charsPerLine = 10_000,
  multiline = false,
): TextMatch[] {
  const out: TextMatch[] = [];
  const starts = lineStarts(text);
  const lineText = (line: number) => {
    const from = starts[line]!;
    const to = line + 1 < starts.length ? starts[line + 1]! - 1 : text.length;
    return text.slice(from, to).replace(/\r$/, '');
  };
  const push = (from: number, to: number) => {
    const start = positionAt(starts, from);
    const end = positionAt(starts, to);
    const lines: string[] = [];
    for (let l = start.line; l <= end.line; l++) lines.push(lineText(l).slice(0, charsPerLine));
    out.push({
      start,
      end,
      preview: lines.join('\n'),
      previewStart: { line: 0, character: Math.min(start.character, charsPerLine) },
      previewEnd: { line: end.line - start.line, character: Math.min(end.character, charsPerLine) },
    });
  };
  const scan = (chunk: string, base: number) => {
    const r = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
    for (let m = r.exec(chunk); m && out.length < max; m = r.exec(chunk)) {
      if (m[0].length === 0) {
        r.lastIndex++;
        continue;
      }
      push(base + m.index, base + m.index + m[0].length);
    }
  };
  if (multiline) scan(text, 0);
  else
    for (let line = 0; line < starts.length && out.length < max; line++) {
      const content = lineText(line);
      if (content !== '') scan(content, starts[line]!);
    }
  return out;
}

/** A page of a type's objects as the service answers it. */
export interface ObjectPage<T> {
  count: number;
  results: T[];
}

/** Reads a page of a type's objects in name order: by part of the name (`q`), or all. */
export type ListObjects<T> = (
  type: BranchObjectTypeAccess,
  query: { q?: string; limit: number },
) => Promise<ObjectPage<T>>;

/** The documents of a branch's objects a query names, at most `maxResults`, and whether that is all of them. */
export async function findDocuments<T extends NamedObject>(
  scope: SearchScope,
  types: readonly BranchObjectTypeAccess[],
  pattern: string,
  maxResults: number,
  list: ListObjects<T>,
  cancelled: () => boolean = () => false,
): Promise<{ found: Array<{ type: BranchObjectTypeAccess; object: T; address: DocumentAddress }>; limitHit: boolean }> {
  const query = fileQuery(pattern);
  if (!query || maxResults <= 0) return { found: [], limitHit: false };
  const perType = Math.min(FILE_SEARCH_PER_TYPE, maxResults);
  let limitHit = false;
  const pages = await Promise.all(
    typesNamed(searchTypes(types, scope), query.typePart).map(async (type) => {
      if (cancelled()) return [];
      const page = await list(type, { q: query.name, limit: perType + 1 });
      if (page.count > perType) limitHit = true;
      return pageDocuments(scope.branch, type.object_type, page.results, perType).map((d) => ({ type, ...d }));
    }),
  );
  const found = pages.flat();
  if (found.length > maxResults) limitHit = true;
  return { found: found.slice(0, maxResults), limitHit };
}

/** One document's matches, as a text search reports them. */
export interface DocumentMatches<T> {
  type: BranchObjectTypeAccess;
  object: T;
  address: DocumentAddress;
  matches: TextMatch[];
}

/**
 * Searches the text of a branch's object documents (the text the documents show), bounded: per
 * type, the objects whose names hold the pattern's text (when it has one) and the first objects
 * by name. Each document found is reported as it is read, and at most `maxResults` matches in
 * all; `limitHit` says whether objects went unread or matches unreported.
 */
export async function searchText<T extends NamedObject & Record<string, unknown>>(
  scope: SearchScope,
  types: readonly BranchObjectTypeAccess[],
  query: TextQuery,
  options: { maxResults: number; charsPerLine?: number },
  list: ListObjects<T>,
  report: (found: DocumentMatches<T>) => void,
  cancelled: () => boolean = () => false,
): Promise<{ limitHit: boolean }> {
  const re = queryRegExp(query);
  if (!(re instanceof RegExp)) throw new Error(`The search pattern is not a valid regular expression: ${re.error}`);
  const literal = literalOf(query);
  const multiline = !!query.isMultiline || /\\n|\n/.test(query.pattern);
  let left = options.maxResults;
  let limitHit = false;
  for (const type of searchTypes(types, scope)) {
    if (cancelled() || left <= 0) break;
    const read = (q: string | undefined, kept: number) =>
      list(type, { q, limit: kept + 1 }).then((page) => ({ page, kept }));
    const pages = await Promise.all([
      ...(literal !== null ? [read(literal, TEXT_SEARCH_NAMED_PER_TYPE)] : []),
      read(undefined, TEXT_SEARCH_SCAN_PER_TYPE),
    ]);
    if (cancelled()) break;
    // Objects beyond the first ones by name are unread; those named like the text are read first.
    if (pages.some(({ page, kept }) => page.count > kept)) limitHit = true;
    const seen = new Set<number>();
    for (const { page, kept } of pages)
      for (const { object, address } of pageDocuments(scope.branch, type.object_type, page.results, kept)) {
        if (seen.has(object.id) || left <= 0) continue;
        seen.add(object.id);
        const matches = textMatches(objectText(object), re, left + 1, options.charsPerLine, multiline);
        if (matches.length === 0) continue;
        if (matches.length > left) limitHit = true;
        const reported = matches.slice(0, left);
        left -= reported.length;
        report({ type, object, address, matches: reported });
      }
  }
  // Every match allowed was reported and the rest went unread: there may be more.
  if (left <= 0) limitHit = true;
  return { limitHit };
}
