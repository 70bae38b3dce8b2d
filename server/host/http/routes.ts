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

/** A route whose handler's `body` has the type of its `body` schema's output (undefined without one). */
export type TypedRoute<S extends z.ZodType | undefined> = Omit<RouteDef, 'body' | 'handler'> & {
  body?: S;
  handler(input: RouteInput<S extends z.ZodType ? z.output<S> : undefined>): Promise<unknown>;
};

/**
 * Defines a route with its body's type taken from its schema:
 * `defineRoute({ method: 'POST', body: reviewCreate, handler: async ({ body }) => ... })` gives
 * the handler `body: z.output<typeof reviewCreate>`.
 */
export function defineRoute<S extends z.ZodType | undefined = undefined>(route: TypedRoute<S>): RouteDef {
  return route;
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

  all(): readonly RouteDef[] {
    return this.routes;
  }
}
