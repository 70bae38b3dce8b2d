// A small change-control world on a real service, for the API client's tests and the end-to-end
// scenarios: an author, a reviewer and a pipeline; a policy whose rule names the reviewer and
// which requires the reported check `ci/build`; a branch that moves a device (conflicting with
// a later write on main) and adds another; its change request, submitted; and a second request
// left as a draft.
import { ApiClient as ExtensionApiClient, type ApiClientOptions } from '../../extension/core/api-client';
import {
  startService,
  type ApiClient,
  type ApiResponse,
  type StartOptions,
  type TestService,
} from '../support/service';

export const CC = '/api/plugins/change-control/';
export const API = {
  users: '/api/users/users/',
  tokens: '/api/users/tokens/',
  permissions: '/api/users/permissions/',
  branches: '/api/plugins/branching/branches/',
  changes: '/api/plugins/branching/changes/',
  devices: '/api/dcim/devices/',
  policies: `${CC}policies/`,
  rules: `${CC}policy-rules/`,
  changeRequests: `${CC}change-requests/`,
  checks: `${CC}checks/`,
  reviews: `${CC}reviews/`,
  comments: `${CC}change-comments/`,
  freezes: `${CC}freezes/`,
} as const;

export interface Actor {
  id: number;
  username: string;
  password: string;
  token: string;
  client: ApiClient;
}

interface Grant {
  object_types: string[];
  actions: string[];
}

const CC_TYPES = [
  'change_control.changerequest',
  'change_control.policy',
  'change_control.policyrule',
  'change_control.review',
  'change_control.mergecheck',
  'change_control.changecomment',
];
const VIEW_ALL: Grant[] = [
  { object_types: CC_TYPES, actions: ['view'] },
  { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] },
  { object_types: ['dcim.device'], actions: ['view'] },
];
/** Branches, devices in them, change requests and their whole lifecycle, comments, merging; reviews (of others' requests). */
export const AUTHOR_GRANTS: Grant[] = [
  ...VIEW_ALL,
  { object_types: ['change_control.review'], actions: ['add', 'change'] },
  { object_types: ['branching.branch'], actions: ['add', 'change', 'sync', 'merge'] },
  { object_types: ['dcim.device'], actions: ['add', 'change', 'delete'] },
  { object_types: ['change_control.changerequest'], actions: ['add', 'change', 'abandon', 'reopen'] },
  { object_types: ['change_control.changecomment'], actions: ['add', 'change'] },
];
/** Reviews, comments and resolving threads. */
export const REVIEWER_GRANTS: Grant[] = [
  ...VIEW_ALL,
  { object_types: ['change_control.review'], actions: ['add', 'change'] },
  { object_types: ['change_control.changecomment'], actions: ['add', 'change'] },
];
/** A pipeline reporting check results. */
export const PIPELINE_GRANTS: Grant[] = [
  { object_types: ['change_control.mergecheck', 'change_control.changerequest'], actions: ['view', 'change'] },
];

export const CHECK_NAME = 'ci/build';
export const RULE_NAME = 'Network team';
export const POLICY_NAME = 'Devices need the network team';

export interface World {
  svc: TestService;
  author: Actor;
  reviewer: Actor;
  pipeline: Actor;
  policy: { id: number; ruleId: number };
  /** The branch under review and its change request (submitted). */
  branch: { id: number; name: string; schemaId: string };
  changeRequest: { id: number; title: string; ref: string };
  /** The change ids of the branch: sw1 moved (conflicting with main on `rack`), sw2 created. */
  changes: { sw1: number; sw2: number };
  /** A second request of the author, left as a draft. */
  draft: { id: number; title: string; branchId: number };
}

async function expect<T = any>(res: Promise<ApiResponse<T>>, status: number, what: string): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

let grantCounter = 0;

/** A user holding exactly these grants, with a token and a client acting as them. */
export async function makeActor(svc: TestService, username: string, grants: Grant[]): Promise<Actor> {
  const password = `${username}-password-1`;
  const user = await expect(svc.admin.post(API.users, { username, password }), 201, `user ${username}`);
  for (const g of grants) {
    await expect(
      svc.admin.post(API.permissions, { name: `${username}-${++grantCounter}`, ...g, users: [user.id] }),
      201,
      `permission for ${username}`,
    );
  }
  const token = await expect(
    svc.admin.post(API.tokens, { user: user.id, description: 'seed' }),
    201,
    `token of ${username}`,
  );
  return { id: user.id, username, password, token: token.key, client: svc.as(token.key) };
}

