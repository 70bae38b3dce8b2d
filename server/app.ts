import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { enableLinearRegExps } from './host/core/linear-regexp';
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Clock } from './host/core/clock';
import type { Config } from './host/core/config';
import { createCtx, inTransaction, type AuthUser, type Ctx } from './host/core/context';
import { UncheckedReads, UncheckedReadsStale } from './host/core/read-memo';
import { resolveBranchHeader } from './host/objects/branch-access';
import {
  AuthenticationFailed,
  MethodNotAllowed,
  NotFound,
  PermissionDenied,
  TooManyRequests,
  UnsupportedMediaType,
} from './host/core/errors';
import { createHost, PluginError, type Host, type HostPlugin } from './host/host';
import { consoleLogger, type Logger } from './host/core/logger';
import { HOST_VERSION, API_VERSION, inRange, satisfiesRequirement } from './host/core/version';
import { databaseKind, migrate, type HostDb, type Migration } from './host/db/database';
import { versionsMayHaveMoved } from './host/db/data-version';
import { hostMigrations } from './host/db/migrations/host';
import { errorMiddleware } from './host/http/error-middleware';
import { RouteIndex } from './host/http/route-index';
import {
  fingerprintOf,
  IdempotencyKeys,
  IDEMPOTENT_REPLAY_HEADER,
  readIdempotencyKey,
  type Answer,
  type IdempotencyClaim,
} from './host/http/idempotency';
import { Reply, StreamReply, type RouteDef, type StreamSink } from './host/http/routes';
import { checkJsonBody, parseQueryString, requireSingle, requireUtf8 } from './host/http/body-guard';
import { validate } from './host/http/validation';
import { AllowedHosts } from './host/http/allowed-hosts';
import { limitServer, SERVER_OPTIONS } from './host/http/server-limits';
import { registerHostCore } from './host/register';
import { defaultPlugins } from './plugins';

export interface AppDeps {
  db: HostDb;
  clock: Clock;
  config: Config;
  log?: Logger;
  /** Plugins to load (default: branching and change control). */
  plugins?: HostPlugin[];
  /** Folder that relative paths in the configuration (check plugins) are resolved from. */
  configDir?: string;
}

export interface App {
  app: Express;
  host: Host;
  /** Answers to this host too (the address the service listens on; `host.allowed_hosts` holds the rest). */
  allowHost(address: string): void;
  /**
   * Ends every open stream and answers new stream requests with an empty, ended stream: the
   * service is stopping, and a stop must not wait for clients that never hang up.
   */
  endStreams(): void;
}

export { PluginError };

