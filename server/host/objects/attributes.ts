import { isDeepStrictEqual } from 'node:util';

/** The free-form attributes of a source-of-truth object (everything but the read-only fields). */
export type Attributes = Record<string, unknown>;

/** Fields the service computes; a body naming them is accepted and they are ignored. */
export const READ_ONLY_FIELDS = ['id', 'url', 'display', 'created', 'last_updated'] as const;

/** Attribute names are identifiers, so they work as filters and in dotted condition paths. */
export const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The body without the read-only fields. */
export function writableAttributes(body: Attributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(body)) {
    if (!(READ_ONLY_FIELDS as readonly string[]).includes(key)) out[key] = value;
  }
  return out;
}

/** `name` when present, else "<Type> <id>" (e.g. "Device 12"). */
export function displayOf(typeDisplay: string, id: number, attrs: Attributes | null): string {
  const name = attrs?.name;
  if (name !== undefined && name !== null && name !== '') return typeof name === 'string' ? name : JSON.stringify(name);
  return `${typeDisplay} ${id}`;
}

export function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}

export function sameAttributes(a: Attributes | null, b: Attributes | null): boolean {
  return isDeepStrictEqual(a, b);
}

/** Names of the attributes whose values differ between two states (a missing key counts as a difference), sorted. */
export function changedAttributes(before: Attributes | null, after: Attributes | null): string[] {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  return [...keys].filter((k) => !sameValue(before?.[k], after?.[k])).sort();
}

/** `base` with the attributes `changes` holds for the named keys (a key missing from `changes` is removed). */
export function withAttributesOf(base: Attributes, changes: Attributes, keys: string[]): Attributes {
  const out: Attributes = { ...base };
  for (const key of keys) {
    if (Object.hasOwn(changes, key)) out[key] = changes[key];
    else delete out[key];
  }
  return out;
}

export function parseAttributes(text: string | null): Attributes | null {
  if (text === null) return null;
  return JSON.parse(text) as Attributes;
}
