import { ValidationError } from '../core/errors';
import type { ApiObject } from './resource';
import { RESERVED_PARAMS, type OrderBy } from './query';
import type { QueryParams } from './routes';
import { ATTRIBUTE_NAME } from '../objects/attributes';

/**
 * Filters of a source-of-truth list: `id` (integers), `q` (case-insensitive substring of
 * `name`) and `<attr>=value` for any other parameter, compared as text. A repeated
 * parameter is OR; different parameters are AND.
 */
export interface ObjectFilters {
  ids: number[] | null;
  q: string[] | null;
  fields: Record<string, string[]>;
}

export function parseObjectFilters(query: QueryParams): ObjectFilters {
  const filters: ObjectFilters = { ids: null, q: null, fields: Object.create(null) as Record<string, string[]> };
  for (const [name, values] of Object.entries(query)) {
    if (name !== 'q' && (RESERVED_PARAMS as readonly string[]).includes(name)) continue;
    if (name === 'id') {
      filters.ids = values
        .flatMap((v) => v.split(','))
        .filter((v) => v !== '')
        .map((v) => {
          if (!/^\d+$/.test(v)) throw ValidationError.field('id', `"${v}" is not a valid integer.`);
          return Number.parseInt(v, 10);
        });
    } else if (name === 'q') {
      filters.q = values.map((v) => v.toLowerCase());
    } else {
      if (!ATTRIBUTE_NAME.test(name)) throw ValidationError.field(name, 'is not a valid attribute name.');
      filters.fields[name] = values;
    }
  }
  return filters;
}

/** A value as text: lists match on any element, related objects by their id. */
function valueMatches(value: unknown, wanted: string): boolean {
  if (Array.isArray(value)) return value.some((v) => valueMatches(v, wanted));
  if (value === undefined) return false;
  if (value === null) return wanted === 'null';
  if (typeof value === 'object') {
    if ('id' in value) return String((value as { id: unknown }).id) === wanted;
    return JSON.stringify(value) === wanted;
  }
  return String(value) === wanted;
}

export function matchesObjectFilters(obj: ApiObject, filters: ObjectFilters): boolean {
  if (filters.ids && !filters.ids.includes(obj.id)) return false;
  if (filters.q) {
    const name =
      typeof obj.name === 'string'
        ? obj.name.toLowerCase()
        : obj.name === undefined || obj.name === null
          ? ''
          : String(obj.name).toLowerCase();
    if (!filters.q.some((q) => name.includes(q))) return false;
  }
  return Object.entries(filters.fields).every(([field, wanted]) =>
    wanted.some((w) => valueMatches(Object.hasOwn(obj, field) ? obj[field] : undefined, w)),
  );
}

/** `ordering=field` or `-field`, comma-separated, on any field of the objects (default: id). */
export function parseObjectOrdering(query: QueryParams): OrderBy[] {
  const raw = query.ordering?.[0];
  if (!raw) return [{ field: 'id', desc: false }];
  return raw.split(',').map((part) => {
    const desc = part.startsWith('-');
    const field = desc ? part.slice(1) : part;
    if (!ATTRIBUTE_NAME.test(field)) throw ValidationError.field('ordering', `cannot order by "${field}".`);
    return { field, desc };
  });
}
