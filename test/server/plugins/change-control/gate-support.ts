import assert from 'node:assert/strict';
import type { MergeJobRow } from '../../../../server/plugins/change-control/db/tables';
import type { ApiClient, ApiResponse, TestService } from '../../../support/service';
import {
  act,
  actor,
  AUTHOR,
  branch,
  BRANCHES,
  detail,
  device,
  expectStatus,
  ok,
  openRequest,
  policy,
  review,
  REVIEWER,
  type Actor,
  type BranchWork,
  type PermissionGrant,
  ccDb,
} from './fixtures';

/** Merging branches (`branching.merge_branch`) on top of what an author holds. */
export const MERGER: PermissionGrant[] = [
  ...AUTHOR,
  { object_types: ['branching.branch'], actions: ['merge', 'delete'] },
];

/** The people of a merge-gate scenario: an author who may merge, and the reviewer a policy names. */
export interface GateCast {
  author: Actor;
  reviewer: Actor;
  /** The policy on `dcim.device` whose one rule names the reviewer. */
  policyId: number;
}

/** Creates the cast and a policy on devices with one rule naming the reviewer. */
export async function gateCast(svc: TestService, authorGrants: PermissionGrant[] = MERGER): Promise<GateCast> {
  const author = await actor(svc, 'author', authorGrants);
  const reviewer = await actor(svc, 'reviewer', REVIEWER);
  const p = await policy(svc, {
    name: 'Devices',
    object_types: ['dcim.device'],
    rules: [{ name: 'netops', users: [reviewer.id] }],
  });
  return { author, reviewer, policyId: p.id };
}

export interface Scenario extends BranchWork {
  cr: any;
}

export interface ScenarioOptions {
  /** Fields of the change request at creation (scheduled_start, auto_merge, ...). */
  fields?: Record<string, unknown>;
  /** How far to take it: `draft`, `needs-review` (submitted) or `approved` (default). */
  upTo?: 'draft' | 'needs-review' | 'approved';
}

/** A branch of the author adding one device, its change request taken to `upTo`. */
export async function scenario(cast: GateCast, name: string, options: ScenarioOptions = {}): Promise<Scenario> {
  const work = await branch(cast.author.client, name);
  await device(work.inBranch, { name: `${name}-dev`, status: 'planned' });
  let cr = await openRequest(cast.author.client, work.branch.id, options.fields ?? {});
  const upTo = options.upTo ?? 'approved';
  if (upTo !== 'draft') {
    cr = await ok(act(cast.author.client, cr.id, 'submit'), 'submit');
    assert.equal(cr.status, 'needs-review');
  }
  if (upTo === 'approved') {
    expectStatus(await review(cast.reviewer.client, cr.id, 'approve'), 201, 'approve');
    cr = await detail(cast.author.client, cr.id);
    assert.equal(cr.status, 'approved');
  }
  return { ...work, cr };
}

export function mergeBranch(client: ApiClient, branchId: number, commit = true): Promise<ApiResponse> {
  return client.post(`${BRANCHES}${branchId}/merge/`, { commit });
}

export async function branchOf(svc: TestService, branchId: number): Promise<any> {
  return ok(svc.admin.get(`${BRANCHES}${branchId}/`), `branch ${branchId}`);
}

/** Devices on main, by name. */
export async function mainDeviceNames(svc: TestService): Promise<string[]> {
  const res = await ok(svc.admin.get('/api/dcim/devices/?limit=1000'));
  return res.results.map((d: { name: string }) => d.name).sort();
}

/** How many changelog rows exist (every write records one). */
export async function changelogCount(svc: TestService): Promise<number> {
  return (await ok(svc.admin.get('/api/core/object-changes/?limit=1'))).count as number;
}

/** Asserts a merge was refused with 409 and that nothing was written: main, the branch, the request and the changelog unchanged. */
export async function assertRefusedMerge(
  svc: TestService,
  client: ApiClient,
  s: Scenario,
  reason: RegExp,
): Promise<string> {
  const mainBefore = await mainDeviceNames(svc);
  const logBefore = await changelogCount(svc);
  const crBefore = await detail(svc.admin, s.cr.id);
  const res = await mergeBranch(client, s.branch.id);
  expectStatus(res, 409, 'merge');
  assert.equal(typeof res.body.detail, 'string');
  assert.match(res.body.detail, reason);
  assert.deepEqual(await mainDeviceNames(svc), mainBefore, 'main is untouched');
  const b = await branchOf(svc, s.branch.id);
  assert.equal(b.status, 'ready', 'the branch is still ready');
  assert.equal(b.merged_time, null);
  assert.equal(await changelogCount(svc), logBefore, 'nothing recorded');
  const crAfter = await detail(svc.admin, s.cr.id);
  assert.equal(crAfter.status, crBefore.status, 'the request did not move');
  return res.body.detail as string;
}

/** The six lifecycle events of contract 4.5. */
export const LIFECYCLE_EVENT_NAMES = [
  'change_request_submitted',
  'change_request_review_requested',
  'review_submitted',
  'change_request_approved',
  'change_request_rejected',
  'change_request_completed',
];

/** A webhook aimed at `payloadUrl` and an event rule sending it every lifecycle event of change requests. */
export async function hookLifecycleEvents(
  svc: TestService,
  payloadUrl: string,
  eventTypes: string[] = LIFECYCLE_EVENT_NAMES,
): Promise<void> {
  const w = await svc.admin.post('/api/extras/webhooks/', { name: 'lifecycle', payload_url: payloadUrl });
  expectStatus(w, 201, 'webhook');
  const r = await svc.admin.post('/api/extras/event-rules/', {
    name: 'lifecycle',
    object_types: ['change_control.changerequest'],
    event_types: eventTypes,
    action_type: 'webhook',
    action_object_id: w.body.id,
  });
  expectStatus(r, 201, 'event rule');
}

/** The queued webhook deliveries (the durable outbox), oldest first: one per event that fired and matched a rule. */
export async function outboxPayloads(svc: TestService): Promise<any[]> {
  const rows = await ccDb(svc).selectFrom('webhook_outbox').select(['event', 'body']).orderBy('id').execute();
  return rows.map((r) => JSON.parse(r.body));
}

/** The events of the outbox concerning one change request, by name, in order. */
export async function eventsOf(svc: TestService, crId: number): Promise<string[]> {
  return (await outboxPayloads(svc)).filter((p) => p.data?.id === crId).map((p) => p.event as string);
}

/** The automatic-merge jobs of a branch. */
export async function mergeJobs(
  svc: TestService,
  branchId: number,
): Promise<Array<{ id: number; state: string; detail: string; change_request_id: number }>> {
  return ccDb(svc)
    .selectFrom('cc_merge_jobs')
    .select(['id', 'state', 'detail', 'change_request_id'])
    .where('branch_id', '=', branchId)
    .orderBy('id')
    .execute();
}

/** An automatic-merge job for the scenario's request (default pending), written straight into the table, as a sweep would queue it; its id. */
export async function insertMergeJob(
  svc: TestService,
  s: Scenario,
  state: MergeJobRow['state'] = 'pending',
): Promise<number> {
  const now = svc.clock.now().toISOString();
  const row = await ccDb(svc)
    .insertInto('cc_merge_jobs')
    .values({ change_request_id: s.cr.id, branch_id: s.branch.id, state, detail: '', created: now, last_updated: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id as number;
}
