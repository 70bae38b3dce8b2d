import assert from 'node:assert/strict';
import { withTables } from '../../../../server/host/db/database';
import type { ChangeControlTables } from '../../../../server/plugins/change-control/db/tables';
import type { ApiClient, ApiResponse, TestService } from '../../../support/service';
import { actor, createUser, grant, type Actor, type PermissionGrant } from '../../host/users/fixtures';

export const CC = '/api/plugins/change-control/';
export const POLICIES = `${CC}policies/`;
export const RULES = `${CC}policy-rules/`;
export const REQUESTS = `${CC}change-requests/`;
export const REVIEWS = `${CC}reviews/`;
export const CHECKS = `${CC}checks/`;
export const COMMENTS = `${CC}change-comments/`;
export const BRANCHES = '/api/plugins/branching/branches/';
export const CHANGES = '/api/plugins/branching/changes/';
export const DEVICES = '/api/dcim/devices/';
export const SITES = '/api/dcim/sites/';

export { actor, createUser, grant, type Actor, type PermissionGrant };

/** The service's database with the plugin's tables typed (for tests that look at rows directly). */
export function ccDb(svc: TestService) {
  return withTables<ChangeControlTables>(svc.host.db);
}

/** Every change-control model, for grants. */
export const CC_TYPES = [
  'change_control.changerequest',
  'change_control.policy',
  'change_control.policyrule',
  'change_control.review',
  'change_control.mergecheck',
  'change_control.changecomment',
];

/** Seeing everything: view on the plugin's models, branches, changes and the catalogue. */
export const VIEW_ALL: PermissionGrant[] = [
  { object_types: CC_TYPES, actions: ['view'] },
  { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] },
  { object_types: ['dcim.device', 'dcim.site', 'ipam.prefix'], actions: ['view'] },
];

/** What an author needs: branches and objects in them, change requests, comments. */
export const AUTHOR: PermissionGrant[] = [
  ...VIEW_ALL,
  { object_types: ['branching.branch'], actions: ['add', 'change', 'sync'] },
  { object_types: ['dcim.device', 'dcim.site', 'ipam.prefix'], actions: ['add', 'change', 'delete'] },
  { object_types: ['change_control.changerequest'], actions: ['add', 'change'] },
  { object_types: ['change_control.changecomment'], actions: ['add'] },
];

/** What a reviewer needs: view, review, comment, resolve threads. */
export const REVIEWER: PermissionGrant[] = [
  ...VIEW_ALL,
  { object_types: ['change_control.review'], actions: ['add', 'change'] },
  { object_types: ['change_control.changecomment'], actions: ['add', 'change'] },
];

/**
 * People for the tests of the enclosing `describe` (whose service is `svc`), each `[username,
 * grants]`, created in this order before its first test:
 * `const [author, reviewer] = actorsForSuite(svc, ['alice', AUTHOR], ['bob', REVIEWER]);`
 */
export function actorsForSuite<S extends Array<[string, PermissionGrant[]]>>(
  svc: TestService,
  ...people: S
): { [K in keyof S]: Actor } {
  const made = people.map(() => ({}) as Actor);
  before(async () => {
    for (const [i, [username, grants]] of people.entries()) Object.assign(made[i]!, await actor(svc, username, grants));
  });
  return made as { [K in keyof S]: Actor };
}

export function expectStatus(res: ApiResponse, status: number, what = ''): void {
  assert.equal(res.status, status, `${what} ${JSON.stringify(res.body)}`.trim());
}

/** Each body posted to `path` is refused with a 4xx whose body names the problem (never a 5xx). */
export async function expectEachRefused(client: ApiClient, path: string, bodies: readonly unknown[]): Promise<void> {
  for (const body of bodies) {
    const res = await client.post(path, body);
    assert.ok(res.status >= 400 && res.status < 500, `${JSON.stringify(body)} → ${res.status}`);
    assert.ok(res.body && typeof res.body === 'object', `${JSON.stringify(body)} names the problem`);
  }
}

/** The malformed input a collection of the plugin is given, and who sends it (see expectMalformedInputRefused). */
export interface MalformedInput {
  /** Creates: each body POSTed by `poster` is a 4xx naming the problem. */
  poster: ApiClient;
  bodies: readonly unknown[];
  /** Edits by `editor`: `patch` (well-formed) on each malformed or unknown id is 404, as is a DELETE of it. */
  editor: ApiClient;
  patch: Record<string, unknown>;
  ids: readonly string[];
  /** Each of `patches` on the existing object `existing` is 400. */
  existing: number;
  patches: readonly unknown[];
}

/**
 * Client input on a collection never yields a 5xx: malformed bodies (and a truncated JSON body)
 * are a 4xx naming the problem, malformed ids a 404, malformed patches a 400.
 */
export async function expectMalformedInputRefused(path: string, input: MalformedInput): Promise<void> {
  await expectEachRefused(input.poster, path, input.bodies);
  expectStatus(
    await input.poster.post(path, undefined, {
      raw: '{"change_request": ',
      headers: { 'Content-Type': 'application/json' },
    }),
    400,
    'truncated JSON',
  );
  for (const id of input.ids) {
    expectStatus(await input.editor.patch(`${path}${id}/`, input.patch), 404, `PATCH ${id}`);
    expectStatus(await input.editor.delete(`${path}${id}/`), 404, `DELETE ${id}`);
  }
  for (const body of input.patches)
    expectStatus(await input.editor.patch(`${path}${input.existing}/`, body), 400, JSON.stringify(body));
}

