import { z } from 'zod';
import { errorBody } from '../../../contract/api/common';
import type { Host } from '../host';
import type { Logger } from '../core/logger';
import { HOST_VERSION } from '../core/version';
import { IDEMPOTENCY_HEADER, IDEMPOTENT_REPLAY_HEADER } from './idempotency';
import { BULK_LIMIT, type RouteDef } from './routes';

type JsonSchema = Record<string, unknown>;

interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  responses: Record<string, JsonSchema>;
  security: Array<Record<string, string[]>>;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers?: Array<{ url: string }>;
  tags: Array<{ name: string }>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { securitySchemes: Record<string, JsonSchema>; schemas: Record<string, JsonSchema> };
  security: Array<Record<string, string[]>>;
}

const LIST_PARAMS = ['limit', 'offset'];

/** `/api/users/tokens/:id/` -> `/api/users/tokens/{id}/` */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

function pathParams(path: string): string[] {
  return [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
}

/** A GET route documenting `limit` and `offset` answers with the list envelope. */
export function isListRoute(route: RouteDef): boolean {
  const names = (route.query ?? []).map((q) => q.name);
  return route.method === 'GET' && LIST_PARAMS.every((n) => names.includes(n));
}

function operationId(route: RouteDef): string {
  const words = route.path
    .replace(/^\/api\//, '')
    .replace(/:(\w+)/g, 'by_$1')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [route.method.toLowerCase(), ...words].join('_');
}

function accessText(route: RouteDef): string {
  if ('public' in route.access) return 'No token needed.';
  if ('authenticated' in route.access) return 'Any authenticated caller.';
  return `Requires the permission \`${route.access.permission}\`.`;
}

/**
 * Turns zod schemas into JSON Schema components. The document is one JSON document, so
 * `$defs` of a converted schema become components of their own and every `$ref` is
 * rewritten to point at them. A schema that cannot be converted becomes `{}` (any).
 */
class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly names = { input: new Map<z.ZodType, string>(), output: new Map<z.ZodType, string>() };

  constructor(private readonly log: Logger) {}

  /** A `$ref` to the component holding `schema` (converted once per schema and direction). */
  ref(schema: z.ZodType, name: string, io: 'input' | 'output'): JsonSchema {
    const existing = this.names[io].get(schema);
    if (existing) return { $ref: `#/components/schemas/${existing}` };
    const base = this.uniqueName(`${name}${io === 'input' ? 'Input' : ''}`);
    let converted: JsonSchema;
    try {
      converted = z.toJSONSchema(schema, { io, unrepresentable: 'any', cycles: 'ref', reused: 'inline' }) as JsonSchema;
    } catch (err) {
      this.log.warn(`OpenAPI: schema ${base} cannot be described: ${(err as Error).message}`);
      converted = {};
    }
    const { $schema: _dialect, $defs, ...root } = converted as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const defNames = new Map<string, string>();
    for (const key of Object.keys($defs ?? {}))
      defNames.set(key, this.uniqueName(`${base}_${key.replace(/[^A-Za-z0-9_]/g, '')}`));
    const rewrite = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (node === null || typeof node !== 'object') return node;
      const out: JsonSchema = {};
      for (const [key, value] of Object.entries(node as JsonSchema)) {
        if (key === '$ref' && typeof value === 'string') {
          if (value === '#') out.$ref = `#/components/schemas/${base}`;
          else if (value.startsWith('#/$defs/'))
            out.$ref = `#/components/schemas/${defNames.get(value.slice(8)) ?? base}`;
          else out.$ref = value;
        } else {
          out[key] = rewrite(value);
        }
      }
      return out;
    };
    this.schemas[base] = rewrite(root) as JsonSchema;
    for (const [key, def] of Object.entries($defs ?? {})) this.schemas[defNames.get(key)!] = rewrite(def) as JsonSchema;
    this.names[io].set(schema, base);
    return { $ref: `#/components/schemas/${base}` };
  }

  /**
   * A component holding the schema `ref` points at with a required integer `id` added: its own
   * properties with `id` first when it is an object's schema, else `ref` and `{id}` together.
   */
  withId(ref: JsonSchema, name: string): JsonSchema {
    const target = typeof ref.$ref === 'string' ? this.schemas[ref.$ref.split('/').pop()!] : undefined;
    const schema: JsonSchema =
      target && target.type === 'object' && typeof target.properties === 'object'
        ? {
            ...target,
            properties: { id: ID_SCHEMA, ...(target.properties as JsonSchema) },
            required: ['id', ...((target.required as string[] | undefined) ?? [])],
          }
        : { allOf: [{ type: 'object', properties: { id: ID_SCHEMA }, required: ['id'] }, ref] };
    const existing = Object.entries(this.schemas).find(([key]) => key === name);
    if (existing) return { $ref: `#/components/schemas/${name}` };
    const unique = this.uniqueName(name);
    this.schemas[unique] = schema;
    return { $ref: `#/components/schemas/${unique}` };
  }

  private uniqueName(wanted: string): string {
    const clean = wanted.replace(/[^A-Za-z0-9_.-]/g, '_') || 'Schema';
    let name = clean;
    for (let i = 2; name in this.schemas; i++) name = `${clean}_${i}`;
    this.schemas[name] = {};
    return name;
  }
}