/** Checks every plugin's host range and requirements; throws with the reason otherwise. */
export function checkPlugins(plugins: HostPlugin[]): void {
  const versions = new Map(plugins.map((p) => [p.name, p.version]));
  for (const plugin of plugins) {
    if (!inRange(HOST_VERSION, plugin.hostVersion)) {
      throw new PluginError(
        `plugin ${plugin.name} ${plugin.version} supports host ${plugin.hostVersion.min}-${plugin.hostVersion.max}, not ${HOST_VERSION}`,
      );
    }
    for (const [name, wanted] of Object.entries(plugin.requires ?? {})) {
      const have = versions.get(name);
      if (!have)
        throw new PluginError(`plugin ${plugin.name} requires plugin ${name} ${wanted}, which is not installed`);
      if (!satisfiesRequirement(have, wanted)) {
        throw new PluginError(`plugin ${plugin.name} requires ${name} ${wanted}, but ${name} ${have} is installed`);
      }
    }
  }
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** A handler's result as it is sent: the status and the JSON text (null: no body). */
function answerOf(route: RouteDef, result: unknown): Answer {
  if (result instanceof Reply)
    return { status: result.status, text: result.body === undefined ? null : JSON.stringify(result.body) };
  return { status: route.status ?? 200, text: result === undefined ? null : JSON.stringify(result) };
}

/**
 * Resolves once the event loop has polled again. A write's answer waits for it, so that what the
 * engine queued for the loop while the write ran runs before the answer goes out rather than in
 * front of the request that follows it (typically a read of what was just written): V8 posts the
 * pause that finishes a full garbage collection, and its incremental marking steps, as tasks that
 * Node runs when the loop polls, and a write allocates most of what brings them on
 * (docs/performance.md, "Requests made as Express's"). It costs a write one turn of the loop.
 */
function loopTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Sends an answer: its JSON text with the headers Express's `res.send` gives a JSON string
 * (Content-Type with its charset, Content-Length; no ETag), written directly. A conditional
 * request (If-None-Match, If-Modified-Since) and a status without a body go through `res.send`,
 * which answers them as it always did.
 */
function send(req: Request, res: Response, answer: Answer): void {
  res.statusCode = answer.status;
  if (answer.text === null) {
    res.end();
    return;
  }
  const headers = req.headers;
  if (
    headers['if-none-match'] !== undefined ||
    headers['if-modified-since'] !== undefined ||
    answer.status === 204 ||
    answer.status === 304
  ) {
    res.type('application/json').send(answer.text);
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(answer.text, 'utf8'));
  if (req.method === 'HEAD') res.end();
  else res.end(answer.text, 'utf8');
}

/** Open streams of one app, ended together when the service stops. */
export class OpenStreams {
  private readonly sinks = new Set<StreamSink>();
  private stopping = false;

  open(req: Request, res: Response, reply: StreamReply): void {
    res.status(200);
    res.setHeader('Content-Type', reply.contentType);
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    // Proxies must pass events through as they come.
    res.setHeader('X-Accel-Buffering', 'no');
    // The connection ends with the stream (a stop never waits on an idle kept-alive socket).
    res.setHeader('Connection', 'close');
    res.flushHeaders();
    req.socket.setNoDelay(true);
    let closed = false;
    const listeners: Array<() => void> = [];
    // Waiters for the next drain: one 'drain' listener for the stream's life, none added per wait.
    let waiting: Array<() => void> = [];
    const wake = (): void => {
      for (const resolve of waiting.splice(0)) resolve();
    };
    res.on('drain', wake);
    const sink: StreamSink = {
      write: (chunk) => (closed ? false : res.write(chunk)),
      drained: () =>
        new Promise<void>((resolve) => {
          if (closed || !res.writableNeedDrain) resolve();
          else waiting.push(resolve);
        }),
      get closed() {
        return closed;
      },
      onClose: (listener) => {
        if (closed) listener();
        else listeners.push(listener);
      },
      end: () => {
        if (!closed) res.end();
      },
    };
    res.once('close', () => {
      closed = true;
      res.off('drain', wake);
      wake();
      waiting = [];
      this.sinks.delete(sink);
      for (const listener of listeners.splice(0)) listener();
    });
    this.sinks.add(sink);
    if (this.stopping) {
      sink.end();
      return;
    }
    reply.start(sink);
  }

  endAll(): void {
    this.stopping = true;
    for (const sink of [...this.sinks]) sink.end();
  }
}

function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+');
  return new RegExp(`^${escaped.replace(/\/$/, '')}/?$`);
}

/** Every migration the service runs with these plugins: the host's, then each plugin's. */
export function migrationsOf(plugins: HostPlugin[]): Record<string, Migration> {
  const migrations: Record<string, Migration> = { ...hostMigrations };
  for (const plugin of plugins) Object.assign(migrations, plugin.migrations ?? {});
  return migrations;
}

/**
 * Builds the service: runs migrations, creates the host, registers the host core and the
 * plugins, and mounts every registered route with the API conventions (token auth,
 * access checks, JSON bodies, transactions for writes, one error middleware).
 */
