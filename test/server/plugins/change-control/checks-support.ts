import assert from 'node:assert/strict';
import { branchingPlugin } from '../../../../server/plugins/branching/plugin';
import { changeControlPlugin } from '../../../../server/plugins/change-control/plugin';
import {
  CheckResult,
  CheckScope,
  type CheckPluginApi,
  type CheckView,
} from '../../../../server/plugins/change-control/checks/registry';
import { runtime } from '../../../../server/plugins/change-control/runtime';
import type { ChangeControlTables } from '../../../../server/plugins/change-control/db/tables';
import type { ConfigInput } from '../../../../server/host/core/config';
import { withTables } from '../../../../server/host/db/database';
import type { HostPlugin } from '../../../../server/host/host';
import { startService, type ApiClient, type TestService } from '../../../support/service';
import {
  actor,
  AUTHOR,
  branch,
  CC_TYPES,
  CHECKS,
  created,
  device,
  ok,
  openRequest,
  policy,
  REVIEWER,
  VIEW_ALL,
  type Actor,
  type PolicySpec,
} from './fixtures';

export { CheckResult, CheckScope };

export const OBJECT_CHANGES = '/api/core/object-changes/';
export const RUN_CHECKS = (id: number) => `/api/plugins/change-control/change-requests/${id}/run-checks/`;

/**
 * A plugin that registers checks the way a check plugin's `ready(registry)` does, through the
 * same API, before change control seals the registry at start.
 */
export function registeringPlugin(ready: (registry: CheckPluginApi) => void): HostPlugin {
  return {
    name: 'test-checks',
    version: '1.0.0',
    hostVersion: { min: '4.7.0', max: '4.7.99' },
    register(host) {
      const registry = runtime(host).registry;
      ready({ registerCheck: (def) => registry.registerCheck(def), CheckResult, CheckScope });
    },
  };
}

export interface StartWithChecks {
  config?: ConfigInput;
  /** Registers checks at start, as a check plugin's ready hook would. */
  ready?: (registry: CheckPluginApi) => void;
  configDir?: string;
  /** Database path (default: a fresh in-memory database). */
  db?: string;
  clockStart?: string;
}

/** The real service with branching, the registering plugin and change control. */
export async function startWithChecks(options: StartWithChecks = {}): Promise<TestService> {
  const plugins = [branchingPlugin()];
  if (options.ready) plugins.push(registeringPlugin(options.ready));
  plugins.push(changeControlPlugin({ configDir: options.configDir ?? process.cwd() }));
  return startService({
    config: options.config,
    plugins,
    configDir: options.configDir,
    db: options.db,
    clockStart: options.clockStart,
  });
}

/** A registered check function that counts its invocations and keeps every view it received. */
export interface Counting {
  calls: number;
  views: CheckView[];
  /** What the next invocations answer (default: passed). */
  answer: (view: CheckView) => CheckResult | Promise<CheckResult>;
  fn: (view: CheckView) => Promise<CheckResult>;
  reset(): void;
}

export function counting(answer: Counting['answer'] = () => CheckResult.passed('ok')): Counting {
  const c: Counting = {
    calls: 0,
    views: [],
    answer,
    fn: async (view) => {
      c.calls++;
      c.views.push(view);
      return c.answer(view);
    },
    reset() {
      c.calls = 0;
      c.views = [];
    },
  };
  return c;
}

/** A pipeline's permissions: view the requests and checks, report results (change_mergecheck). */
export const PIPELINE = [
  { object_types: ['change_control.changerequest', 'change_control.mergecheck'], actions: ['view'] },
  { object_types: ['change_control.mergecheck'], actions: ['change'] },
];

export interface Setup {
  author: Actor;
  reviewer: Actor;
  pipeline: Actor;
  branchId: number;
  schemaId: string;
  inBranch: ApiClient;
  cr: any;
  device: any;
}

let seq = 0;

/**
 * An author with a branch that creates one device, a reviewer and a pipeline; optionally a
 * policy (created before the request, so it attaches), and the change request opened by the author.
 */
export async function setup(
  svc: TestService,
  options: {
    policy?: Omit<PolicySpec, 'name'> & { name?: string };
    open?: boolean;
    request?: Record<string, unknown>;
  } = {},
): Promise<Setup> {
  const n = ++seq;
  const author = await actor(svc, `author${n}`, [
    ...AUTHOR,
    { object_types: ['branching.branch'], actions: ['merge', 'delete', 'sync', 'revert'] },
  ]);
  const reviewer = await actor(svc, `reviewer${n}`, REVIEWER);
  const pipeline = await actor(svc, `pipeline${n}`, PIPELINE);
  if (options.policy) {
    // Scoped to this setup's device, so policies of one shared service do not govern each other's requests.
    await policy(svc, {
      name: options.policy.name ?? `policy-${n}`,
      object_types: ['dcim.device'],
      conditions: { attr: 'name', op: 'eq', value: `router-${n}` },
      rules: [{ name: 'review', users: [reviewer.id] }],
      ...options.policy,
    });
  }
  const { branch: b, inBranch } = await branch(author.client, `branch-${n}`);
  const dev = await device(inBranch, { name: `router-${n}`, status: 'planned' });
  const cr = options.open === false ? null : await openRequest(author.client, b.id, options.request ?? {});
  return { author, reviewer, pipeline, branchId: b.id, schemaId: b.schema_id, inBranch, cr, device: dev };
}

/** The checks of a request by name. */
export async function checksByName(client: ApiClient, crId: number): Promise<Record<string, any>> {
  const res = await ok(client.get(`${CHECKS}?change_request_id=${crId}&limit=1000`));
  return Object.fromEntries(res.results.map((c: any) => [c.name, c]));
}

/** The changelog entries of one check, oldest first. */
export async function checkChangelog(client: ApiClient, checkId: number): Promise<any[]> {
  const res = await ok(
    client.get(
      `${OBJECT_CHANGES}?changed_object_type=change_control.mergecheck&changed_object_id=${checkId}&limit=1000&ordering=id`,
    ),
  );
  return res.results;
}

/** Every changelog entry of checks, oldest first. */
export async function allCheckChangelog(client: ApiClient): Promise<any[]> {
  const res = await ok(
    client.get(`${OBJECT_CHANGES}?changed_object_type=change_control.mergecheck&limit=1000&ordering=id`),
  );
  return res.results;
}

/** A user with the given grants and nothing else. */
export async function userWith(svc: TestService, name: string, grants: Parameters<typeof actor>[2]): Promise<Actor> {
  return actor(svc, name, grants);
}

export async function approve(reviewer: Actor, crId: number): Promise<void> {
  await created(
    reviewer.client.post('/api/plugins/change-control/reviews/', {
      change_request: crId,
      decision: 'approve',
      comment: '',
    }),
    'approval',
  );
}

export function assertCheck(
  check: any,
  expected: Partial<{
    name: string;
    change_request: number;
    status: string;
    required: boolean;
    blocks_merge: boolean;
    label: string;
    summary: string | RegExp;
  }>,
): void {
  assert.ok(check, 'check missing');
  for (const [key, value] of Object.entries(expected)) {
    if (value instanceof RegExp) assert.match(check[key], value, `${check.name}.${key}`);
    else assert.equal(check[key], value, `${check.name}.${key}: ${JSON.stringify(check)}`);
  }
}

export { CC_TYPES, VIEW_ALL };

/** The service's database with the plugin's tables, for a test that must reach past the API. */
export function ccTables(svc: TestService) {
  return withTables<ChangeControlTables>(svc.host.db);
}
