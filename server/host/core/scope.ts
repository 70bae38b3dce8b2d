import type { Queryable } from '../db/database';
import type { Clock } from './clock';
import type { Config } from './config';
import type { AuthUser, BranchRef } from './identity';
import type { Logger } from './logger';

/** The host's services that need nothing of a request: time, configuration, the log. */
export interface CoreServices {
  readonly clock: Clock;
  readonly config: Config;
  readonly log: Logger;
}

/**
 * What every piece of work runs in, whatever reaches it: the database handle (a transaction
 * during writes), the caller, the request id and the branch. The host's services that take
 * the full context (`Ctx`) are written against this, so that they do not depend on `Ctx`
 * (which reaches them).
 */
export interface Scope {
  readonly host: CoreServices;
  readonly db: Queryable;
  readonly user: AuthUser | null;
  readonly requestId: string;
  /** `http://host:port`, used to build `url` fields. */
  readonly baseUrl: string;
  readonly branch: BranchRef | null;
  readonly inTransaction: boolean;
  /** Work to run once the surrounding transaction has committed (deliveries, follow-up merges). */
  afterCommit(task: () => Promise<void> | void): void;
}
