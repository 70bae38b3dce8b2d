import type { z } from 'zod';
import type { Ctx } from '../core/context';
import { BulkRefused, DomainError } from '../core/errors';
import type { StreamSink } from '../core/stream-sink';

export type { StreamSink };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** The most items one bulk write takes (its body stays within the 1 MiB limit besides). */
export const BULK_LIMIT = 1000;

/**
 * A route that also writes many objects in one request, as NetBox's bulk operations do:
 * - `create` (POST on a list): the body is one object or a list of them, each what `item` takes;
 * - `update` (PATCH or PUT on a list): a list only, each item `{"id": n, ...}`, the rest what `item` takes;
 * - `delete` (DELETE on a list): a list only, each item `{"id": n}`.
 * Every item is validated before the handler runs: the errors are answered together, as a list
 * aligned with the items (`BulkRefused`). The handler gets the parsed list: for `create` the
 * items, for `update` and `delete` `BulkItem`s. At most `BULK_LIMIT` items.
 */
export interface BulkBody {
  kind: 'create' | 'update' | 'delete';
  item?: z.ZodType;
}

/** One item of a bulk update or delete: the object's id and (update) the rest of the item, as `item` gives it. */
export interface BulkItem<Body = unknown> {
  id: number;
  body: Body;
}

/**
 * Who may call a route. Every route declares one (deny by default):
 * - `public`: no token needed;
 * - `authenticated`: any signed-in user; the handler narrows to the caller's own objects;
 * - a permission `app_label.action_model`: the caller must hold it on at least some objects;
 *   object-level constraints are checked by the handler on the object itself.
 */
export type Access = { public: true } | { authenticated: true } | { permission: string };

/** Repeated parameters keep every value: `?status=a&status=b` is `{status: ['a', 'b']}`. */
export type QueryParams = Record<string, string[]>;

/** What a handler receives; `body` is what the route's `body` schema gives (undefined without one). */
export interface RouteInput<Body = unknown> {
  ctx: Ctx;
  params: Record<string, string>;
  query: QueryParams;
  body: Body;
  /** The full request URL (for list links). */
  url: URL;
  /** A request header by (case-insensitive) name; several of one name are joined with ", ". */
  header(name: string): string | undefined;
  /** The client's network address (credential throttling). */
  address: string;
}

/** A handler's answer: a body (status 200, or the route's `status`), or an explicit reply, with headers of its own (an `ETag`). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers?: Readonly<Record<string, string>>,
  ) {}
}

/**
 * A handler's answer that streams (Server-Sent Events): status 200 with `contentType`, then
 * `start` writes to the sink for as long as it likes. The service's stop ends every open stream.
 */
export class StreamReply {
  constructor(
    readonly contentType: string,
    readonly start: (sink: StreamSink) => void,
  ) {}
}

export interface QueryParamDoc {
  name: string;
  description: string;
  repeated?: boolean;
}

/**
 * A route: its method and path, access, documentation, and handler. `Body` is the type of the
 * validated body, flowing from the `body` schema (`defineRoute` infers it).
 */
export interface RouteDef<Body = unknown> {
  method: HttpMethod;
  /** Express-style path, e.g. `/api/users/tokens/:id/`. */
  path: string;
  access: Access;
  summary: string;
  tag: string;
  /** Validates the JSON body before the handler runs; the handler gets what it outputs. */
  body?: z.ZodType<Body>;
  /** The route also takes a list body: a bulk write (see `BulkBody`). */
  bulk?: BulkBody;
  /** Documents the answer in the OpenAPI document. */
  response?: z.ZodType;
  /**
   * The route answers with a stream (`StreamReply`) of this media type, e.g. `text/event-stream`;
   * `description` says what it carries (for the OpenAPI document).
   */
  stream?: { contentType: string; description: string };
  /** More words for the OpenAPI document (besides the access). */
  description?: string;
  query?: QueryParamDoc[];
  /** Status of a successful answer (default 200). */
  status?: number;
  /**
   * The route speaks of one object's version (for the OpenAPI document; the handler does it):
   * `etag`, its answer carries the object's `ETag`; `ifMatch`, it takes `If-Match` and answers 412
   * when that names no current version. A list (bulk) write never does.
   */
  versions?: { etag?: boolean; ifMatch?: boolean };
  /** Writes need a write-enabled token; GET and OPTIONS routes never write. Defaults to method !== GET or OPTIONS. */
  writes?: boolean;
  /**
   * False: the handler opens its own transaction (`inTransaction`) around its writes, because
   * it awaits work that must not hold the database meanwhile (password hashing). Default true.
   */
  transaction?: boolean;
  handler(input: RouteInput<Body>): Promise<unknown>;
}

