import assert from 'node:assert/strict';
import type { ApiClient, ApiResponse, TestService } from '../../../support/service';
import { forEachTest, forSuite } from '../../../support/prepared';
import {
  act,
  actor,
  AUTHOR,
  branch,
  changesOf,
  COMMENTS,
  created,
  device,
  DEVICES,
  expectStatus,
  ok,
  openRequest,
  policy,
  REVIEWER,
  REVIEWS,
  VIEW_ALL,
  type Actor,
  type PermissionGrant,
} from './fixtures';

/**
 * The people and the policy the review and comment tests share: alice (an author), bob and
 * carol (who may approve; the rule needs `minReviews` approvals), dave (sees everything, holds
 * no write permission of the plugin), and a policy on devices. Creating them once per service
 * keeps the suites fast; each test then opens its own change request with `scene`.
 */
export interface World {
  svc: TestService;
  alice: Actor;
  bob: Actor;
  carol: Actor;
  dave: Actor;
  policyId: number;
}

export interface WorldOptions {
  /** Check names the policy carries (e.g. `threads-resolved`). */
  checks?: string[];
  /** Approvals the rule needs (default 1). */
  minReviews?: number;
}

export async function world(svc: TestService, options: WorldOptions = {}): Promise<World> {
  const alice = await actor(svc, 'alice', AUTHOR);
  const bob = await actor(svc, 'bob', REVIEWER);
  const carol = await actor(svc, 'carol', REVIEWER);
  const dave = await actor(svc, 'dave', VIEW_ALL);
  const p = await policy(svc, {
    name: 'Devices',
    object_types: ['dcim.device'],
    checks: options.checks ?? [],
    rules: [{ name: 'netops', min_reviews: options.minReviews ?? 1, users: [bob.id, carol.id] }],
  });
  return { svc, alice, bob, carol, dave, policyId: p.id };
}

/** A change request of alice's: her branch changed two devices. */
export interface Scene extends World {
  /** Alice working inside her branch. */
  inBranch: ApiClient;
  branchId: number;
  cr: { id: number; status: string };
  /** Two devices of the branch. */
  devices: Array<{ id: number; name: string }>;
  /** The branch's changes: one per device, in the order of `devices`. */
  changes: Array<{ id: number; object_id: number; object_repr: string }>;
}

export interface SceneOptions {
  /** Submit the request for review (default true). */
  submit?: boolean;
}

let scenes = 0;

export async function scene(w: World, options: SceneOptions = {}): Promise<Scene> {
  const n = ++scenes;
  const { branch: b, inBranch } = await branch(w.alice.client, `add-routers-${n}`);
  const devices = [
    await device(inBranch, { name: `router${n}a`, status: 'planned' }),
    await device(inBranch, { name: `router${n}b`, status: 'planned' }),
  ];
  const cr = await openRequest(w.alice.client, b.id, { ref: `CHG-${n}` });
  const all = await changesOf(w.svc, b.id);
  const changes = devices.map((d) => {
    const c = all.find((x) => x.object_type === 'dcim.device' && x.object_id === d.id);
    assert.ok(c, `a change for device ${d.name}`);
    return c;
  });
  let status = cr.status as string;
  if (options.submit ?? true) status = (await ok(act(w.alice.client, cr.id, 'submit'), 'submit')).status;
  return { ...w, inBranch, branchId: b.id, cr: { id: cr.id, status }, devices, changes };
}

/** For the enclosing describe (whose service is `svc`): the world made once, and a fresh scene of it before each test. */
export function scenePerTest(svc: TestService, options: WorldOptions = {}): Scene {
  const w = forSuite(() => world(svc, options));
  return forEachTest(() => scene(w));
}

/** Edits a device inside the scene's branch (the branch moves on). */
export async function editInBranch(
  s: Scene,
  index = 0,
  attrs: Record<string, unknown> = { status: 'active' },
): Promise<void> {
  await ok(s.inBranch.patch(`${DEVICES}${s.devices[index]!.id}/`, attrs), 'edit in branch');
}

/** A second branch of alice's with its own change (for comments anchored to the wrong branch). */
export async function otherBranchChange(s: Scene): Promise<{ branchId: number; changeId: number }> {
  const { branch: b, inBranch } = await branch(s.alice.client, `elsewhere-${++scenes}`);
  const d = await device(inBranch, { name: `switch${scenes}` });
  const change = (await changesOf(s.svc, b.id)).find((c) => c.object_id === d.id);
  assert.ok(change);
  return { branchId: b.id, changeId: change.id };
}

