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

export interface RouteInput {
  ctx: Ctx;
  params: Record<string, string>;
  query: QueryParams;
  body: unknown;
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

export interface RouteDef {
  method: HttpMethod;
  /** Express-style path, e.g. `/api/users/tokens/:id/`. */
  path: string;
  access: Access;
  summary: string;
  tag: string;
  /** Validates the JSON body before the handler runs. */
  body?: z.ZodType;
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
  handler(input: RouteInput): Promise<unknown>;
}

/** Every route of the service, host and plugins alike; the app mounts them and the OpenAPI document reads them. */
export class RouteRegistry {
  private readonly routes: RouteDef[] = [];

  add(route: RouteDef): void {
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
