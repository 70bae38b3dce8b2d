import { z } from 'zod';
import type { Host } from '../host';
import { isListRoute } from './openapi';
import type { RouteDef } from './routes';

type JsonSchema = Record<string, unknown>;

/** Path segments under `/api/` that are not sections of the API (documents about it). */
const NOT_SECTIONS = new Set(['schema', 'docs']);

/**
 * `GET /api/` (public), as NetBox's API root: each section of the API (the first path segment
 * under `/api/` of any route, e.g. `dcim`, `plugins`, `status`) with its URL. Clients read the
 * `API-Version` header every answer carries from it (`pynetbox`'s `nb.version`).
 */
export function registerApiRoot(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: '/api/',
    access: { public: true },
    summary: "The API's sections, each with its URL (the API-Version header tells the version)",
    tag: 'status',
    response: z.record(z.string(), z.string()),
    handler: async ({ ctx }) => {
      const sections = new Set<string>();
      for (const route of host.routes.all()) {
        const section = /^\/api\/([^/:]+)\//.exec(route.path)?.[1];
        if (section && !NOT_SECTIONS.has(section)) sections.add(section);
      }
      return Object.fromEntries([...sections].sort().map((s) => [s, `${ctx.baseUrl}/api/${s}/`]));
    },
  });
}

/** One field of a create's body as DRF's metadata describes it (what `choices()` reads). */
interface FieldMetadata {
  type: string;
  required: boolean;
  read_only: boolean;
  label: string;
  choices?: Array<{ value: string; display_name: string }>;
}

/** `"needs_changes"` -> `"Needs changes"`. */
export function displayName(value: string): string {
  const words = value.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function choicesOf(schema: JsonSchema): string[] | undefined {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) return schema.enum as string[];
  for (const key of ['anyOf', 'oneOf']) {
    const alternatives = schema[key];
    if (!Array.isArray(alternatives)) continue;
    for (const alt of alternatives as JsonSchema[]) {
      const found = choicesOf(alt);
      if (found) return found;
    }
  }
  return undefined;
}

function fieldType(schema: JsonSchema): string {
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return schema.format === 'date-time' ? 'datetime' : 'string';
    case 'integer':
      return 'integer';
    case 'number':
      return 'float';
    case 'boolean':
      return 'boolean';
    case 'array':
      return 'list';
    case 'object':
      return 'nested object';
    default:
      return 'field';
  }
}

/** The fields of a create's body schema (its JSON schema's properties), enums as choices. */
function bodyFields(body: z.ZodType | undefined): Record<string, FieldMetadata> {
  const fields: Record<string, FieldMetadata> = {
    id: { type: 'integer', required: false, read_only: true, label: 'ID' },
  };
  if (!body) return fields;
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(body, { io: 'input', unrepresentable: 'any', cycles: 'ref', reused: 'inline' }) as JsonSchema;
  } catch {
    return fields;
  }
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  for (const [name, schema] of Object.entries(properties)) {
    const choices = choicesOf(schema);
    fields[name] = {
      type: choices ? 'choice' : fieldType(schema),
      required: required.has(name),
      read_only: false,
      label: displayName(name),
      ...(choices ? { choices: choices.map((value) => ({ value, display_name: displayName(value) })) } : {}),
    };
  }
  return fields;
}

/**
 * `OPTIONS` on every list endpoint (registered once every plugin has registered its routes),
 * answering DRF's metadata as NetBox does: the list's name and description, what it renders
 * and parses, and, when the list takes a create, the fields of a create under
 * `actions.POST`, each choice field with its `choices` (`pynetbox`'s `choices()` reads them).
 * A catalogue type's choices are the catalogue's; a model's come from its create body (its
 * enumerations). The same access as reading the list.
 */
export function registerListOptions(host: Host): void {
  const routes = host.routes.all();
  const catalogue = new Map(host.objectTypes.sourceOfTruth().map((t) => [t.path, t]));
  const creates = new Map(routes.filter((r) => r.method === 'POST').map((r) => [r.path, r]));
  const options = new Set(routes.filter((r) => r.method === 'OPTIONS').map((r) => r.path));
  for (const list of routes.filter(isListRoute)) {
    if (options.has(list.path)) continue;
    const create = creates.get(list.path);
    const type = catalogue.get(list.path);
    let post: Record<string, FieldMetadata> | undefined;
    if (type) {
      post = {
        id: { type: 'integer', required: false, read_only: true, label: 'ID' },
        name: { type: 'string', required: false, read_only: false, label: 'Name' },
      };
      for (const [field, choices] of Object.entries(type.choices ?? {}))
        post[field] = {
          type: 'choice',
          required: false,
          read_only: false,
          label: displayName(field),
          choices: choices.map(([value, display_name]) => ({ value, display_name })),
        };
    } else if (create) post = bodyFields(create.body);
    const metadata = {
      name: list.summary,
      description: list.description ?? list.summary,
      renders: ['application/json'],
      parses: ['application/json'],
      ...(post ? { actions: { POST: post } } : {}),
    };
    const route: RouteDef = {
      method: 'OPTIONS',
      path: list.path,
      access: list.access,
      summary: `The metadata of ${list.path}: its create's fields and their choices (DRF style)`,
      tag: list.tag,
      handler: async () => metadata,
    };
    host.routes.add(route);
  }
}