/** What a handler's `body` is: the output of the route's `body` schema (undefined without one). */
export type BodyOf<S extends z.ZodType | undefined> = S extends z.ZodType ? z.output<S> : undefined;

/** A route whose handler's `body` has the type of its `body` schema's output (undefined without one). */
export type TypedRoute<S extends z.ZodType | undefined> = Omit<RouteDef, 'body' | 'handler'> & {
  body?: S;
  handler(input: RouteInput<BodyOf<S>>): Promise<unknown>;
};

/**
 * Defines a route with its body's type taken from its schema:
 * `defineRoute({ method: 'POST', body: reviewCreate, handler: async ({ body }) => ... })` gives
 * the handler `body: z.output<typeof reviewCreate>`.
 */
export function defineRoute<S extends z.ZodType | undefined = undefined>(route: TypedRoute<S>): RouteDef {
  return route;
}

/** What the routes of a group share: the path they stand below, the tag, and unless a route says otherwise its access and answer's schema. */
export interface RouteBase {
  path: string;
  tag: string;
  access?: Access;
  response?: z.ZodType;
}

/** A route of a group: `path` is below the group's (none: the group's own); the rest as in `RouteDef`. */
export type GroupRoute<S extends z.ZodType | undefined> = Omit<TypedRoute<S>, 'path' | 'tag' | 'access'> & {
  path?: string;
  access?: Access;
};

/**
 * Routes declared as data against one base (`registry.group({path, tag, access, response})`):
 * each names only what is its own, its method, summary and handler.
 */
export class RouteGroup {
  constructor(
    private readonly registry: RouteRegistry,
    private readonly base: RouteBase,
  ) {}

  add<S extends z.ZodType | undefined = undefined>(route: GroupRoute<S>): void {
    const access = route.access ?? this.base.access;
    if (!access) throw new Error(`route ${route.method} ${this.base.path}${route.path ?? ''} declares no access`);
    this.registry.add<S>({
      response: this.base.response,
      ...route,
      tag: this.base.tag,
      access,
      path: `${this.base.path}${route.path ?? ''}`,
    });
  }

  /**
   * POST creating an object (on the group's own path unless `path` says otherwise): `run` answers
   * it (a body, or a `Reply` for its headers), the answer is 201 with it. A list body creates every item (a bulk create, all or none):
   * each in turn with `run` (or all at once with `bulk`), the answer 201 with the list; `bulk:
   * false` takes one object only.
   */
  create<S extends z.ZodType>(
    route: Omit<GroupRoute<S>, 'method' | 'handler' | 'status' | 'bulk'> & {
      run(input: RouteInput<BodyOf<S>>): Promise<unknown>;
      bulk?: false | ((input: RouteInput<Array<BodyOf<S>>>) => Promise<unknown[]>);
    },
  ): void {
    const { run, bulk, ...rest } = route;
    this.add<S>({
      method: 'POST',
      ...rest,
      status: 201,
      ...(bulk === false ? {} : { bulk: { kind: 'create', item: route.body } }),
      handler: async (input) => {
        if (bulk === false || !Array.isArray(input.body)) {
          const result = await run(input);
          return result instanceof Reply ? new Reply(201, result.body, result.headers) : new Reply(201, result);
        }
        const items = input.body as Array<BodyOf<S>>;
        if (bulk) return new Reply(201, await bulk({ ...input, body: items }));
        return new Reply(201, await eachItem(items, (body) => run({ ...input, body })));
      },
    });
  }

