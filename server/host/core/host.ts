import type { Migration } from 'kysely';
import { CredentialThrottle } from './throttle';
import type { HostDb } from '../db/database';
import { TokenAuthenticator } from '../http/auth';
import { RouteRegistry } from '../http/routes';
import type { Clock } from './clock';
import type { Config } from './config';
import type { Ctx } from './context';
import { EventBus } from '../events/bus';
import { BranchHooks, MergeValidators } from './hooks';
import type { Logger } from './logger';
import { ObjectTypeRegistry } from '../objects/object-types';
import { PermissionService } from '../users/object-permissions';
import { ReadMemo } from './read-memo';
import { SearchRegistry } from './search';
import type { VersionRange } from './version';

/** A plugin that cannot run on this host (range, requirements, loading): the service refuses to start. */
export class PluginError extends Error {}

/** Background work a plugin runs while the service is up (timers, sweeps). */
export interface BackgroundTask {
  start(): void;
  stop(): Promise<void>;
}

/**
 * A plugin of the host: it declares the host range it runs on and the plugins it requires,
 * brings its own migrations, and registers routes, object types, events and hooks.
 */
export interface HostPlugin {
  name: string;
  version: string;
  hostVersion: VersionRange;
  /** Other plugins this one needs, by name, with the version line (`'1.2'` accepts 1.2.x). */
  requires?: Record<string, string>;
  migrations?: Record<string, Migration>;
  register(host: Host): void | Promise<void>;
}

/**
 * Consulted before every direct write of a source-of-truth object on main (no branch).
 * Returns null to allow, or the reason the write is refused (answered as 400 with `detail`).
 */
export type MainWriteGuard = (ctx: Ctx, objectType: string) => Promise<string | null>;

/** The services of the host that routes, domains and plugins use. */
export interface Host {
  readonly db: HostDb;
  readonly clock: Clock;
  readonly config: Config;
  readonly log: Logger;
  readonly routes: RouteRegistry;
  readonly objectTypes: ObjectTypeRegistry;
  readonly permissions: PermissionService;
  readonly events: EventBus;
  readonly branchHooks: BranchHooks;
  readonly mergeValidators: MergeValidators;
  /** Guards of direct writes on main (`protect_main`); merges are not direct writes. */
  readonly mainWriteGuards: MainWriteGuard[];
  readonly search: SearchRegistry;
  /** Loaded plugins and their versions, for `/api/status/`. */
  readonly plugins: Map<string, string>;
  readonly background: BackgroundTask[];
  readonly auth: TokenAuthenticator;
  /** Failed credentials per client address and username (token authentication, token provisioning). */
  readonly credentialThrottle: CredentialThrottle;
  /** Expensive reads reused while the database has not changed. */
  readonly readMemo: ReadMemo;
  /** Drops cached identities and permissions; call after writing users, groups, tokens or permissions. */
  invalidateIdentity(): void;
}

export interface HostDeps {
  db: HostDb;
  clock: Clock;
  config: Config;
  log: Logger;
}

export function createHost(deps: HostDeps): Host {
  const host: Host = {
    ...deps,
    routes: new RouteRegistry(),
    objectTypes: new ObjectTypeRegistry(),
    permissions: new PermissionService(deps.db),
    events: new EventBus(),
    branchHooks: new BranchHooks(),
    mergeValidators: new MergeValidators(),
    mainWriteGuards: [],
    search: new SearchRegistry(),
    plugins: new Map(),
    background: [],
    readMemo: new ReadMemo(),
    credentialThrottle: new CredentialThrottle(deps.clock),
    get auth(): TokenAuthenticator {
      return auth;
    },
    invalidateIdentity(): void {
      auth.invalidate();
      host.permissions.invalidate();
    },
  };
  const auth = new TokenAuthenticator(host);
  return host;
}