export async function created<T = any>(res: Promise<ApiResponse<T>>, what = ''): Promise<T> {
  const r = await res;
  expectStatus(r, 201, what);
  return r.body;
}

export async function ok<T = any>(res: Promise<ApiResponse<T>>, what = ''): Promise<T> {
  const r = await res;
  expectStatus(r, 200, what);
  return r.body;
}

export async function group(svc: TestService, name: string, members: number[] = []): Promise<number> {
  const g = await created(svc.admin.post('/api/users/groups/', { name }), `group ${name}`);
  for (const userId of members) {
    const user = await ok(svc.admin.get(`/api/users/users/${userId}/`));
    await ok(
      svc.admin.patch(`/api/users/users/${userId}/`, { groups: [...user.groups, g.id] }),
      `add ${userId} to ${name}`,
    );
  }
  return g.id as number;
}

export interface PolicySpec {
  name: string;
  object_types?: string[];
  conditions?: unknown;
  condition_state?: 'either' | 'before' | 'after';
  checks?: string[];
  weight?: number;
  enabled?: boolean;
  rules?: Array<{ name: string; min_reviews?: number; users?: number[]; groups?: number[] }>;
}

/** Creates a policy and its rules as admin; returns the policy with `rules` (the created rules). */
export async function policy(
  svc: TestService,
  spec: PolicySpec,
): Promise<{ id: number; rules: Array<{ id: number; name: string }> }> {
  const { rules = [], ...fields } = spec;
  const p = await created(svc.admin.post(POLICIES, fields), `policy ${spec.name}`);
  const made = [];
  for (const r of rules) made.push(await created(svc.admin.post(RULES, { policy: p.id, ...r }), `rule ${r.name}`));
  return { id: p.id, rules: made };
}

export interface BranchWork {
  branch: { id: number; schema_id: string; name: string };
  inBranch: ApiClient;
}

/** A branch created by `client`, and that client working inside it. */
export async function branch(client: ApiClient, name: string): Promise<BranchWork> {
  const b = await created(client.post(BRANCHES, { name }), `branch ${name}`);
  return { branch: b, inBranch: client.inBranch(b.schema_id) };
}

/** Creates a device (in the client's branch, if any); returns it. */
export async function device(client: ApiClient, attrs: Record<string, unknown>): Promise<any> {
  return created(client.post(DEVICES, attrs), `device ${JSON.stringify(attrs)}`);
}

export async function openRequest(
  client: ApiClient,
  branchId: number,
  fields: Record<string, unknown> = {},
): Promise<any> {
  return created(client.post(REQUESTS, { branch: branchId, ...fields }), 'change request');
}

export async function act(
  client: ApiClient,
  id: number,
  action: 'submit' | 'return-to-draft' | 'abandon' | 'reopen',
): Promise<ApiResponse> {
  return client.post(`${REQUESTS}${id}/${action}/`, {});
}

export async function detail(client: ApiClient, id: number): Promise<any> {
  return ok(client.get(`${REQUESTS}${id}/`), `change request ${id}`);
}

export async function review(
  client: ApiClient,
  id: number,
  decision: 'approve' | 'reject' | 'comment',
  comment = '',
): Promise<ApiResponse> {
  return client.post(REVIEWS, { change_request: id, decision, comment });
}

export async function checksOf(client: ApiClient, id: number): Promise<any[]> {
  return (await ok(client.get(`${CHECKS}?change_request_id=${id}&limit=1000`))).results;
}

export async function checkNamed(client: ApiClient, id: number, name: string): Promise<any> {
  const res = await ok(client.get(`${CHECKS}?change_request_id=${id}&name=${encodeURIComponent(name)}`));
  assert.equal(res.count, 1, `check ${name} on request ${id}: ${JSON.stringify(res.results)}`);
  return res.results[0];
}

/** The changes of a branch (as admin sees them). */
export async function changesOf(svc: TestService, branchId: number): Promise<any[]> {
  return (await ok(svc.admin.get(`${CHANGES}?branch_id=${branchId}&limit=1000`))).results;
}

/** Values `custom_fields` refuses (400 naming it): anything but a JSON object, or one over 65,536 characters as JSON. */
export const NOT_CUSTOM_FIELDS: unknown[] = [
  null,
  [1],
  'text',
  5,
  true,
  { a: 'x'.repeat(40_000), b: 'x'.repeat(40_000) },
];

/** What the changelog kept of `custom_fields` for an object, oldest first: [prechange, postchange] per entry. */
export async function customFieldsLog(client: ApiClient, objectType: string, id: number): Promise<unknown[][]> {
  const log = await ok(
    client.get(`/api/core/object-changes/?changed_object_type=${objectType}&changed_object_id=${id}&limit=1000`),
  );
  return (log.results as Array<{ id: number; prechange_data: any; postchange_data: any }>)
    .sort((a, b) => a.id - b.id)
    .map((e) => [e.prechange_data?.custom_fields, e.postchange_data?.custom_fields]);
}

/** Each value of NOT_CUSTOM_FIELDS, written with `write`, is 400 naming custom_fields. */
export async function expectCustomFieldsRefused(
  write: (custom_fields: unknown) => Promise<ApiResponse>,
): Promise<void> {
  for (const value of NOT_CUSTOM_FIELDS) {
    const res = await write(value);
    expectStatus(res, 400, JSON.stringify(value).slice(0, 40));
    assert.ok(res.body.custom_fields, JSON.stringify(res.body).slice(0, 300));
  }
}