function schemaName(route: RouteDef): string {
  const words = route.path
    .replace(/^\/api\//, '')
    .replace(/:(\w+)/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1));
  return words.join('') || 'Root';
}

function jsonContent(schema: JsonSchema): JsonSchema {
  return { content: { 'application/json': { schema } } };
}

function listEnvelope(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: {
      count: { type: 'integer' },
      next: { type: ['string', 'null'] },
      previous: { type: ['string', 'null'] },
      results: { type: 'array', items: item },
    },
    required: ['count', 'next', 'previous', 'results'],
  };
}

const ID_SCHEMA: JsonSchema = { type: 'integer', minimum: 1, description: 'The id of the object.' };

/**
 * The body of a route that takes a bulk write: for a create, one object or a list of them; for
 * an update, a list of objects each with its `id` (the item's own schema with `id` added when it
 * is an object's, else both required together); for a delete, a list of `{"id": n}`.
 */
function bulkBodySchema(route: RouteDef, components: SchemaComponents, bodyName: string): JsonSchema {
  const bulk = route.bulk!;
  const limits = { maxItems: BULK_LIMIT };
  if (bulk.kind === 'delete') {
    return {
      type: 'array',
      ...limits,
      items: { type: 'object', properties: { id: ID_SCHEMA }, required: ['id'], additionalProperties: false },
    };
  }
  const item = bulk.item ? components.ref(bulk.item, bodyName, 'input') : { type: 'object' };
  if (bulk.kind === 'create') return { oneOf: [item, { type: 'array', ...limits, items: item }] };
  return { type: 'array', ...limits, items: components.withId(item, `${bodyName}BulkItem`) };
}

function operation(route: RouteDef, components: SchemaComponents, errorRef: JsonSchema): OpenApiOperation {
  const parameters: JsonSchema[] = pathParams(route.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: name === 'id' ? { type: 'integer' } : { type: 'string' },
  }));
  for (const q of route.query ?? []) {
    parameters.push({
      name: q.name,
      in: 'query',
      required: false,
      description: q.description,
      schema: q.repeated
        ? { type: 'array', items: { type: 'string' } }
        : { type: LIST_PARAMS.includes(q.name) ? 'integer' : 'string' },
      ...(q.repeated ? { style: 'form', explode: true } : {}),
    });
  }
  const reads = route.method === 'GET' || route.method === 'OPTIONS';
  if (!reads) {
    parameters.push({
      name: IDEMPOTENCY_HEADER,
      in: 'header',
      required: false,
      description:
        'Makes a retry safe: the first successful answer is kept for 24 hours per caller and key and replayed (with ' +
        `\`${IDEMPOTENT_REPLAY_HEADER}: true\`) to a repeat with the same method, path, branch and body. 1 to 200 printable ASCII characters.`,
      schema: { type: 'string', minLength: 1, maxLength: 200 },
    });
  }
  if (route.versions?.ifMatch) {
    parameters.push({
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        'Writes only over the version named: `*` (any), or one or more entity tags as `ETag` gives them; ' +
        'otherwise 412 and nothing is written. Without it, the write goes over any version.',
      schema: { type: 'string' },
    });
  }
  const name = schemaName(route);
  const status = String(route.status ?? 200);
  const responses: Record<string, JsonSchema> = {};
  if (route.stream) {
    responses[status] = {
      description: route.stream.description,
      content: { [route.stream.contentType]: { schema: { type: 'string' } } },
    };
  } else if (status === '204') {
    responses[status] = { description: 'Done; no content.' };
  } else {
    const item = route.response ? components.ref(route.response, name, 'output') : {};
    const list = { type: 'array', items: item };
    const schema = isListRoute(route)
      ? listEnvelope(item)
      : route.bulk?.kind === 'create'
        ? { oneOf: [item, list] }
        : route.bulk
          ? list
          : item;
    responses[status] = {
      description: isListRoute(route)
        ? 'A page of results.'
        : route.bulk?.kind === 'create'
          ? 'The object created; for a list, the objects created, in the order sent.'
          : route.bulk
            ? 'The objects, in the order sent.'
            : 'Success.',
      ...(route.versions?.etag
        ? {
            headers: {
              ETag: {
                schema: { type: 'string' },
                description: route.bulk
                  ? 'For one object: its version, which If-Match names.'
                  : 'The version of the object (in the branch of X-NetBox-Branch, else on main), which If-Match names.',
              },
            },
          }
        : {}),
      ...jsonContent(schema),
    };
  }
  if (route.bulk) {
    responses['400'] = {
      description: `Invalid input: field errors or detail; for a list, the errors as a list aligned with the items (nothing is written), or a list of more than ${BULK_LIMIT} items.`,
      ...jsonContent({ oneOf: [errorRef, { type: 'array', items: errorRef }] }),
    };
  } else if (route.body || (route.query ?? []).length > 0 || !reads) {
    responses['400'] = { description: 'Invalid input: field errors or detail.', ...jsonContent(errorRef) };
  }
  if (!('public' in route.access))
    responses['403'] = { description: 'Missing or bad token, or not permitted.', ...jsonContent(errorRef) };
  responses['429'] = {
    description:
      'Too many failed credentials from this address (or for this username): try again after Retry-After seconds.',
    headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' } },
    ...jsonContent(errorRef),
  };
  if (route.path.includes(':')) responses['404'] = { description: 'Not found.', ...jsonContent(errorRef) };
  if (route.versions?.ifMatch)
    responses['412'] = {
      description: 'The object changed since the version If-Match names; nothing is written.',
      ...jsonContent(errorRef),
    };
  if (!reads) {
    responses['409'] ??= {
      description: 'The action does not apply now, or a request with this Idempotency-Key is still running.',
      ...jsonContent(errorRef),
    };
    responses['422'] = {
      description: 'This Idempotency-Key was already used for a different request.',
      ...jsonContent(errorRef),
    };
  }
  const op: OpenApiOperation = {
    operationId: operationId(route),
    summary: route.summary,
    description: route.description ? `${route.description}\n\n${accessText(route)}` : accessText(route),
    tags: [route.tag],
    responses,
    security: 'public' in route.access ? [] : [{ Token: [] }],
  };
  if (parameters.length > 0) op.parameters = parameters;
  const bodyName = route.method === 'PATCH' ? `${name}Patch` : name;
  if (route.bulk) {
    op.requestBody = { required: true, ...jsonContent(bulkBodySchema(route, components, bodyName)) };
  } else if (route.body) {
    op.requestBody = { required: true, ...jsonContent(components.ref(route.body, bodyName, 'input')) };
  }
  return op;
}

