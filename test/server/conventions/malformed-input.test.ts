import assert from 'node:assert/strict';
import type { RouteDef } from '../../../server/http/routes';
import { startService, type ApiResponse, type RequestOptions, type TestService } from '../../support/service';

/**
 * Client input never yields a 5xx. This walks every registered route, so routes added later
 * are covered without touching this file.
 */

const JSON_TYPE = { 'Content-Type': 'application/json' };

/** Every field name the API uses anywhere, each with a value of the wrong type. */
const WRONG_TYPES: Record<string, unknown> = {
  name: 123,
  id: 'x',
  description: [],
  status: {},
  enabled: 'maybe',
  users: 'me',
  groups: [null],
  user: 'x',
  object_types: [1],
  object_type: 5,
  object_id: 'x',
  actions: {},
  constraints: 7,
  conditions: 'always',
  username: [],
  password: 5,
  key: 1,
  write_enabled: 'x',
  expires: 12,
  commit: 'yes',
  branch: 'main',
  schema_id: 9,
  owner: 'x',
  title: 9,
  ref: [],
  priority: 0,
  decision: 1,
  comment: {},
  change_request: 'x',
  policy: 'x',
  weight: 'heavy',
  min_reviews: -1,
  checks: 'all',
  summary: {},
  details_url: 1,
  read: 'x',
  payload_url: 1,
  http_method: 7,
  secret: [],
  additional_headers: 3,
  event_types: 'x',
  action_type: [],
  action_object_id: 'x',
  action_data: 'x',
  scheduled_start: 'soon',
  scheduled_end: 1,
  auto_merge: 'x',
  parent: 'x',
  data: [],
  tags: 5,
};

const NULLS = Object.fromEntries(Object.keys(WRONG_TYPES).map((k) => [k, null]));

const EXTREMES: Record<string, unknown> = {
  name: 'x'.repeat(100_000),
  id: 1e20,
  user: -1,
  users: [1e20, -5, 0],
  groups: Array.from({ length: 2000 }, (_, i) => i),
  object_types: ['a'.repeat(5000)],
  actions: ['view'.repeat(1000)],
  constraints: [{ id__in: 'x' }, { 'a__b__c': [] }],
  conditions: { and: [{ or: [{ attr: {}, op: 'nope' }] }] },
  expires: '9999-99-99T99:99:99Z',
  scheduled_start: '0000-00-00',
  weight: 1e308,
  min_reviews: 2 ** 62,
  commit: 0,
};

function nested(depth: number): unknown {
  let value: unknown = { name: 'deep' };
  // Each level wraps the previous one once, so the body grows linearly with the depth.
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { name: value } : { data: [value] };
  return value;
}

interface Probe {
  what: string;
  method: string;
  path: string;
  body?: unknown;
  options?: RequestOptions;
}

function pathsFor(route: RouteDef, values: string[]): string[] {
  if (!route.path.includes(':')) return [route.path];
  return values.map((v) => route.path.replace(/:(\w+)/g, v));
}

const hasBody = (method: string): boolean => method === 'POST' || method === 'PUT' || method === 'PATCH';