export function postReview(client: ApiClient, body: Record<string, unknown>): Promise<ApiResponse> {
  return client.post(REVIEWS, body);
}

export function postComment(client: ApiClient, body: Record<string, unknown>): Promise<ApiResponse> {
  return client.post(COMMENTS, body);
}

/** Creates a root comment on the scene's request (on change `index`); returns it. */
export async function rootComment(s: Scene, client: ApiClient, text = 'Why planned?', index = 0): Promise<any> {
  return created(
    postComment(client, { change_request: s.cr.id, change_diff: s.changes[index]!.id, text }),
    'root comment',
  );
}

/** Creates a reply (the request and change are taken from the scene). */
export async function reply(s: Scene, client: ApiClient, parent: number, text = 'Because.', index = 0): Promise<any> {
  return created(
    postComment(client, { change_request: s.cr.id, change_diff: s.changes[index]!.id, text, parent }),
    'reply',
  );
}

/** The review rows of a request, as admin sees them. */
export async function reviewsOf(svc: TestService, changeRequestId: number): Promise<any[]> {
  return (await ok(svc.admin.get(`${REVIEWS}?change_request_id=${changeRequestId}&limit=1000`))).results;
}

/** The comments of a request, as admin sees them. */
export async function commentsOf(svc: TestService, changeRequestId: number): Promise<any[]> {
  return (await ok(svc.admin.get(`${COMMENTS}?change_request_id=${changeRequestId}&limit=1000`))).results;
}

/** Events emitted on the host's pipeline, recorded in process (inside the emitting transaction). */
export function recordEvents(
  svc: TestService,
): Array<{ event: string; objectType: string; objectId: number; data: any }> {
  const seen: Array<{ event: string; objectType: string; objectId: number; data: any }> = [];
  svc.host.events.subscribe(async (_ctx, e) => {
    seen.push({ event: e.event, objectType: e.objectType, objectId: e.objectId, data: e.data });
  });
  return seen;
}

/** A webhook and an event rule that sends the given events of change requests to `url`. */
export async function hookEvents(svc: TestService, url: string, events: string[]): Promise<void> {
  const hook = await created(svc.admin.post('/api/extras/webhooks/', { name: 'reviews', payload_url: url }), 'webhook');
  await created(
    svc.admin.post('/api/extras/event-rules/', {
      name: 'review events',
      object_types: ['change_control.changerequest'],
      event_types: events,
      action_type: 'webhook',
      action_object_id: hook.id,
    }),
    'event rule',
  );
}

/** Committed webhook deliveries of one event (the durable outbox: refused writes leave none). */
export async function queuedDeliveries(svc: TestService, event: string): Promise<Array<{ body: any }>> {
  const rows = await svc.host.db
    .selectFrom('webhook_outbox')
    .selectAll()
    .where('event', '=', event)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ body: JSON.parse(r.body) }));
}

/** A user holding exactly these permissions (besides seeing everything unless `viewAll` is false). */
export async function withPermissions(
  svc: TestService,
  username: string,
  grants: PermissionGrant[],
  viewAll = true,
): Promise<Actor> {
  return actor(svc, username, [...(viewAll ? VIEW_ALL : []), ...grants]);
}

/** Turns every permission naming `userId` off (so later grants alone decide). */
export async function revokeAll(svc: TestService, userId: number): Promise<void> {
  const perms = (await ok(svc.admin.get('/api/users/permissions/?limit=1000'))).results as Array<{
    id: number;
    users: number[];
  }>;
  for (const p of perms)
    if (p.users.includes(userId))
      expectStatus(await svc.admin.delete(`/api/users/permissions/${p.id}/`), 204, `revoke ${p.id}`);
}

/** Asserts a 400 whose body names `field` (field errors) or mentions `words` (detail). */
export function assertRefused(res: ApiResponse, field: string | null, words?: RegExp): void {
  expectStatus(res, 400);
  if (field) assert.ok(Array.isArray(res.body[field]), `400 names ${field}: ${JSON.stringify(res.body)}`);
  if (words) assert.match(JSON.stringify(res.body), words);
}