  /**
   * PATCH and PUT of one path with one handler, which learns which of the two it serves. On an
   * object's path (`:id/`), PATCH and PUT of the group's own path take a list of objects, each
   * with its `id` (a bulk update, all or none): each in turn through `handler` (or all at once
   * with `bulk`), answered with the list; `bulk: false` leaves them out.
   */
  patchAndPut<P extends z.ZodType, Q extends z.ZodType>(
    route: Omit<GroupRoute<P | Q>, 'method' | 'summary' | 'handler' | 'body' | 'bulk'> & {
      summary: { PATCH: string; PUT: string };
      body: { PATCH: P; PUT: Q };
      handler(input: RouteInput<BodyOf<P | Q>>, method: 'PATCH' | 'PUT'): Promise<unknown>;
      bulk?:
        false | ((input: RouteInput<Array<BulkItem<BodyOf<P | Q>>>>, method: 'PATCH' | 'PUT') => Promise<unknown[]>);
    },
  ): void {
    const { bulk, ...single } = route;
    for (const method of ['PATCH', 'PUT'] as const) {
      this.add<P | Q>({
        ...single,
        method,
        summary: route.summary[method],
        body: route.body[method],
        handler: (input) => route.handler(input, method),
      });
    }
    if (bulk === false || route.path !== ':id/') return;
    for (const method of ['PATCH', 'PUT'] as const) {
      this.add<z.ZodType<Array<BulkItem<BodyOf<P | Q>>>>>({
        ...single,
        versions: undefined,
        path: undefined,
        body: undefined,
        method,
        summary: `${route.summary[method]}: a list of objects, each with its id (a bulk update: all or none)`,
        bulk: { kind: 'update', item: route.body[method] },
        handler: async (input) => {
          const items = input.body;
          if (bulk) return bulk({ ...input, body: items }, method);
          return eachItem(items, async (item) =>
            answerBody(
              await route.handler(
                { ...input, params: { ...input.params, id: String(item.id) }, body: item.body },
                method,
              ),
            ),
          );
        },
      });
    }
  }

  /**
   * DELETE of one path: `run` deletes, the answer is 204 with no body. On an object's path
   * (`:id/`), DELETE of the group's own path takes a list of `{"id": n}` (a bulk delete, all or
   * none): each in turn through `run` (or all at once with `bulk`); `bulk: false` leaves it out.
   */
  remove(
    route: Omit<GroupRoute<undefined>, 'method' | 'handler' | 'status' | 'response' | 'bulk'> & {
      run(input: RouteInput<undefined>): Promise<void>;
      bulk?: false | ((input: RouteInput<BulkItem[]>) => Promise<void>);
    },
  ): void {
    const { run, bulk, ...rest } = route;
    this.add({
      ...rest,
      method: 'DELETE',
      response: undefined,
      status: 204,
      handler: async (input) => {
        await run(input);
        return new Reply(204);
      },
    });
    if (bulk === false || route.path !== ':id/') return;
    this.add<z.ZodType<BulkItem[]>>({
      ...rest,
      versions: undefined,
      path: undefined,
      method: 'DELETE',
      summary: `${route.summary}: a list of {"id": n} (a bulk delete: all or none)`,
      response: undefined,
      status: 204,
      bulk: { kind: 'delete' },
      handler: async (input) => {
        const items = input.body;
        if (bulk) await bulk({ ...input, body: items });
        else
          await eachItem(items, (item) =>
            run({ ...input, params: { ...input.params, id: String(item.id) }, body: undefined }),
          );
        return new Reply(204);
      },
    });
  }
}

/** What a handler answered, as the body of an item of a bulk answer. */
function answerBody(result: unknown): unknown {
  return result instanceof Reply ? result.body : result;
}

/**
 * Runs `one` for every item in turn, in the request's transaction; the first item refused stops
 * the write, answered as a list aligned with the items (its error at its place), and the
 * transaction rolls back whatever the items before it wrote.
 */
export async function eachItem<T>(items: readonly T[], one: (item: T) => Promise<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let i = 0; i < items.length; i++) {
    try {
      out.push(answerBody(await one(items[i]!)));
    } catch (err) {
      if (err instanceof DomainError && !(err instanceof BulkRefused)) throw BulkRefused.at(i, items.length, err);
      throw err;
    }
  }
  return out;
}

/** Every route of the service, host and plugins alike; the app mounts them and the OpenAPI document reads them. */
export class RouteRegistry {
  private readonly routes: RouteDef[] = [];

  /** Registers a route; its handler's `body` has the type of its `body` schema (see `defineRoute`). */
  add<S extends z.ZodType | undefined = undefined>(typed: TypedRoute<S>): void {
    const route = defineRoute(typed);
    if (!('public' in route.access) && !('authenticated' in route.access) && !('permission' in route.access)) {
      throw new Error(`route ${route.method} ${route.path} declares no access`);
    }
    const clash = this.routes.find((r) => r.method === route.method && r.path === route.path);
    if (clash) throw new Error(`route ${route.method} ${route.path} is registered twice`);
    this.routes.push(route);
  }

  /** Routes sharing a path, a tag and (unless a route says otherwise) an access and answer's schema. */
  group(base: RouteBase): RouteGroup {
    return new RouteGroup(this, base);
  }

  all(): readonly RouteDef[] {
    return this.routes;
  }
}
