import { isUtf8 } from 'node:buffer';
import { ValidationError } from '../core/errors';
import type { QueryParams } from './routes';

/**
 * Limits every request is held to before any route sees it. A request outside them is a 400
 * naming the problem; nothing recursive ever walks a body deeper than `MAX_JSON_DEPTH`.
 */
export const INPUT_LIMITS = {
  /** Objects and arrays nested in a JSON body, counting the body itself. */
  maxJsonDepth: 100,
  /** Items in any one array of a JSON body. */
  maxArrayItems: 10_000,
  /** Characters of any one object key in a JSON body. */
  maxKeyLength: 200,
  /** Characters of any one string in a JSON body (the contract's limit of text fields). */
  maxStringLength: 65_536,
} as const;

/**
 * Object keys refused anywhere in a body: `__proto__` is the one key a JavaScript object
 * cannot hold as ordinary data (assigning it changes the object's prototype). Every other
 * key (`constructor`, `prototype`, `toString`, ...) is kept as data.
 */
export const REFUSED_KEYS: readonly string[] = ['__proto__'];

function pathText(path: readonly (string | number)[]): string {
  return path.length === 0 ? 'non_field_errors' : path.map(String).join('.');
}

/**
 * A `\ud800` escape without its pair parses into a string no UTF-8 can hold: PostgreSQL refuses
 * it as JSON, so it is refused at the door, on both databases.
 */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATE_MESSAGE = 'Text must be valid Unicode: a lone surrogate escape (\\ud800-\\udfff) was sent.';

/**
 * Checks a parsed JSON body against `INPUT_LIMITS` and `REFUSED_KEYS`, iteratively (a hostile
 * nesting depth cannot exhaust the stack here). Throws a 400 naming the first offending place.
 */
export function checkJsonBody(body: unknown): void {
  interface Node {
    value: unknown;
    depth: number;
    parent: Node | null;
    key: string | number | null;
  }
  const pathOf = (node: Node | null): Array<string | number> => {
    const out: Array<string | number> = [];
    for (let n = node; n && n.key !== null; n = n.parent) out.unshift(n.key);
    return out;
  };
  const stack: Node[] = [{ value: body, depth: 1, parent: null, key: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const value = node.value;
    if (typeof value === 'string' && value.length > INPUT_LIMITS.maxStringLength) {
      throw ValidationError.field(
        pathText(pathOf(node)),
        `At most ${INPUT_LIMITS.maxStringLength} characters; ${value.length} were sent.`,
      );
    }
    if (typeof value === 'string' && LONE_SURROGATE.test(value))
      throw ValidationError.field(pathText(pathOf(node)), LONE_SURROGATE_MESSAGE);
    if (value === null || typeof value !== 'object') continue;
    if (node.depth > INPUT_LIMITS.maxJsonDepth) {
      throw ValidationError.field(
        pathText(pathOf(node).slice(0, 1)),
        `Nested deeper than ${INPUT_LIMITS.maxJsonDepth} levels of objects and lists.`,
      );
    }
    if (Array.isArray(value)) {
      if (value.length > INPUT_LIMITS.maxArrayItems) {
        throw ValidationError.field(
          pathText(pathOf(node)),
          `A list holds at most ${INPUT_LIMITS.maxArrayItems} items; ${value.length} were sent.`,
        );
      }
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], depth: node.depth + 1, parent: node, key: i });
      continue;
    }
    for (const key of Object.keys(value)) {
      if (REFUSED_KEYS.includes(key))
        throw ValidationError.field(pathText([...pathOf(node), key]), `"${key}" is not allowed as a key.`);
      if (LONE_SURROGATE.test(key)) throw ValidationError.field(pathText(pathOf(node)), LONE_SURROGATE_MESSAGE);
      if (key.length > INPUT_LIMITS.maxKeyLength) {
        throw ValidationError.field(
          pathText(pathOf(node)),
          `A key is at most ${INPUT_LIMITS.maxKeyLength} characters long.`,
        );
      }
      stack.push({ value: (value as Record<string, unknown>)[key], depth: node.depth + 1, parent: node, key });
    }
  }
}

/** An error body-parser passes on from `verify` (status 400, named type). */
class BodyEncodingError extends Error {
  readonly status = 400;
  readonly type = 'entity.encoding.invalid';
}

/** `verify` for the JSON parser: a body that is not valid UTF-8 is a 400, not silently repaired. */
export function requireUtf8(_req: unknown, _res: unknown, buf: Buffer): void {
  if (!isUtf8(buf)) throw new BodyEncodingError('The request body is not valid UTF-8.');
}

function decodeComponent(raw: string): string | null {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * The query string as `{name: [values]}` (a null-prototype record: any name is plain data).
 * A name or value that is not valid percent-encoded UTF-8, or the name `__proto__`, is a 400.
 */
export function parseQueryString(search: string): QueryParams {
  const out: QueryParams = Object.create(null) as QueryParams;
  const text = search.startsWith('?') ? search.slice(1) : search;
  if (text === '') return out;
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    const name = decodeComponent(rawName);
    if (name === null)
      throw ValidationError.field(
        'query',
        `The parameter name "${rawName.slice(0, 50)}" is not valid percent-encoded UTF-8.`,
      );
    const value = decodeComponent(rawValue);
    if (value === null) throw ValidationError.field(name, 'The value is not valid percent-encoded UTF-8.');
    if (REFUSED_KEYS.includes(name)) throw ValidationError.field(name, `"${name}" is not allowed as a parameter name.`);
    (out[name] ??= []).push(value);
  }
  return out;
}

/** A parameter a route takes once, given more than once, is a 400 naming it. */
export function requireSingle(query: QueryParams, names: Iterable<string>): void {
  for (const name of names) {
    const values = query[name];
    if (values && values.length > 1)
      throw ValidationError.field(name, `Given ${values.length} times; this parameter takes one value.`);
  }
}
