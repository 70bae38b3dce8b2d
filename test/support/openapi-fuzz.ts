/**
 * Requests generated from the service's OpenAPI document: for every path and method, bodies
 * shaped by the documented schema and then bent (wrong types, nulls, extremes, hostile keys,
 * deep nesting, long strings, huge lists, bad UTF-8, wrong content types, duplicate and
 * unknown query parameters, odd branch headers). Seeded: the same seed gives the same requests.
 */

type Json = Record<string, unknown>;

/** A small seeded generator (mulberry32). */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

export interface Operation {
  method: string;
  /** OpenAPI path, e.g. `/api/users/tokens/{id}/`. */
  path: string;
  /** The collection a `{id}` path addresses (`/api/users/tokens/`), or null. */
  collection: string | null;
  parameters: Json[];
  bodySchema: Json | null;
  /** The documented success answer is a stream (`text/event-stream`). */
  streams: boolean;
}

/** Every operation of the document. */
export function operations(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const content = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      const responses = Object.values((op.responses ?? {}) as Record<string, Json>);
      const streams = responses.some((r) => r.content !== undefined && 'text/event-stream' in (r.content as Json));
      const at = path.indexOf('{');
      out.push({
        method: method.toUpperCase(),
        path,
        collection: at < 0 ? null : path.slice(0, at),
        parameters: (op.parameters as Json[] | undefined) ?? [],
        bodySchema: (content?.['application/json']?.schema as Json | undefined) ?? null,
        streams,
      });
    }
  }
  return out;
}

/** One generated request. `body` is sent as-is (already serialized). */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** What was bent, for the failure report. */
  what: string;
}

export interface IdPools {
  /** Ids of objects written before the run, by collection: written to only by requests refused before routing. */
  protectedIds: ReadonlyMap<string, readonly number[]>;
  /** Ids of objects the run created, by collection. */
  createdIds: ReadonlyMap<string, readonly number[]>;
  /** Branches of the run, to send in `X-NetBox-Branch`. */
  branches: readonly string[];
  /** Branches written before the run: sent with reads only. */
  protectedBranches: readonly string[];
}

const HOSTILE_KEYS = [
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'then',
  'length',
];
const STRINGS = [
  '',
  ' ',
  'a',
  'x'.repeat(70_000),
  '\u0000',
  '💥',
  '\ud800',
  'null',
  'true',
  '1',
  '-1',
  'me',
  '$user',
  '../..',
  '%',
  '_',
  '<script>alert(1)</script>',
  'javascript:alert(1)',
  'data:text/html,x',
  'http://',
  'https://example.invalid/x',
  'a.b',
  'dcim.device',
  'dcim.*',
  '2026-11-01T09:00:00Z',
  '9999-12-31T23:59:59Z',
  '0000-00-00',
  'ß'.repeat(300),
];
const NUMBERS = [0, -1, 1, 2, 3, 1.5, -0.5, 1e308, -1e308, 2 ** 53, 2 ** 63, 999_999, 1e-300];

function resolve(doc: Json, schema: Json | undefined): Json {
  let s = schema ?? {};
  for (let i = 0; i < 20 && typeof s.$ref === 'string'; i++) {
    const name = (s.$ref as string).split('/').pop()!;
    s = ((doc.components as Json).schemas as Record<string, Json>)[name] ?? {};
  }
  return s;
}

/** Builds values from JSON Schema, then bends them. */
export class ValueGen {
  constructor(
    private readonly doc: Json,
    private readonly rng: Rng,
    private readonly idFor: () => number,
  ) {}

  hostileScalar(): unknown {
    const r = this.rng;
    switch (r.int(6)) {
      case 0:
        return r.pick(STRINGS);
      case 1:
        return r.pick(NUMBERS);
      case 2:
        return r.pick([true, false, null]);
      case 3:
        return [];
      case 4:
        return {};
      default:
        return this.idFor();
    }
  }

