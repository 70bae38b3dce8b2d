import { ValidationError } from '../core/errors';
import type { QueryParams } from './routes';

import type { FilterDef, FilterValue, OrderBy, Page, ParsedFilters } from '../db/list';

export type { FilterDef, FilterValue, OrderBy, Page, ParsedFilters };

/** Parameters every list accepts besides its filters. */
export const RESERVED_PARAMS = ['limit', 'offset', 'ordering', 'q', 'brief', 'fields', 'format'] as const;

/** 400 naming the first query parameter that is neither reserved nor one of `known`. */
export function rejectUnknownParams(query: QueryParams, known: Iterable<string>): void {
  rejectOutside(query, new Set<string>([...RESERVED_PARAMS, ...known]));
}

function rejectOutside(query: QueryParams, allowed: ReadonlySet<string>): void {
  for (const name of Object.keys(query)) {
    if (!allowed.has(name)) throw ValidationError.field(name, 'is not a filter of this list.');
  }
}

/** What a table of filters allows, and each filter's place in it. */
interface FilterIndex {
  allowed: ReadonlySet<string>;
  place: ReadonlyMap<string, number>;
}

/**
 * Per table of filters (a list's are fixed once the service is built), worked out at its first
 * use: a query is then checked and parsed by the parameters it names, not by every filter.
 */
const filterIndexes = new WeakMap<Record<string, FilterDef>, FilterIndex>();

function filterIndex(defs: Record<string, FilterDef>): FilterIndex {
  let index = filterIndexes.get(defs);
  if (!index) {
    const names = Object.keys(defs);
    index = {
      allowed: new Set<string>([...RESERVED_PARAMS, ...names]),
      place: new Map(names.map((name, i) => [name, i])),
    };
    filterIndexes.set(defs, index);
  }
  return index;
}

/** `q`: free-text terms (a repeated `q` gives several terms; each must match). */
export function parseSearch(query: QueryParams): string[] {
  return (query.q ?? []).map((t) => t.trim()).filter((t) => t !== '');
}

/** `brief=true` and `fields=a,b`: how much of each object an answer shows. */
export interface Shape {
  brief: boolean;
  fields: string[] | null;
}

export function parseShape(query: QueryParams): Shape {
  const rawBrief = query.brief?.[0];
  let brief = false;
  if (rawBrief !== undefined && rawBrief !== '') {
    const v = rawBrief.toLowerCase();
    if (['true', '1', 'yes'].includes(v)) brief = true;
    else if (!['false', '0', 'no'].includes(v))
      throw ValidationError.field('brief', `"${rawBrief}" is not a valid boolean (use true or false).`);
  }
  const raw = query.fields;
  const fields =
    raw === undefined
      ? null
      : raw
          .flatMap((f) => f.split(','))
          .map((f) => f.trim())
          .filter((f) => f !== '');
  for (const f of fields ?? []) {
    if (!/^[a-z_][a-z0-9_]*$/.test(f)) throw ValidationError.field('fields', `"${f}" is not a field name.`);
  }
  return { brief, fields: fields && fields.length > 0 ? fields : null };
}

/** An object as `brief` (id, url, display) or with only the named `fields` (unknown names are left out). */
export function shapeObject<T extends Record<string, unknown>>(obj: T, shape: Shape): Record<string, unknown> {
  if (shape.fields) {
    const out: Record<string, unknown> = {};
    for (const f of shape.fields) if (Object.prototype.hasOwnProperty.call(obj, f)) out[f] = obj[f];
    return out;
  }
  if (shape.brief) {
    const out: Record<string, unknown> = { id: obj.id };
    if ('url' in obj) out.url = obj.url;
    out.display = obj.display;
    return out;
  }
  return obj;
}

function parseOne(name: string, def: FilterDef, raw: string, meId: number | null): FilterValue {
  switch (def.type) {
    case 'int': {
      if (def.allowMe && raw === 'me') {
        if (meId === null) throw ValidationError.field(name, '"me" needs a signed-in caller.');
        return meId;
      }
      if (!/^-?\d+$/.test(raw)) throw ValidationError.field(name, `"${raw}" is not a valid integer.`);
      const value = Number.parseInt(raw, 10);
      // Beyond 2^53 a number is no longer exact, and beyond 64 bits PostgreSQL refuses it: one answer on both databases.
      if (!Number.isSafeInteger(value))
        throw ValidationError.field(
          name,
          `"${raw.slice(0, 40)}" is out of range (at most ${Number.MAX_SAFE_INTEGER} either way).`,
        );
      return value;
    }
    case 'bool': {
      const v = raw.toLowerCase();
      if (['true', '1', 'yes'].includes(v)) return true;
      if (['false', '0', 'no'].includes(v)) return false;
      throw ValidationError.field(name, `"${raw}" is not a valid boolean (use true or false).`);
    }
    case 'choice':
      if (!def.choices?.includes(raw)) {
        throw ValidationError.field(
          name,
          `"${raw}" is not a valid choice (expected one of: ${def.choices?.join(', ')}).`,
        );
      }
      return raw;
    case 'datetime':
      if (Number.isNaN(Date.parse(raw))) throw ValidationError.field(name, `"${raw}" is not a valid date-time.`);
      return new Date(raw).toISOString();
    case 'string':
      return raw;
  }
}

