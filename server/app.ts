import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Clock } from './host/core/clock';
import type { Config } from './host/core/config';
import { MethodNotAllowed, NotFound, UnsupportedMediaType } from './host/core/errors';
import { createHost, PluginError, type Host, type HostPlugin } from './host/host';
import { consoleLogger, type Logger } from './host/core/logger';
import { HOST_VERSION, API_VERSION, inRange, satisfiesRequirement } from './host/core/version';
import { migrate, type HostDb, type Migration } from './host/db/database';
import { hostMigrations } from './host/db/migrations/host';
import { errorMiddleware } from './host/http/error-middleware';
import { RequestPipeline } from './host/http/pipeline';
import { RouteIndex, type Method } from './host/http/route-index';
import { checkJsonBody, requireUtf8 } from './host/http/body-guard';
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

  // Each route's requests go through the stages of `RequestPipeline`, found by the route index.
  const pipeline = new RequestPipeline(host);
  const routeIndex = new RouteIndex();
  for (const route of host.routes.all())
    routeIndex.add(route.method.toLowerCase() as Method, route.path, pipeline.handlerOf(route));
  app.use(routeIndex.dispatch);

  const patterns = host.routes.all().map((r) => ({ pattern: pathPattern(r.path), method: r.method }));
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const path = req.path;
    const allowed = patterns.filter((p) => p.pattern.test(path)).map((p) => p.method);
    if (allowed.length > 0) next(new MethodNotAllowed(`Method "${req.method}" not allowed.`));
    else next(new NotFound());
  });
  app.use(errorMiddleware(log));

  return {
    app,
    host,
    endStreams: () => pipeline.streams.endAll(),
    allowHost: (address) => allowedHosts.allow(address),
  };
}

/**
 * The HTTP server that serves `app`, whose requests and responses are made as Express's own
 * from the start (their prototypes `app.request` and `app.response`). Express otherwise gives
 * every request and response its own prototype when it handles them (`Object.setPrototypeOf`),
 * which makes V8 keep them alive through young-generation collections; made with the right
 * prototype, Express finds it already in place and changes nothing.
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
 * the object `new` made, as Node's own constructors are functions that set up `this` (cheaper
 * than `Reflect.construct(base, args, Made)`).
 */
function madeAs<C extends abstract new (...args: never[]) => object>(base: C, prototype: object): C {
  const init = base as unknown as (this: object, first: unknown, second: unknown) => void;
  function Made(this: object, first: unknown, second: unknown): void {
    init.call(this, first, second);
  }
  Made.prototype = prototype;
  return Made as unknown as C;
}