export async function createApp(deps: AppDeps): Promise<App> {
  enableLinearRegExps();
  const log = deps.log ?? consoleLogger;
  const plugins = deps.plugins ?? defaultPlugins(deps.config, deps.configDir ?? process.cwd());
  checkPlugins(plugins);

  await migrate(deps.db, migrationsOf(plugins));

  const host = createHost({ db: deps.db, clock: deps.clock, config: deps.config, log });
  registerHostCore(host);
  for (const plugin of plugins) {
    await plugin.register(host);
    host.plugins.set(plugin.name, plugin.version);
  }

  const app = express();
  app.disable('x-powered-by');
  // A Host not allowed is refused before anything else runs (DNS rebinding; URLs built from it).
  const allowedHosts = new AllowedHosts(deps.config.host.allowed_hosts);
  app.use(allowedHosts.guard);
  // Answers are computed per request; no ETag hashing of every body.
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((req: Request, res: Response, next: NextFunction) => {
    // Its sender may have seen another process commit: its reads see the versions as they are now.
    versionsMayHaveMoved();
    res.setHeader('API-Version', API_VERSION);
    res.locals.requestId = randomUUID();
    if (['POST', 'PUT', 'PATCH'].includes(req.method) && hasBody(req) && !req.is('application/json')) {
      next(
        new UnsupportedMediaType(
          `Unsupported media type "${req.headers['content-type'] ?? ''}" in request. Use application/json.`,
        ),
      );
      return;
    }
    next();
  });
  const json = express.json({ limit: '1mb', type: 'application/json', verify: requireUtf8 });
  // Only a request with a body goes through the parser (body-parser's own test, type-is's
  // `hasBody`): without one it would only find so, at some allocation for every read.
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length'])))
      json(req, res, next);
    else next();
  });
  app.use((req: Request, _res: Response, next: NextFunction) => {
    if (req.body !== undefined) checkJsonBody(req.body);
    next();
  });

  const streams = new OpenStreams();
  const idempotency = new IdempotencyKeys();

  const routeIndex = new RouteIndex();
  // On SQLite a read of the versions stays in the process (the reader connection): nothing to save.
  const deferChecks = databaseKind(host.db) === 'postgres';
  const mount = (route: RouteDef): void => {
    const writes = route.writes ?? route.method !== 'GET';
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    const singleParams = (route.query ?? []).filter((q) => !q.repeated && !q.name.startsWith('<')).map((q) => q.name);
    // A write that opens its transaction, without an idempotency key or a branch header (which
    // are read before it, on the caller's behalf): on PostgreSQL the caller's kept identity and
    // permission rows are served without a round trip for the versions, and the transaction
    // confirms them under the write lock (`UncheckedReads`). Stale, or an error before the
    // transaction began: the request runs again from the start, every read checked.
    const confirmsInTransaction = deferChecks && writes && route.transaction !== false;
    /** One request: `unchecked` serves kept answers unchecked; `stage.began` tells when its transaction began. */
    const serve = async (
      req: Request,
      res: Response,
      unchecked?: UncheckedReads,
      stage?: { began: boolean },
    ): Promise<void> => {
      let user: AuthUser | null = null;
      const address = req.socket.remoteAddress ?? 'unknown';
      if (req.headers.authorization !== undefined) {
        // An address that sent too many bad tokens is refused until its window passes.
        const wait = host.credentialThrottle.retryAfter('token', address);
        if (wait > 0) throw new TooManyRequests(wait);
        try {
          user = await host.auth.authenticate(req.headers.authorization, unchecked);
        } catch (err) {
          if (err instanceof AuthenticationFailed) host.credentialThrottle.fail('token', address);
          if (!('public' in route.access)) throw err;
        }
      }
      if (!('public' in route.access)) {
        if (!user) throw new AuthenticationFailed('Authentication credentials were not provided.');
        if ('permission' in route.access) {
          const perms = await host.permissions.forUser(user, undefined, unchecked);
          if (!perms.has(route.access.permission)) throw new PermissionDenied();
        }
        if (writes && !user.writeEnabled) throw new PermissionDenied('This token does not permit write operations.');
      }
      const url = new URL(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
      const requestId = res.locals.requestId as string;
      const baseUrl = `${url.protocol}//${url.host}`;
      const branchHeader = req.headers['x-netbox-branch'];
      // A key is per caller: anonymous calls (and reads) never replay anything.
      const key = route.method !== 'GET' && user ? readIdempotencyKey(req.headers['idempotency-key']) : null;
      let claim: IdempotencyClaim | null = null;
      if (key && user) {
        const branchName = (Array.isArray(branchHeader) ? branchHeader[0] : branchHeader) ?? null;
        claim = idempotency.claim(
          user.id,
          key,
          fingerprintOf({
            method: req.method,
            pathAndQuery: url.pathname + url.search,
            branch: branchName,
            body: req.body,
          }),
        );
      }
      try {
        if (claim) {
          const stored = await idempotency.storedAnswer(host.db, claim, host.clock.now());
          if (stored) {
            res.setHeader(IDEMPOTENT_REPLAY_HEADER, 'true');
            send(req, res, stored);
            return;
          }
        }
        const branch =
          branchHeader === undefined
            ? null
            : await resolveBranchHeader(createCtx({ host, user, requestId, baseUrl }), branchHeader);
        const query = parseQueryString(url.search);
        requireSingle(query, singleParams);
        const body = route.body ? validate(route.body, req.body ?? {}) : req.body;
        const ctx = createCtx({ host, user, requestId, baseUrl, branch });
        const header = (name: string): string | undefined => {
          const value = req.headers[name.toLowerCase()];
          return Array.isArray(value) ? value.join(', ') : value;
        };
        const input = { params: req.params as Record<string, string>, query, body, url, address, header };
        let replayed = false;
        const respond = async (tx: Ctx): Promise<Answer | StreamReply> => {
          if (claim && tx.inTransaction) {
            // Asked again inside the write's transaction: the same request sent to another
            // instance may have committed while this one waited for its turn to write.
            const stored = await idempotency.storedAnswer(tx.db, claim, host.clock.now());
            if (stored) {
              replayed = true;
              return stored;
            }
          }
          const result = await route.handler({ ...input, ctx: tx });
          if (result instanceof StreamReply) return result;
          const answer = answerOf(route, result);
          // Kept in the write's own transaction: remembered exactly when the write commits.
          if (claim && answer.status < 400) await idempotency.remember(tx.db, claim, answer, host.clock.now());
          return answer;
        };
        if (stage) stage.began = true;
        const outcome =
          writes && route.transaction !== false ? await inTransaction(ctx, respond, unchecked) : await respond(ctx);
        if (writes) await loopTurn();
        if (outcome instanceof StreamReply) streams.open(req, res, outcome);
        else {
          if (replayed) res.setHeader(IDEMPOTENT_REPLAY_HEADER, 'true');
          send(req, res, outcome);
        }
      } finally {
        claim?.release();
      }
    };
    routeIndex.add(method, route.path, async (req: Request, res: Response) => {
      if (
        !confirmsInTransaction ||
        req.headers['idempotency-key'] !== undefined ||
        req.headers['x-netbox-branch'] !== undefined
      )
        return serve(req, res);
      const unchecked = new UncheckedReads();
      const stage = { began: false };
      try {
        await serve(req, res, unchecked, stage);
      } catch (err) {
        if (
          unchecked.size === 0 ||
          err instanceof AuthenticationFailed ||
          (stage.began && !(err instanceof UncheckedReadsStale))
        )
          throw err;
        await serve(req, res);
      }
    });
  };
  for (const route of host.routes.all()) mount(route);
  app.use(routeIndex.dispatch);

  const patterns = host.routes.all().map((r) => ({ pattern: pathPattern(r.path), method: r.method }));
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const path = req.path;
    const allowed = patterns.filter((p) => p.pattern.test(path)).map((p) => p.method);
    if (allowed.length > 0) next(new MethodNotAllowed(`Method "${req.method}" not allowed.`));
    else next(new NotFound());
  });
  app.use(errorMiddleware(log));

  return { app, host, endStreams: () => streams.endAll(), allowHost: (address) => allowedHosts.allow(address) };
}