/**
 * The OpenAPI 3.1 document of every registered route (host and plugins alike), generated
 * from the same zod schemas that validate requests. A route whose description fails is
 * still listed, with its summary and a generic answer.
 */
export function buildOpenApi(routes: readonly RouteDef[], log: Logger): OpenApiDocument {
  const components = new SchemaComponents(log);
  const errorRef = components.ref(errorBody, 'Error', 'output');
  const paths: OpenApiDocument['paths'] = {};
  const tags = new Set<string>();
  for (const route of routes) {
    const path = openApiPath(route.path);
    const method = route.method.toLowerCase();
    tags.add(route.tag);
    let op: OpenApiOperation;
    try {
      op = operation(route, components, errorRef);
    } catch (err) {
      log.warn(`OpenAPI: ${route.method} ${route.path} cannot be described: ${(err as Error).message}`);
      op = {
        operationId: operationId(route),
        summary: route.summary,
        tags: [route.tag],
        responses: { default: { description: 'See the service contract.' } },
        security: 'public' in route.access ? [] : [{ Token: [] }],
      };
    }
    (paths[path] ??= {})[method] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Change Control',
      version: HOST_VERSION,
      description:
        'The host API with the branching and change-control plugins. Authenticate with the header `Authorization: Token <key>`.',
    },
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        Token: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'The word "Token", a space, and the key: `Token <key>`.',
        },
      },
      schemas: components.schemas,
    },
    security: [{ Token: [] }],
  };
}

/** The host's OpenAPI document for a base URL: built on first use (again if routes were added since). */
export function openApiDocuments(host: Host): (baseUrl: string) => OpenApiDocument {
  let cached: { routes: number; doc: OpenApiDocument } | null = null;
  return (baseUrl) => {
    const routes = host.routes.all();
    if (cached?.routes !== routes.length) cached = { routes: routes.length, doc: buildOpenApi(routes, host.log) };
    return { ...cached.doc, servers: [{ url: baseUrl }] };
  };
}

/**
 * `/api/schema/` (public): the OpenAPI 3.1 document; also at `/api/docs/`, where pynetbox 7.0's
 * `nb.openapi()` asks for it (`?format=openapi`).
 */
export function registerSchema(host: Host): void {
  const documentFor = openApiDocuments(host);
  const format = [{ name: 'format', description: '`json` or `openapi`: the document as JSON (the only form served).' }];
  host.routes.add({
    method: 'GET',
    path: '/api/schema/',
    access: { public: true },
    summary: 'The OpenAPI 3.1 document of the whole API',
    tag: 'schema',
    query: format,
    handler: async ({ ctx }) => documentFor(ctx.baseUrl),
  });
  host.routes.add({
    method: 'GET',
    path: '/api/docs/',
    access: { public: true },
    summary: 'The OpenAPI 3.1 document of the whole API (as /api/schema/)',
    tag: 'schema',
    query: format,
    handler: async ({ ctx }) => documentFor(ctx.baseUrl),
  });
}