describe('conventions: malformed input never yields a 5xx, on any route', () => {
  let svc: TestService;
  let routes: readonly RouteDef[];

  before(async () => {
    svc = await startService();
    routes = svc.host.routes.all();
    // Some objects to aim at, so that id 1 exists for the host's own models.
    await svc.admin.post('/api/users/groups/', { name: 'walk' });
    await svc.admin.post('/api/users/permissions/', { name: 'walk', object_types: ['users.group'], actions: ['view'] });
  });
  after(async () => svc.close());

  async function walk(makeProbes: (route: RouteDef) => Probe[]): Promise<void> {
    const failures: string[] = [];
    let sent = 0;
    for (const route of routes) {
      // A stream answers 200 and stays open; its refusals of malformed input are tested with the stream.
      if (route.stream) continue;
      for (const probe of makeProbes(route)) {
        let res: ApiResponse;
        try {
          res = await svc.admin.request(probe.method, probe.path, probe.body, probe.options);
        } catch (err) {
          failures.push(`${probe.method} ${probe.path} [${probe.what}]: request failed: ${(err as Error).message}`);
          continue;
        }
        sent++;
        if (res.status >= 500) {
          failures.push(`${probe.method} ${probe.path} [${probe.what}] -> ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        }
      }
    }
    assert.ok(sent > 0, 'nothing was sent');
    assert.deepEqual(failures, []);
    const logged = svc.log.lines.filter((l) => l.startsWith('error:'));
    assert.deepEqual(logged, [], 'server errors were logged');
  }

  it('bad JSON, a non-JSON content type, and JSON that is not an object', async function () {
    this.timeout(120_000);
    await walk((route) => {
      if (!hasBody(route.method) && route.method !== 'DELETE') return [];
      return pathsFor(route, ['999999', 'abc']).flatMap((path) => [
        { what: 'bad JSON', method: route.method, path, options: { raw: '{"name": ', headers: JSON_TYPE } },
        { what: 'bad JSON 2', method: route.method, path, options: { raw: "{'id': zz}", headers: JSON_TYPE } },
        { what: 'text body', method: route.method, path, options: { raw: 'name=x', headers: { 'Content-Type': 'text/plain' } } },
        { what: 'JSON array', method: route.method, path, body: [1, 2, 3] },
        { what: 'JSON array of objects', method: route.method, path, body: [{ name: 'x' }] },
        { what: 'JSON string', method: route.method, path, options: { raw: '"text"', headers: JSON_TYPE } },
        { what: 'JSON null', method: route.method, path, options: { raw: 'null', headers: JSON_TYPE } },
        { what: 'JSON number', method: route.method, path, options: { raw: '1e309', headers: JSON_TYPE } },
      ]);
    });
  });

  it('wrong types, nulls, extreme values, deep nesting and empty objects', async function () {
    this.timeout(120_000);
    await walk((route) => {
      if (!hasBody(route.method)) return [];
      return pathsFor(route, ['999999', 'abc', '1']).flatMap((path) => [
        { what: 'wrong types', method: route.method, path, body: WRONG_TYPES },
        { what: 'nulls', method: route.method, path, body: NULLS },
        { what: 'extremes', method: route.method, path, body: EXTREMES },
        { what: 'deep nesting', method: route.method, path, body: nested(40) },
        { what: 'empty object', method: route.method, path, body: {} },
      ]);
    });
  });

  it('bodies over 1 MiB', async function () {
    this.timeout(120_000);
    const huge = JSON.stringify({ name: 'huge', description: 'x'.repeat(1.5 * 1024 * 1024) });
    await walk((route) => {
      if (!hasBody(route.method) && route.method !== 'DELETE') return [];
      return pathsFor(route, ['999999']).map((path) => ({ what: '1.5 MiB', method: route.method, path, options: { raw: huge, headers: JSON_TYPE } }));
    });
  });

  it('garbage query parameters, unknown ids and an unknown branch header', async function () {
    this.timeout(120_000);
    const garbage = '?limit=abc&offset=-1&ordering=nope&id=zz&status=%00&user_id=me2&branch_id=x&object_type=..&q=%25&since=yesterday';
    await walk((route) => {
      // DELETE with an existing id would remove objects the rest of the walk aims at.
      const values = route.method === 'GET' ? ['999999', 'abc', '1', '-1', '1.5', '9'.repeat(30)] : ['999999', 'abc', '-1', '9'.repeat(30)];
      return pathsFor(route, values).flatMap((path) => [
        { what: 'garbage query', method: route.method, path: `${path}${garbage}`, body: hasBody(route.method) ? {} : undefined },
        { what: 'unknown id', method: route.method, path, body: hasBody(route.method) ? WRONG_TYPES : undefined },
        { what: 'unknown branch', method: route.method, path, options: { headers: { 'X-NetBox-Branch': 'nosuchbr' } } },
      ]);
    });
  });
});
