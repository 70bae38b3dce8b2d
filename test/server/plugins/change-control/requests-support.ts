import assert from 'node:assert/strict';
import type { ApiClient, ApiResponse, TestService } from '../../../support/service';
import {
  actor,
  AUTHOR,
  BRANCHES,
  branch,
  CC_TYPES,
  created,
  DEVICES,
  device,
  ok,
  openRequest,
  REQUESTS,
  REVIEWER,
  type Actor,
  type PermissionGrant,
} from './fixtures';

/** Helpers for the tests of policies, matching, evaluation and change requests. */

export const CR_TYPE = 'change_control.changerequest';

/** View on everything a change-request test reads, and nothing else. */
export const VIEW_ONLY: PermissionGrant[] = [
  { object_types: CC_TYPES, actions: ['view'] },
  { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] },
  { object_types: ['dcim.device', 'dcim.site', 'ipam.prefix'], actions: ['view'] },
];

/** A pipeline (e.g. `ci`): sees what a change-request test reads and reports checks. */
export const PIPELINE: PermissionGrant[] = [
  ...VIEW_ONLY,
  { object_types: ['change_control.mergecheck'], actions: ['change'] },
];

/** The ids of a list response, in order. */
export function ids(res: ApiResponse): number[] {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.results as Array<{ id: number }>).map((r) => r.id);
}

/** The ids of the change requests a query lists, sorted ascending. */
export async function listed(client: ApiClient, query: string): Promise<number[]> {
  return ids(await client.get(`${REQUESTS}?limit=1000&${query}`)).sort((a, b) => a - b);
}

export async function evaluation(client: ApiClient, id: number): Promise<any> {
  return ok(client.get(`${REQUESTS}${id}/evaluation/`), `evaluation of ${id}`);
}

/** A device created on main (as admin). */
export async function mainDevice(svc: TestService, attrs: Record<string, unknown>): Promise<any> {
  return created(svc.admin.post(DEVICES, attrs), `main device ${JSON.stringify(attrs)}`);
}

/** Updates an object in the client's branch (or on main without one). */
export async function patchObject(
  client: ApiClient,
  path: string,
  id: number,
  attrs: Record<string, unknown>,
): Promise<any> {
  return ok(client.patch(`${path}${id}/`, attrs), `patch ${path}${id}/`);
}

/** A branch of `owner` touching one new device, and a draft change request for it. */
export async function draftRequest(
  owner: Actor,
  name: string,
  fields: Record<string, unknown> = {},
  attrs: Record<string, unknown> = { name: `${name}-dev` },
): Promise<{ cr: any; branchId: number; inBranch: ApiClient; device: any }> {
  const { branch: b, inBranch } = await branch(owner.client, name);
  const dev = await device(inBranch, attrs);
  const cr = await openRequest(owner.client, b.id, fields);
  return { cr, branchId: b.id, inBranch, device: dev };
}

/** The author and reviewer most tests need. */
export async function people(
  svc: TestService,
  extraAuthor: PermissionGrant[] = [],
): Promise<{ author: Actor; reviewer: Actor }> {
  const author = await actor(svc, `author${++people.counter}`, [...AUTHOR, ...extraAuthor]);
  const reviewer = await actor(svc, `reviewer${people.counter}`, REVIEWER);
  return { author, reviewer };
}
people.counter = 0;

/** Merges a branch as admin; returns the response. */
export async function merge(svc: TestService, branchId: number): Promise<ApiResponse> {
  return svc.admin.post(`${BRANCHES}${branchId}/merge/`, { commit: true });
}

/** The object-change rows of a change request, oldest first. */
export async function changelogOfRequest(svc: TestService, id: number): Promise<any[]> {
  return (
    await ok(
      svc.admin.get(
        `/api/core/object-changes/?changed_object_type=${CR_TYPE}&changed_object_id=${id}&limit=1000&ordering=id`,
      ),
    )
  ).results;
}

export { actor, AUTHOR, REVIEWER };
