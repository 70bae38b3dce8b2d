import type { z } from 'zod';
import { BulkRefused, ValidationError } from '../core/errors';
import { BULK_LIMIT, type BulkBody, type BulkItem } from './routes';
import { zodFieldErrors } from './validation';

/** A positive integer id an item names: what a bulk update or delete finds its object by. */
function itemId(value: unknown): number | string {
  if (value === undefined) return 'This field is required.';
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) return 'A valid integer is required.';
  return value;
}

/**
 * The list body of a bulk write, every item validated: for `create` each item as `item` takes
 * it; for `update` each an object with its `id` and the rest as `item` takes it; for `delete`
 * each `{"id": n}`. An id given twice is refused (one write per object). Any item refused: a
 * 400 with the errors as a list aligned with the items. Not a list, an empty list, or more than
 * `BULK_LIMIT` items: a 400 saying so.
 */
export function parseBulkBody(bulk: BulkBody, raw: unknown): unknown[] {
  if (!Array.isArray(raw)) {
    throw ValidationError.field(
      'non_field_errors',
      bulk.kind === 'delete'
        ? 'Expected a list of objects, each {"id": n}.'
        : 'Expected a list of objects, each with its "id".',
    );
  }
  if (raw.length === 0) throw ValidationError.field('non_field_errors', 'Expected a list of at least one object.');
  if (raw.length > BULK_LIMIT)
    throw new ValidationError(`A bulk write takes at most ${BULK_LIMIT} objects; this one has ${raw.length}.`);
  const errors: Array<Record<string, unknown>> = [];
  const parsed: unknown[] = [];
  const seen = new Set<number>();
  let refused = false;
  const parse = (
    schema: z.ZodType | undefined,
    value: unknown,
  ): { ok: true; value: unknown } | { ok: false; errors: Record<string, string[]> } => {
    if (!schema) return { ok: true, value };
    const result = schema.safeParse(value);
    return result.success ? { ok: true, value: result.data } : { ok: false, errors: zodFieldErrors(result.error) };
  };
  for (const item of raw) {
    if (bulk.kind === 'create') {
      const result = parse(bulk.item, item);
      errors.push(result.ok ? {} : result.errors);
      if (result.ok) parsed.push(result.value);
      else refused = true;
      continue;
    }
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      errors.push({ non_field_errors: ['Expected an object with its "id".'] });
      refused = true;
      continue;
    }
    const { id: rawId, ...rest } = item as Record<string, unknown>;
    const found: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
    const id = itemId(rawId);
    if (typeof id === 'string') found.id = [id];
    else if (seen.has(id)) found.id = ['This object is named more than once in the list.'];
    else seen.add(id);
    let body: unknown = undefined;
    if (bulk.kind === 'update') {
      const result = parse(bulk.item, rest);
      if (result.ok) body = result.value;
      else Object.assign(found, result.errors);
    } else for (const key of Object.keys(rest)) found[key] = ['Unknown field.'];
    errors.push(found);
    if (Object.keys(found).length > 0) refused = true;
    else parsed.push({ id: id as number, body } satisfies BulkItem);
  }
  if (refused) throw new BulkRefused(400, errors);
  return parsed;
}