  /** A value shaped by `schema` (most of the time), `depth` bounding recursion. */
  fromSchema(schema: Json | undefined, depth = 0): unknown {
    const r = this.rng;
    const s = resolve(this.doc, schema);
    if (depth > 6) return null;
    if (r.chance(0.04)) return this.hostileScalar();
    const variants = (s.anyOf ?? s.oneOf) as Json[] | undefined;
    if (variants && variants.length > 0) return this.fromSchema(r.pick(variants), depth + 1);
    if (Array.isArray(s.allOf) && s.allOf.length > 0) return this.fromSchema(s.allOf[0] as Json, depth + 1);
    if ('const' in s) return s.const;
    if (Array.isArray(s.enum)) return r.chance(0.9) ? r.pick(s.enum) : `${String(r.pick(s.enum))}-not`;
    let type = s.type as string | string[] | undefined;
    if (Array.isArray(type)) type = r.pick(type);
    if (type === undefined)
      type = s.properties ? 'object' : s.items ? 'array' : r.pick(['string', 'integer', 'object', 'boolean', 'null']);
    switch (type) {
      case 'null':
        return null;
      case 'boolean':
        return r.chance(0.5);
      case 'integer':
        if (r.chance(0.5)) return this.idFor();
        return typeof s.minimum === 'number' && r.chance(0.5) ? s.minimum : r.pick(NUMBERS.filter(Number.isInteger));
      case 'number':
        return r.pick(NUMBERS);
      case 'string':
        if (s.format === 'date-time' || s.format === 'datetime')
          return r.pick(['2026-11-02T10:00:00Z', '2026-11-01', 'not a date', '9999-12-31T23:59:59Z']);
        if (s.format === 'uri')
          return r.pick([
            'https://ci.example.net/job/1',
            'javascript:alert(1)',
            'data:,x',
            '//host/x',
            'ftp://x/y',
            '',
          ]);
        return r.chance(0.6) ? `fuzz-${r.int(1_000_000)}` : r.pick(STRINGS);
      case 'array': {
        const n = r.chance(0.03) ? 10_001 : r.int(4);
        const items = s.items as Json | undefined;
        if (n > 100) return Array.from({ length: n }, (_, i) => i);
        return Array.from({ length: n }, () => this.fromSchema(items, depth + 1));
      }
      case 'object':
      default: {
        const out: Json = {};
        const props = (s.properties ?? {}) as Record<string, Json>;
        const required = new Set((s.required as string[] | undefined) ?? []);
        for (const [name, sub] of Object.entries(props)) {
          if (required.has(name) ? r.chance(0.93) : r.chance(0.5)) out[name] = this.fromSchema(sub, depth + 1);
        }
        if (
          s.additionalProperties !== false &&
          (s.additionalProperties !== undefined || Object.keys(props).length === 0)
        ) {
          for (let i = r.int(3); i > 0; i--)
            out[r.chance(0.7) ? `attr_${r.int(50)}` : r.pick(HOSTILE_KEYS)] = this.fromSchema(
              s.additionalProperties as Json | undefined,
              depth + 1,
            );
        }
        return out;
      }
    }
  }

  /** `value` with one thing bent somewhere in it. */
  mutate(value: unknown): { value: unknown; what: string } {
    const r = this.rng;
    if (
      value === null ||
      typeof value !== 'object' ||
      Array.isArray(value) ||
      Object.keys(value).length === 0 ||
      r.chance(0.15)
    ) {
      return { value: this.hostileScalar(), what: 'root replaced' };
    }
    const obj = { ...(value as Json) };
    const key = r.pick(Object.keys(obj));
    switch (r.int(7)) {
      case 0:
        obj[key] = this.hostileScalar();
        return { value: obj, what: `${key}: wrong type` };
      case 1:
        obj[key] = null;
        return { value: obj, what: `${key}: null` };
      case 2:
        delete obj[key];
        return { value: obj, what: `${key}: missing` };
      case 3:
        obj[r.pick(HOSTILE_KEYS)] = this.hostileScalar();
        return { value: obj, what: 'hostile key' };
      case 4:
        obj[key] = { [r.pick(HOSTILE_KEYS)]: this.hostileScalar(), nested: [obj[key]] };
        return { value: obj, what: `${key}: nested hostile key` };
      case 5:
        obj[key] = r.pick(['x'.repeat(70_000), 'y'.repeat(300)]);
        return { value: obj, what: `${key}: long string` };
      default:
        obj[key] = [obj[key], obj[key], this.hostileScalar()];
        return { value: obj, what: `${key}: wrapped in a list` };
    }
  }
}

/** Bodies refused before any route runs: nothing may be written by them, whatever the path. */
export function refusedBeforeRouting(rng: Rng): { body: string | Buffer; what: string; contentType: string } {
  const depth = 101 + rng.int(5000);
  return rng.pick([
    { body: '{"name": ', what: 'malformed JSON', contentType: 'application/json' },
    {
      body: Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      what: 'bad UTF-8',
      contentType: 'application/json',
    },
    {
      body: '{"__proto__": {"is_superuser": true}, "name": "p"}',
      what: '__proto__ key',
      contentType: 'application/json',
    },
    {
      body: `{"name": "deep", "data": ${'['.repeat(depth)}${']'.repeat(depth)}}`,
      what: `nested ${depth} deep`,
      contentType: 'application/json',
    },
    { body: '{"name": "x"}', what: 'charset latin1', contentType: 'application/json; charset=latin1' },
  ]);
}

