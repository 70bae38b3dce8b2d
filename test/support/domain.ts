import { createApp, migrationsOf } from '../../server/app';
import { defaultPlugins } from '../../server/plugins';
import { openTestDatabase } from './database';
import { ManualClock } from '../../server/host/core/clock';
import { parseConfig, type ConfigInput } from '../../server/host/core/config';
import { createCtx, inTransaction, type AuthUser, type Ctx } from '../../server/host/core/context';
import { MemoryLogger } from '../../server/host/core/logger';
import type { Host, HostPlugin } from '../../server/host/host';
import type { NetChange } from '../../server/host/objects/net-effect';
import { saveChange } from '../../server/host/objects/branch-changes-repository';
import { ccDb } from '../../server/plugins/change-control/db/database';
import type { ChangeRequestRow } from '../../server/plugins/change-control/db/tables';

/**
 * The service's domain without HTTP: the host and its plugins on a fresh test database (in memory,
 * or a schema of `TEST_DATABASE_URL`) with a manual clock, and seeds written straight through the repositories, for unit tests that call
 * domain functions as plain functions.
 */
export interface Domain {
  host: Host;
  clock: ManualClock;
  /** A context acting as `user` (default: nobody), outside any transaction. */
  ctx(user?: AuthUser | null): Ctx;
  /** Runs `work` in one write transaction, as the service does for a write. */
  write<T>(work: (tx: Ctx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function startDomain(
  options: { config?: ConfigInput; plugins?: HostPlugin[]; clockStart?: string } = {},
): Promise<Domain> {
  const clock = new ManualClock(options.clockStart ?? '2026-11-01T09:00:00Z');
  const config = parseConfig(options.config ?? {});
  const plugins = options.plugins ?? defaultPlugins(config, process.cwd());
  const database = await openTestDatabase(migrationsOf(plugins));
  const { host } = await createApp({ db: database.db, clock, config, log: new MemoryLogger(), plugins });
  const ctx = (user: AuthUser | null = null) => createCtx({ host, user, requestId: 'unit', baseUrl: 'http://unit' });
  return { host, clock, ctx, write: (work) => inTransaction(ctx(), work), close: () => database.close() };
}

/** The domain of the enclosing `describe`, as a value its tests use directly: started before the first test, closed after the last. */
export function domainForSuite(options: Parameters<typeof startDomain>[0] = {}): Domain {
  const d = {} as Domain;
  before(async () => {
    Object.assign(d, await startDomain(options));
  });
  after(async () => d.close());
  return d;
}

let seq = 0;

/** Seeds: each writes what the service would have written, in one transaction. */
export const seed = {
  async user(d: Domain, username = `user${++seq}`, active = true): Promise<number> {
    const now = d.clock.now().toISOString();
    return d.write(async (tx) => {
      const row = await tx.db
        .insertInto('users')
        .values({
          username,
          password_hash: null,
          first_name: '',
          last_name: '',
          email: '',
          is_superuser: 0,
          is_active: active ? 1 : 0,
          created: now,
          last_updated: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    });
  },

  async branch(d: Domain, name = `branch${++seq}`, status = 'ready'): Promise<number> {
    const now = d.clock.now().toISOString();
    return d.write(async (tx) => {
      const row = await tx.db
        .insertInto('branches')
        .values({
          name,
          description: '',
          status,
          schema_id: `s${++seq}`,
          owner: null,
          last_sync: null,
          merged_time: null,
          merged_by: null,
          created: now,
          last_updated: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    });
  },

  async change(d: Domain, branchId: number, objectType: string, objectId: number, change: NetChange): Promise<void> {
    await d.write((tx) => saveChange(tx, branchId, objectType, objectId, change));
  },

  /** A policy with one rule naming `users` (and `groups`), on `objectTypes`. */
  async policy(
    d: Domain,
    spec: {
      name?: string;
      objectTypes?: string[];
      users?: number[];
      groups?: number[];
      minReviews?: number;
      checks?: string[];
      conditions?: unknown;
    },
  ): Promise<number> {
    const now = d.clock.now().toISOString();
    return d.write(async (tx) => {
      const policy = await ccDb(tx)
        .insertInto('cc_policies')
        .values({
          name: spec.name ?? `policy${++seq}`,
          description: '',
          enabled: 1,
          weight: 100,
          object_types: JSON.stringify(spec.objectTypes ?? []),
          conditions: spec.conditions === undefined ? null : JSON.stringify(spec.conditions),
          condition_state: 'either',
          checks: JSON.stringify(spec.checks ?? []),
          comments: '',
          created: now,
          last_updated: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await ccDb(tx)
        .insertInto('cc_policy_rules')
        .values({
          policy_id: policy.id,
          name: 'review',
          min_reviews: spec.minReviews ?? 1,
          groups: JSON.stringify(spec.groups ?? []),
          users: JSON.stringify(spec.users ?? []),
          created: now,
          last_updated: now,
        })
        .execute();
      return policy.id;
    });
  },

  async changeRequest(
    d: Domain,
    branchId: number,
    requesterId: number,
    fields: Partial<ChangeRequestRow> = {},
  ): Promise<ChangeRequestRow> {
    const now = d.clock.now().toISOString();
    return d.write((tx) =>
      ccDb(tx)
        .insertInto('cc_change_requests')
        .values({
          branch_id: branchId,
          branch_name: `branch ${branchId}`,
          branch_deleted: 0,
          title: `Request for branch ${branchId}`,
          description: '',
          ref: '',
          status: 'needs-review',
          priority: 'medium',
          requester_id: requesterId,
          scheduled_start: null,
          scheduled_end: null,
          auto_merge: 0,
          comments: '',
          approved: 0,
          gates_cleared: 0,
          has_conflicts: 0,
          override_reason: null,
          override_by_id: null,
          override_time: null,
          overridden_reason: null,
          created: now,
          last_updated: now,
          ...fields,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
  },

  async review(
    d: Domain,
    changeRequestId: number,
    reviewerId: number,
    decision: 'approve' | 'reject' | 'comment',
    comment = '',
  ): Promise<void> {
    const now = d.clock.now().toISOString();
    // The reviewer holds what reviewing needs (an approval counts while its reviewer may review).
    await d.write(async (tx) => {
      const name = `reviewer-${reviewerId}`;
      if (await tx.db.selectFrom('permissions').select('id').where('name', '=', name).executeTakeFirst()) return;
      await tx.db
        .insertInto('permissions')
        .values({
          name,
          description: '',
          enabled: 1,
          object_types: JSON.stringify(['change_control.review', 'change_control.changerequest']),
          actions: JSON.stringify(['view', 'add']),
          constraints: null,
          users: JSON.stringify([reviewerId]),
          groups: '[]',
          created: now,
          last_updated: now,
        })
        .execute();
    });
    await d.write((tx) =>
      ccDb(tx)
        .insertInto('cc_reviews')
        .values({
          change_request_id: changeRequestId,
          reviewer_id: reviewerId,
          decision,
          comment,
          stale: 0,
          created: now,
          last_updated: now,
        })
        .execute(),
    );
  },
};

/** A change creating a device in a branch. */
export function createsDevice(name: string): NetChange {
  return { action: 'create', original: null, modified: { name, status: 'planned' } };
}