/**
 * The HTTP server that serves `app`, whose requests and responses are made as Express's own
 * from the start (their prototypes `app.request` and `app.response`).
 *
 * Express otherwise gives every request and response Node made its own prototype when it
 * handles them (`Object.setPrototypeOf`). V8 then keeps each such object, and what it refers
 * to, alive through the young generation's collections until the next full collection: with
 * keep-alive connections every request's and response's objects were promoted to the old
 * generation, filling it towards the next full collection (a detail read promoted 9.5 kB, 2.4
 * kB since; a write-then-read pair 38 kB, 20 kB since, and 5-6 full collections per 1,000 pairs
 * became 3: docs/performance.md, "Requests made as Express's"). Made with the right prototype, Express's
 * own `setPrototypeOf` finds it already in place and changes nothing.
 */
export function serverFor(app: Express, limits: { maxConnections?: number } = {}): Server {
  return limitServer(
    createServer(
      {
        ...SERVER_OPTIONS,
        IncomingMessage: madeAs<typeof IncomingMessage>(IncomingMessage, app.request),
        ServerResponse: madeAs<typeof ServerResponse>(ServerResponse, app.response),
      },
      app,
    ),
    limits,
  );
}

/**
 * A constructor that builds what Node's `base` builds (its request or its response, which take
 * at most two arguments), with `prototype` as the made object's prototype: `base` initialises
 * the object `new` made, as Node's own constructors are functions that set up `this`. Not
 * `Reflect.construct(base, args, Made)`: that cost each detail read 0.05–0.09 ms more CPU.
 */
function madeAs<C extends abstract new (...args: never[]) => object>(base: C, prototype: object): C {
  const init = base as unknown as (this: object, first: unknown, second: unknown) => void;
  function Made(this: object, first: unknown, second: unknown): void {
    init.call(this, first, second);
  }
  Made.prototype = prototype;
  return Made as unknown as C;
}