/** Seeds the world described at the top of this file; the service is fresh. */
export async function seedWorld(svc: TestService): Promise<World> {
  const author = await makeActor(svc, 'alice', AUTHOR_GRANTS);
  const reviewer = await makeActor(svc, 'bob', REVIEWER_GRANTS);
  const pipeline = await makeActor(svc, 'ci', PIPELINE_GRANTS);

  const policy = await expect(
    svc.admin.post(API.policies, { name: POLICY_NAME, object_types: ['dcim.device'], checks: [CHECK_NAME] }),
    201,
    'policy',
  );
  const rule = await expect(
    svc.admin.post(API.rules, { policy: policy.id, name: RULE_NAME, min_reviews: 1, users: [reviewer.id] }),
    201,
    'rule',
  );

  // Main: sw1 in rack R1.
  const sw1 = await expect(
    svc.admin.post(API.devices, { name: 'sw1', status: 'active', rack: 'R1', serial: 'FOC1234X' }),
    201,
    'device sw1',
  );

  // The branch moves sw1 to R2 (planned) and adds sw2.
  const b = await expect(author.client.post(API.branches, { name: 'move-sw1' }), 201, 'branch move-sw1');
  const inBranch = author.client.inBranch(b.schema_id);
  await expect(inBranch.patch(`${API.devices}${sw1.id}/`, { rack: 'R2', status: 'planned' }), 200, 'sw1 in the branch');
  await expect(inBranch.post(API.devices, { name: 'sw2', status: 'planned', rack: 'R2' }), 201, 'sw2 in the branch');
  // Meanwhile main moves sw1 to R3: the branch's rack conflicts with main.
  await expect(svc.admin.patch(`${API.devices}${sw1.id}/`, { rack: 'R3' }), 200, 'sw1 on main');

  const changes = (await expect(svc.admin.get(`${API.changes}?branch_id=${b.id}`), 200, 'changes')).results as {
    id: number;
    object_repr: string;
  }[];
  const changeOf = (name: string) => {
    const c = changes.find((x) => x.object_repr === name);
    if (!c) throw new Error(`no change of ${name} in ${JSON.stringify(changes)}`);
    return c.id;
  };

  const title = 'Move sw1 to rack R2';
  const ref = 'CHG-1042';
  const cr = await expect(
    author.client.post(API.changeRequests, {
      branch: b.id,
      title,
      ref,
      priority: 'high',
      description: 'Rack R1 is being emptied for the new core switches.',
    }),
    201,
    'change request',
  );
  await expect(author.client.post(`${API.changeRequests}${cr.id}/submit/`, {}), 200, 'submit');

  // A second branch and request, left as a draft.
  const b2 = await expect(author.client.post(API.branches, { name: 'add-edge-router' }), 201, 'branch add-edge-router');
  await expect(
    author.client.inBranch(b2.schema_id).post(API.devices, { name: 'edge-router-1', status: 'planned', rack: 'R5' }),
    201,
    'edge-router-1',
  );
  const draftTitle = 'Add edge-router-1';
  const draft = await expect(
    author.client.post(API.changeRequests, { branch: b2.id, title: draftTitle, ref: 'CHG-1043' }),
    201,
    'draft request',
  );

  return {
    svc,
    author,
    reviewer,
    pipeline,
    policy: { id: policy.id, ruleId: rule.id },
    branch: { id: b.id, name: b.name, schemaId: b.schema_id },
    changeRequest: { id: cr.id, title, ref },
    changes: { sw1: changeOf('sw1'), sw2: changeOf('sw2') },
    draft: { id: draft.id, title: draftTitle, branchId: b2.id },
  };
}

/** The id of a check of a request, found the way a pipeline finds it (spec: reporting a result). */
export async function checkId(client: ApiClient, changeRequestId: number, name = CHECK_NAME): Promise<number> {
  const list = await expect(
    client.get(`${API.checks}?change_request_id=${changeRequestId}&name=${encodeURIComponent(name)}`),
    200,
    `check ${name}`,
  );
  if (list.results.length !== 1)
    throw new Error(`check ${name} of request ${changeRequestId}: ${JSON.stringify(list.results)}`);
  return list.results[0].id;
}

/** Reports a check result as the pipeline would (PATCH checks/{id}/). */
export async function reportCheck(world: World, status: string, summary = ''): Promise<void> {
  const id = await checkId(world.pipeline.client, world.changeRequest.id);
  await expect(
    world.pipeline.client.patch(`${API.checks}${id}/`, {
      status,
      summary,
      details_url: 'https://ci.example.net/jobs/1042',
    }),
    200,
    `report ${status}`,
  );
}

/** The extension's API client (extension/core/api-client.ts) for a person of the world, or the admin. */
export function extensionClient(
  world: World,
  who: Actor | 'admin',
  options: Partial<Omit<ApiClientOptions, 'baseUrl' | 'token'>> = {},
): ExtensionApiClient {
  return new ExtensionApiClient({
    baseUrl: world.svc.url,
    token: who === 'admin' ? world.svc.admin.token! : who.token,
    ...options,
  });
}

/**
 * Mocha hooks for the calling suite: before each test a fresh service seeded with the world,
 * closed after it. Read `world` inside the tests; `restart(options)` replaces the service with
 * one started with other options (a configuration) and seeds it again.
 */
export function seededServicePerTest(): { readonly world: World; restart(options?: StartOptions): Promise<World> } {
  let current: World | undefined;
  const start = async (options: StartOptions = {}) => {
    await current?.svc.close();
    current = undefined;
    current = await seedWorld(await startService(options));
    return current;
  };
  beforeEach(() => start());
  afterEach(async () => {
    await current?.svc.close();
    current = undefined;
  });
  return {
    get world(): World {
      if (!current) throw new Error('no seeded service: used outside a test');
      return current;
    },
    restart: start,
  };
}