/** Parses the declared filters out of a query; an unknown choice or a non-integer id is a 400 naming the filter. */
export function parseFilters(query: QueryParams, defs: Record<string, FilterDef>, meId: number | null): ParsedFilters {
  const parsed: ParsedFilters = {};
  const { place } = filterIndex(defs);
  // The filters the query names, in the table's order (the first bad one is the one named).
  const named = Object.keys(query).filter((name) => place.has(name));
  if (named.length > 1) named.sort((a, b) => place.get(a)! - place.get(b)!);
  for (const name of named) {
    const def = defs[name]!;
    const raws = query[name];
    if (!raws || raws.length === 0) continue;
    parsed[name] = raws
      .flatMap((r) => (def.type === 'string' ? [r] : r.split(',').filter((p) => p !== '')))
      .map((r) => parseOne(name, def, r, meId));
  }
  return parsed;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

function intParam(query: QueryParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query[name]?.[0];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw ValidationError.field(name, `"${raw}" is not a valid integer.`);
  const n = Number.parseInt(raw, 10);
  if (n < min) throw ValidationError.field(name, `must be at least ${min}.`);
  return Math.min(n, max);
}

export function parsePage(query: QueryParams): Page {
  return {
    limit: intParam(query, 'limit', DEFAULT_LIMIT, 0, MAX_LIMIT) || DEFAULT_LIMIT,
    offset: intParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** `ordering=field` or `-field`, comma-separated; only declared fields are accepted. */
export function parseOrdering(
  query: QueryParams,
  allowed: readonly string[],
  fallback: OrderBy[] = [{ field: 'id', desc: false }],
): OrderBy[] {
  const raw = query.ordering?.[0];
  if (!raw) return fallback;
  return raw.split(',').map((part) => {
    const desc = part.startsWith('-');
    const field = desc ? part.slice(1) : part;
    if (!allowed.includes(field)) {
      throw ValidationError.field('ordering', `cannot order by "${field}" (allowed: ${allowed.join(', ')}).`);
    }
    return { field, desc };
  });
}

/** Builds the list envelope with `next`/`previous` links. */
export function envelope<T>(
  items: T[],
  count: number,
  page: Page,
  url: URL,
): { count: number; next: string | null; previous: string | null; results: T[] } {
  const link = (offset: number): string => {
    const u = new URL(url.toString());
    u.searchParams.set('limit', String(page.limit));
    if (offset > 0) u.searchParams.set('offset', String(offset));
    else u.searchParams.delete('offset');
    return u.toString();
  };
  return {
    count,
    next: page.offset + page.limit < count ? link(page.offset + page.limit) : null,
    previous: page.offset > 0 ? link(Math.max(0, page.offset - page.limit)) : null,
    results: items,
  };
}

/** Orders and pages plain objects in memory (used when permission constraints filter in code). */
export function sortObjects<T extends Record<string, unknown>>(items: T[], ordering: OrderBy[]): T[] {
  return [...items].sort((a, b) => {
    for (const { field, desc } of ordering) {
      const x = a[field] as string | number | null | undefined;
      const y = b[field] as string | number | null | undefined;
      if (x === y) continue;
      if (x === null || x === undefined) return desc ? 1 : -1;
      if (y === null || y === undefined) return desc ? -1 : 1;
      const c = x < y ? -1 : 1;
      return desc ? -c : c;
    }
    return 0;
  });
}

/**
 * A list kept in memory (object types, a caller's tokens: a few dozen items): `q` over the
 * given text fields, ordering, paging and the `brief`/`fields` shape, as the declared lists do.
 */
export function pageInMemory<T extends Record<string, unknown>>(
  items: T[],
  options: { query: QueryParams; url: URL; ordering: OrderBy[]; text: (item: T) => string[] },
): { count: number; next: string | null; previous: string | null; results: Record<string, unknown>[] } {
  const terms = parseSearch(options.query).map((t) => t.toLowerCase());
  const shape = parseShape(options.query);
  const page = parsePage(options.query);
  const found = sortObjects(
    items.filter((item) => terms.every((t) => options.text(item).some((v) => v.toLowerCase().includes(t)))),
    options.ordering,
  );
  return envelope(
    found.slice(page.offset, page.offset + page.limit).map((o) => shapeObject(o, shape)),
    found.length,
    page,
    options.url,
  );
}

/** What a list's query asks for, read once for every list: its filters (after refusing unknown parameters), ordering, `q`, shape and page. */
export function parseListQuery(
  query: QueryParams,
  list: { filters: Record<string, FilterDef>; ordering: readonly string[]; defaultOrdering?: OrderBy[] },
  meId: number | null,
): { filters: ParsedFilters; ordering: OrderBy[]; search: string[]; shape: Shape; page: Page } {
  rejectOutside(query, filterIndex(list.filters).allowed);
  return {
    filters: parseFilters(query, list.filters, meId),
    ordering: parseOrdering(query, list.ordering, list.defaultOrdering),
    search: parseSearch(query),
    shape: parseShape(query),
    page: parsePage(query),
  };
}
