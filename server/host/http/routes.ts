import type { z } from 'zod';
import type { Ctx } from '../core/context';
import type { StreamSink } from '../core/stream-sink';

export type { StreamSink };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

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

/** A handler's answer: a body (status 200, or the route's `status`), or an explicit reply. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
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
  /** Writes need a write-enabled token; GET routes never write. Defaults to method !== GET. */
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

  /** POST creating an object (on the group's own path unless `path` says otherwise): `run` answers it, the answer is 201 with it. */
  create<S extends z.ZodType>(
    route: Omit<GroupRoute<S>, 'method' | 'handler' | 'status'> & {
      run(input: RouteInput<BodyOf<S>>): Promise<unknown>;
    },
  ): void {
    const { run, ...rest } = route;
    this.add<S>({ method: 'POST', ...rest, status: 201, handler: async (input) => new Reply(201, await run(input)) });
  }

  /** PATCH and PUT of one path with one handler, which learns which of the two it serves. */
  patchAndPut<P extends z.ZodType, Q extends z.ZodType>(
    route: Omit<GroupRoute<P | Q>, 'method' | 'summary' | 'handler' | 'body'> & {
      summary: { PATCH: string; PUT: string };
      body: { PATCH: P; PUT: Q };
      handler(input: RouteInput<BodyOf<P | Q>>, method: 'PATCH' | 'PUT'): Promise<unknown>;
    },
  ): void {
    for (const method of ['PATCH', 'PUT'] as const) {
      this.add<P | Q>({
        ...route,
        method,
        summary: route.summary[method],
        body: route.body[method],
        handler: (input) => route.handler(input, method),
      });
    }
  }

  /** DELETE of one path: `run` deletes, the answer is 204 with no body. */
  remove(
    route: Omit<GroupRoute<undefined>, 'method' | 'handler' | 'status' | 'response'> & {
      run(input: RouteInput<undefined>): Promise<void>;
    },
  ): void {
    const { run, ...rest } = route;
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
  }
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