/** Percent-encodes; a lone surrogate becomes the bytes of its (invalid) UTF-8 form. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

function pathWith(op: Operation, id: string): string {
  return op.path.replace(/\{[^}]+\}/g, id);
}

const GARBAGE_IDS = ['0', '-1', '999999', '1.5', 'abc', '9'.repeat(30), '%FF', '%00', 'null', '1e3'];

/** One request for `op`. */
export function generateRequest(op: Operation, gen: ValueGen, rng: Rng, pools: IdPools): FuzzRequest {
  const headers: Record<string, string> = {};
  const hasBody = op.method === 'POST' || op.method === 'PUT' || op.method === 'PATCH';
  const writes = op.method !== 'GET' && op.method !== 'OPTIONS';
  const what: string[] = [];

  // The path: an object written before the run, one written by the run, or garbage.
  let path = op.path;
  let onProtected = false;
  if (op.collection !== null) {
    const created = pools.createdIds.get(op.collection) ?? [];
    const prot = pools.protectedIds.get(op.collection) ?? [];
    const roll = rng.next();
    let id: string;
    if (roll < 0.35 && created.length > 0) id = String(rng.pick(created));
    else if (roll < 0.7 && prot.length > 0) {
      id = String(rng.pick(prot));
      onProtected = writes;
    } else id = rng.pick(GARBAGE_IDS);
    path = pathWith(op, id);
    what.push(`id ${id}`);
  }

  // Query: documented parameters with odd values, duplicates, unknown names.
  const query: string[] = [];
  for (const p of op.parameters) {
    if (p.in !== 'query' || !rng.chance(0.3)) continue;
    const name = String(p.name);
    if (name.startsWith('<')) continue;
    const value = rng.chance(0.5) ? String(gen.fromSchema(p.schema as Json)) : String(gen.hostileScalar());
    query.push(`${encode(name)}=${encode(value.slice(0, 300))}`);
    if (rng.chance(0.1)) query.push(`${encode(name)}=${encode(value.slice(0, 20))}`);
  }
  if (rng.chance(0.05))
    query.push(
      rng.pick([
        'constructor=1',
        'toString=x',
        '__proto__=x',
        'name=%FF',
        '%E0%A4=1',
        'limit=1&limit=2',
        'status=nope',
        'q=%00',
      ]),
    );
  if (query.length > 0) {
    path += `?${query.join('&')}`;
    what.push('query');
  }

  const branches = writes ? pools.branches : [...pools.branches, ...pools.protectedBranches];
  if (rng.chance(0.15)) {
    headers['X-NetBox-Branch'] =
      rng.chance(0.8) && branches.length > 0 ? rng.pick(branches) : rng.pick(['nosuchbr', '', '../x', 'ÿÿ']);
    what.push(`branch ${headers['X-NetBox-Branch']}`);
  }

  // A write to an object written before the run: only with a body refused before routing.
  if (onProtected) {
    const refused = refusedBeforeRouting(rng);
    headers['Content-Type'] = refused.contentType;
    what.push(refused.what);
    return { method: op.method, path, headers, body: refused.body, what: what.join(', ') };
  }

  if (!hasBody) {
    if (op.method === 'DELETE' && rng.chance(0.1)) {
      const refused = refusedBeforeRouting(rng);
      headers['Content-Type'] = refused.contentType;
      return { method: op.method, path, headers, body: refused.body, what: [...what, refused.what].join(', ') };
    }
    return { method: op.method, path, headers, what: what.join(', ') || 'plain' };
  }

  const roll = rng.next();
  if (roll < 0.08) {
    const refused = refusedBeforeRouting(rng);
    headers['Content-Type'] = refused.contentType;
    what.push(refused.what);
    return { method: op.method, path, headers, body: refused.body, what: what.join(', ') };
  }
  if (roll < 0.11) {
    headers['Content-Type'] = rng.pick([
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data; boundary=x',
    ]);
    return {
      method: op.method,
      path,
      headers,
      body: 'name=x',
      what: [...what, `content type ${headers['Content-Type']}`].join(', '),
    };
  }
  let body = gen.fromSchema(op.bodySchema ?? { type: 'object' });
  if (roll < 0.6) {
    const bent = gen.mutate(body);
    body = bent.value;
    what.push(bent.what);
  } else {
    what.push('schema-shaped');
  }
  // A bulk write's items name objects by `id` as a path does: one written by the run or
  // garbage, never one written before the run (those are only written with refused bodies).
  if (Array.isArray(body) && op.collection === null) {
    const created = pools.createdIds.get(op.path) ?? [];
    for (const item of body)
      if (item !== null && typeof item === 'object' && !Array.isArray(item) && 'id' in item)
        (item as Record<string, unknown>).id =
          created.length > 0 && rng.chance(0.5) ? rng.pick(created) : rng.pick([999999, 0, -1, 'x', null]);
  }
  headers['Content-Type'] = 'application/json';
  return { method: op.method, path, headers, body: JSON.stringify(body) ?? 'null', what: what.join(', ') };
}
