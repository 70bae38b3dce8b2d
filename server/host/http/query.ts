import { ValidationError } from '../core/errors';
import type { QueryParams } from './routes';

/** How a filter parameter is read. Values repeated in the query are OR. */
export interface FilterDef {
  type: 'int' | 'string' | 'bool' | 'choice' | 'datetime';
  choices?: readonly string[];
  description?: string;
  /** Accepts `me` for the caller's id (int filters on users). */
  allowMe?: boolean;
}
export type FilterValue = string | number | boolean;
export type ParsedFilters = Record<string, FilterValue[]>;

export const RESERVED_PARAMS = ['limit', 'offset', 'ordering', 'brief', 'format'] as const;

function parseOne(name: string, def: FilterDef, raw: string, meId: number | null): FilterValue {
  switch (def.type) {
    case 'int': {
      if (def.allowMe && raw === 'me') {
        if (meId === null) throw ValidationError.field(name, '"me" needs a signed-in caller.');
        return meId;
      }
      if (!/^-?\d+$/.test(raw)) throw ValidationError.field(name, `"${raw}" is not a valid integer.`);
      return Number.parseInt(raw, 10);
    }
    case 'bool': {
      const v = raw.toLowerCase();
      if (['true', '1', 'yes'].includes(v)) return true;
      if (['false', '0', 'no'].includes(v)) return false;
      throw ValidationError.field(name, `"${raw}" is not a valid boolean (use true or false).`);
    }
    case 'choice':
      if (!def.choices?.includes(raw)) {
        throw ValidationError.field(name, `"${raw}" is not a valid choice (expected one of: ${def.choices?.join(', ')}).`);
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
  for (const [name, def] of Object.entries(defs)) {
    const raws = query[name];
    if (!raws || raws.length === 0) continue;
    parsed[name] = raws.flatMap((r) => (def.type === 'string' ? [r] : r.split(',').filter((p) => p !== ''))).map((r) => parseOne(name, def, r, meId));
  }
  return parsed;
}

export interface Page {
  limit: number;
  offset: number;
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

export interface OrderBy {
  field: string;
  desc: boolean;
}

/** `ordering=field` or `-field`, comma-separated; only declared fields are accepted. */
export function parseOrdering(query: QueryParams, allowed: readonly string[], fallback: OrderBy[] = [{ field: 'id', desc: false }]): OrderBy[] {
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
export function envelope<T>(items: T[], count: number, page: Page, url: URL): { count: number; next: string | null; previous: string | null; results: T[] } {
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
