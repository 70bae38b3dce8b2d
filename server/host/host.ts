import type { HostDb, Migration } from './db/database';
import type { Clock } from './core/clock';
import type { Config } from './core/config';
import type { BackgroundTask, HostServices, MainWriteGuard } from './core/context';
import { BranchHooks, MergeValidators } from './core/hooks';
import type { Logger } from './core/logger';
import { ReadMemo } from './cache/read-memo';
import { SearchRegistry } from './core/search';
import { CredentialThrottle } from './core/throttle';
import type { VersionRange } from './core/version';
import { EventBus } from './events/bus';
import { TokenAuthenticator } from './http/auth';
import { RouteRegistry } from './http/routes';
import { BranchStateKeepers } from './objects/branch-state-keepers';
import { changeConflictsKeeper } from './objects/change-conflicts-repository';
import { ObjectTypeRegistry } from './objects/object-types';
import { RelatedVisibility } from './objects/related-visibility';
import { PermissionService } from './users/object-permissions';
import { UnawaitedWork } from './core/unawaited';

export type { BackgroundTask, MainWriteGuard };

/** A plugin that cannot run on this host (range, requirements, loading): the service refuses to start. */
export class PluginError extends Error {}

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
 * The host as the host's own parts and the plugins see it while they register: its services
 * (what domain code reaches through `ctx.host`), the route table and token authentication.
 */
export interface Host extends HostServices {
  readonly routes: RouteRegistry;
  readonly auth: TokenAuthenticator;
}

export interface HostDeps {
  db: HostDb;
  clock: Clock;
  config: Config;
  log: Logger;
}

export function createHost(deps: HostDeps): Host {
  const readMemo = new ReadMemo(deps.config.host.read_cache_entries, deps.db);
  const host: Host = {
    ...deps,
    routes: new RouteRegistry(),
    objectTypes: new ObjectTypeRegistry(),
    permissions: new PermissionService(deps.db, readMemo),
    events: new EventBus(readMemo),
    branchHooks: new BranchHooks(),
    mergeValidators: new MergeValidators(),
    mainWriteGuards: [],
    userDeletionGuards: [],
    search: new SearchRegistry(),
    relatedVisibility: new RelatedVisibility(),
    plugins: new Map(),
    background: [],
    unawaited: new UnawaitedWork(),
    readMemo,
    branchState: new BranchStateKeepers(),
    credentialThrottle: new CredentialThrottle(deps.clock),
    get auth(): TokenAuthenticator {
      return auth;
    },
  };
  const auth = new TokenAuthenticator(host);
  host.branchState.register(changeConflictsKeeper());
  return host;
}
