import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { sql } from 'kysely';
import { databaseKind } from '../../../server/host/db/database';
import type { RouteDef } from '../../../server/host/http/routes';
import { generateRequest, operations, Rng, ValueGen } from '../../support/openapi-fuzz';
import {
  ADMIN_TOKEN,
  expectQueriesRefused,
  startService,
  suiteService,
  type ApiResponse,
  type RequestOptions,
  type TestService,
} from '../../support/service';

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
  constraints: [{ id__in: 'x' }, { a__b__c: [] }],
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
  const svc = suiteService();
  let routes: readonly RouteDef[];
  before(async () => {
    routes = svc.host.routes.all();
    // Some objects to aim at, so that id 1 exists for the host's own models.
    await svc.admin.post('/api/users/groups/', { name: 'walk' });
    await svc.admin.post('/api/users/permissions/', { name: 'walk', object_types: ['users.group'], actions: ['view'] });
  });

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
          failures.push(
            `${probe.method} ${probe.path} [${probe.what}] -> ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
          );
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
        {
          what: 'text body',
          method: route.method,
          path,
          options: { raw: 'name=x', headers: { 'Content-Type': 'text/plain' } },
        },
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
      return pathsFor(route, ['999999']).map((path) => ({
        what: '1.5 MiB',
        method: route.method,
        path,
        options: { raw: huge, headers: JSON_TYPE },
      }));
    });
  });

  it('garbage query parameters, unknown ids and an unknown branch header', async function () {
    this.timeout(120_000);
    const garbage =
      '?limit=abc&offset=-1&ordering=nope&id=zz&status=%00&user_id=me2&branch_id=x&object_type=..&q=%25&since=yesterday';
    await walk((route) => {
      // DELETE with an existing id would remove objects the rest of the walk aims at.
      const values =
        route.method === 'GET'
          ? ['999999', 'abc', '1', '-1', '1.5', '9'.repeat(30)]
          : ['999999', 'abc', '-1', '9'.repeat(30)];
      return pathsFor(route, values).flatMap((path) => [
        {
          what: 'garbage query',
          method: route.method,
          path: `${path}${garbage}`,
          body: hasBody(route.method) ? {} : undefined,
        },
        { what: 'unknown id', method: route.method, path, body: hasBody(route.method) ? WRONG_TYPES : undefined },
        { what: 'unknown branch', method: route.method, path, options: { headers: { 'X-NetBox-Branch': 'nosuchbr' } } },
      ]);
    });
  });
});

describe('conventions: hostile keys, depths, sizes and encodings are plain data or a 400 naming the problem', () => {
  const svc = suiteService({ config: { change_control: { enforce_merge_gate: false } } });

  const raw = (method: string, path: string, text: string | Buffer, headers: Record<string, string> = JSON_TYPE) =>
    fetch(`${svc.url}${path}`, {
      method,
      headers: { Authorization: `Token ${ADMIN_TOKEN}`, ...headers },
      body: typeof text === 'string' ? text : new Uint8Array(text),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('keeps constructor, prototype, toString and valueOf as ordinary keys: they read back the same on main, in a branch and after the merge', async () => {
    const attrs = {
      name: 'proto-dev',
      constructor: 'c',
      prototype: { toString: 1, valueOf: [null] },
      toString: { constructor: { prototype: 'deep' } },
      hasOwnProperty: false,
    };
    const created = await svc.admin.post('/api/dcim/devices/', attrs);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as number;
    const pick = (o: Record<string, unknown>) =>
      Object.fromEntries(Object.keys(attrs).map((k) => [k, Object.hasOwn(o, k) ? o[k] : '(missing)']));
    assert.deepEqual(pick((await svc.admin.get(`/api/dcim/devices/${id}/`)).body), attrs);
    assert.equal(
      (await svc.admin.get('/api/dcim/devices/?constructor=c')).body.count,
      1,
      'a filter on the attribute "constructor"',
    );

    const branch = (await svc.admin.post('/api/plugins/branching/branches/', { name: 'proto-branch' })).body;
    const inBranch = svc.admin.inBranch(branch.schema_id);
    const edited = { ...attrs, toString: 'now a string', valueOf: { constructor: null } };
    const patched = await inBranch.patch(`/api/dcim/devices/${id}/`, {
      toString: 'now a string',
      valueOf: { constructor: null },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const pickEdited = (o: Record<string, unknown>) =>
      Object.fromEntries(Object.keys(edited).map((k) => [k, Object.hasOwn(o, k) ? o[k] : '(missing)']));
    assert.deepEqual(pickEdited(patched.body), edited);
    const change = (await svc.admin.get(`/api/plugins/branching/changes/?branch_id=${branch.id}`)).body.results[0];
    assert.deepEqual(pick(change.original), attrs);
    assert.deepEqual(change.conflicts, null);
    const merged = await svc.admin.post(`/api/plugins/branching/branches/${branch.id}/merge/`, { commit: true });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    assert.deepEqual(pickEdited((await svc.admin.get(`/api/dcim/devices/${id}/`)).body), edited);
  });

  it('refuses a __proto__ key anywhere in a body with 400 naming it, and writes nothing', async () => {
    for (const [path, text, field] of [
      ['/api/dcim/devices/', '{"name": "p1", "__proto__": {"is_superuser": true}}', '__proto__'],
      ['/api/dcim/devices/', '{"name": "p2", "config": {"a": [{"__proto__": 1}]}}', 'config.a.0.__proto__'],
      ['/api/users/groups/', '{"name": "p3", "__proto__": []}', '__proto__'],
      [
        '/api/plugins/change-control/policies/',
        '{"name": "p4", "conditions": {"__proto__": {"attr": "x"}}}',
        'conditions.__proto__',
      ],
    ] as const) {
      const res = await raw('POST', path, text);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(res.body)}`);
      assert.deepEqual(Object.keys(res.body), [field]);
      assert.match(res.body[field][0], /"__proto__" is not allowed as a key/);
    }
    assert.equal(
      (await svc.admin.get('/api/dcim/devices/?q=p')).body.results.filter((d: { name: string }) => /^p\d$/.test(d.name))
        .length,
      0,
    );
    assert.equal((await svc.admin.get('/api/users/groups/?name=p3')).body.count, 0);
  });

  it('names an unknown field called constructor, toString or prototype in a 400, on every strict body', async () => {
    for (const key of ['constructor', 'toString', 'prototype', 'valueOf']) {
      for (const path of [
        '/api/users/groups/',
        '/api/users/users/',
        '/api/plugins/change-control/policies/',
        '/api/plugins/branching/branches/',
        '/api/extras/webhooks/',
      ]) {
        const res = await svc.admin.post(path, { name: `k-${key}`, username: `k-${key}`, [key]: 1 });
        assert.equal(res.status, 400, `${path} ${key}`);
        assert.deepEqual(res.body[key], ['Unknown field.'], `${path} ${JSON.stringify(res.body)}`);
      }
    }
  });

  it('refuses a body nested deeper than 100 levels (4,200 deep too) with 400 naming the field, and accepts 100', async () => {
    const nestedText = (levels: number) =>
      `{"name": "deep-${levels}", "data": ${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    for (const levels of [101, 4_200]) {
      for (const path of [
        '/api/dcim/devices/',
        '/api/plugins/change-control/policies/',
        '/api/extras/event-rules/',
        '/api/users/permissions/',
      ]) {
        const res = await raw('POST', path, nestedText(levels));
        assert.equal(res.status, 400, `${path} ${levels}`);
        assert.match(res.body.data[0], /Nested deeper than 100 levels/);
      }
    }
    const ok = await raw('POST', '/api/dcim/devices/', nestedText(100));
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  it('refuses a list of more than 10,000 items and a string of more than 65,536 characters with 400 naming the field', async () => {
    const list = await svc.admin.post('/api/plugins/change-control/policies/', {
      name: 'huge',
      object_types: Array.from({ length: 10_001 }, () => 'dcim.device'),
    });
    assert.equal(list.status, 400);
    assert.match(list.body.object_types[0], /at most 10000 items/);
    const ids = await svc.admin.post('/api/users/permissions/', {
      name: 'huge',
      object_types: ['dcim.device'],
      actions: ['view'],
      users: Array.from({ length: 10_001 }, (_, i) => i),
    });
    assert.equal(ids.status, 400);
    assert.deepEqual(Object.keys(ids.body), ['users']);
    const long = await svc.admin.post('/api/dcim/devices/', { name: 'long', notes: { text: 'x'.repeat(65_537) } });
    assert.equal(long.status, 400);
    assert.match(long.body['notes.text'][0], /At most 65536 characters/);
    assert.equal(
      (await svc.admin.post('/api/dcim/devices/', { name: 'long-enough', notes: 'x'.repeat(65_536) })).status,
      201,
    );
  });

  it('refuses a body that is not valid UTF-8 with 400, whatever the route', async () => {
    const bad = Buffer.concat([Buffer.from('{"name": "'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    for (const [method, path] of [
      ['POST', '/api/dcim/devices/'],
      ['POST', '/api/users/groups/'],
      ['POST', '/api/users/tokens/provision/'],
      ['PATCH', '/api/dcim/devices/1/'],
    ] as const) {
      const res = await raw(method, path, bad);
      assert.equal(res.status, 400, path);
      assert.equal(res.body.detail, 'The request body is not valid UTF-8.');
    }
  });

  it('refuses a lone surrogate escape in a value or a key with 400 naming the field, and writes nothing (PostgreSQL could not read it back)', async () => {
    for (const body of [
      '{"name": "sw\\ud800x", "status": "active"}',
      '{"name": "sw-ok", "custom_fields": {"\\udfff": 1}}',
    ]) {
      const res = await raw('POST', '/api/dcim/devices/', Buffer.from(body));
      assert.equal(res.status, 400, body);
      assert.match(JSON.stringify(res.body), /lone surrogate/);
    }
    const paired = await raw(
      'POST',
      '/api/dcim/devices/',
      Buffer.from('{"name": "sw-\\ud83d\\ude00", "status": "active"}'),
    );
    assert.equal(paired.status, 201, 'a surrogate pair is an ordinary character');
    const listed = await fetch(`${svc.url}/api/dcim/devices/?q=sw`, {
      headers: { Authorization: `Token ${ADMIN_TOKEN}` },
    });
    assert.equal(listed.status, 200);
  });

  it('refuses a query that is not valid percent-encoded UTF-8 or names __proto__, and a one-value parameter given twice, with 400 naming it', async () => {
    await expectQueriesRefused(svc.admin, [
      ['/api/dcim/devices/?name=%FF', 'name'],
      ['/api/plugins/change-control/change-requests/?ref=%E0%A4', 'ref'],
      ['/api/dcim/devices/?__proto__=x', '__proto__'],
      ['/api/users/groups/?limit=1&limit=2', 'limit'],
      ['/api/plugins/change-control/change-requests/?ordering=id&ordering=-id', 'ordering'],
      ['/api/search/?q=a&q=b', 'q'],
    ]);
    // A filter given twice is OR, as before; a parameter named like an Object method is plain data.
    assert.equal((await svc.admin.get('/api/users/groups/?id=1&id=2')).status, 200);
    assert.equal((await svc.admin.get('/api/dcim/devices/?constructor=x&toString=y')).status, 200);
  });
});

/**
 * A fuzz run generated from the OpenAPI document: every documented path and method gets
 * requests shaped by its schemas and then bent. Seeded and reproducible: the seed is printed,
 * and `FUZZ_SEED=<seed>` replays a run (`FUZZ_REQUESTS` changes its length).
 */
describe('conventions: a fuzz run generated from the OpenAPI document', () => {
  const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
  const seed =
    process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  let svc: TestService;

  before(async function () {
    this.timeout(60_000);
    svc = await startService({ config: { change_control: { required_external_checks: [['ci/build', 'CI build']] } } });
    // No deliveries or merges in the background: webhooks the run creates point anywhere.
    for (const task of svc.host.background) await task.stop();
  });
  after(async () => svc?.close());

  /** Objects of every kind, written before the run; returns the token of a user whose permissions carry constraints. */
  async function seedObjects(): Promise<string> {
    const a = svc.admin;
    const must = async (res: Promise<ApiResponse>, status = 201): Promise<any> => {
      const r = await res;
      assert.equal(r.status, status, JSON.stringify(r.body));
      return r.body;
    };
    const group = await must(a.post('/api/users/groups/', { name: 'fz-group' }));
    const reviewer = await must(
      a.post('/api/users/users/', { username: 'fz-reviewer', password: 'fz-password-1', groups: [group.id] }),
    );
    await must(
      a.post('/api/users/permissions/', {
        name: 'fz-perm',
        object_types: ['dcim.device'],
        actions: ['view'],
        constraints: { status: 'active' },
        users: [reviewer.id],
      }),
    );
    await must(a.post('/api/users/tokens/', { user: reviewer.id, description: 'fz' }));
    const site = await must(
      a.post('/api/dcim/sites/', { name: 'fz-site', config: { constructor: 1, toString: 'x', prototype: [null] } }),
    );
    const device = await must(a.post('/api/dcim/devices/', { name: 'fz-dev', site: site.id, status: 'active' }));
    await must(a.post('/api/ipam/prefixes/', { prefix: '10.0.0.0/8' }));
    const branch = await must(a.post('/api/plugins/branching/branches/', { name: 'fz-branch' }));
    const inBranch = a.inBranch(branch.schema_id);
    await must(inBranch.patch(`/api/dcim/devices/${device.id}/`, { status: 'planned' }), 200);
    await must(inBranch.post('/api/dcim/devices/', { name: 'fz-new', site: site.id }));
    const policy = await must(
      a.post('/api/plugins/change-control/policies/', {
        name: 'fz-policy',
        object_types: ['dcim.device'],
        conditions: { attr: 'status', op: 'changed' },
        checks: ['has-changes'],
      }),
    );
    await must(
      a.post('/api/plugins/change-control/policy-rules/', {
        policy: policy.id,
        name: 'fz-rule',
        min_reviews: 1,
        groups: [group.id],
      }),
    );
    const cr = await must(a.post('/api/plugins/change-control/change-requests/', { branch: branch.id, ref: 'FZ-1' }));
    await must(a.post(`/api/plugins/change-control/change-requests/${cr.id}/submit/`), 200);
    const changes = await must(a.get(`/api/plugins/branching/changes/?branch_id=${branch.id}`), 200);
    await must(
      a.post('/api/plugins/change-control/change-comments/', {
        change_request: cr.id,
        change_diff: changes.results[0].id,
        text: 'fz comment',
      }),
    );
    const webhook = await must(
      a.post('/api/extras/webhooks/', { name: 'fz-hook', payload_url: 'http://127.0.0.1:9/hook' }),
    );
    await must(
      a.post('/api/extras/event-rules/', {
        name: 'fz-rule',
        object_types: ['dcim.device'],
        event_types: ['object_updated'],
        action_type: 'webhook',
        action_object_id: webhook.id,
      }),
    );
    await must(a.post(`/api/plugins/change-control/change-requests/${cr.id}/abandon/`), 200);
    // A user whose every grant carries constraints, so that filtering by permission runs too.
    const limited = await must(a.post('/api/users/users/', { username: 'fz-limited' }));
    const catalogue = (await must(a.get('/api/core/object-types/?limit=1000'), 200)).results.map(
      (t: { app_label: string; model: string }) => `${t.app_label}.${t.model}`,
    );
    for (const [types, actions, constraints] of [
      [
        catalogue.filter((t: string) => /^(dcim|ipam|circuits|tenancy)\./.test(t)),
        ['view', 'add', 'change'],
        [{ status: 'active' }, { constructor: 'x' }],
      ],
      [['branching.branch'], ['view', 'add'], { name__in: ['fz-branch', 'fuzz'] }],
      [['branching.changediff', 'core.objectchange'], ['view'], { action__in: ['create', 'update'] }],
      [catalogue.filter((t: string) => t.startsWith('change_control.')), ['view', 'add'], { id__in: [1, 2, 3] }],
    ] as const) {
      await must(
        a.post('/api/users/permissions/', {
          name: `fz-limited-${types[0]}`,
          object_types: types,
          actions,
          constraints,
          users: [limited.id],
        }),
      );
    }
    const key = (await must(a.post('/api/users/tokens/', { user: limited.id }))).key as string;
    // Used once now: its last_used is set before the objects are read (the clock stands still).
    await must(svc.as(key).get('/api/users/me/'), 200);
    return key;
  }

  it('answers no request with a 5xx; afterwards the database is intact and every object written before reads back unchanged', async function () {
    this.timeout(300_000);
    console.log(`      fuzz seed: ${seed} (replay with FUZZ_SEED=${seed})`);
    const limitedToken = await seedObjects();
    const doc = (await svc.admin.get('/api/schema/')).body;
    const ops = operations(doc);
    assert.ok(ops.length > 50, 'the document lists the routes');

    // Every object readable before the run, by its detail path.
    const protectedIds = new Map<string, number[]>();
    const before = new Map<string, unknown>();
    for (const op of ops) {
      if (
        op.method !== 'GET' ||
        op.collection !== null ||
        !ops.some((o) => o.collection === op.path && o.method === 'GET')
      )
        continue;
      const list = await svc.admin.get(`${op.path}?limit=1000`);
      if (list.status !== 200 || !Array.isArray(list.body?.results)) continue;
      const ids = list.body.results.map((o: { id: number }) => o.id) as number[];
      protectedIds.set(op.path, ids);
      for (const id of ids) before.set(`${op.path}${id}/`, (await svc.admin.get(`${op.path}${id}/`)).body);
    }
    assert.ok(before.size > 20, `objects to compare: ${before.size}`);
    const protectedBranches = (await svc.admin.get('/api/plugins/branching/branches/')).body.results.map(
      (b: { schema_id: string }) => b.schema_id,
    ) as string[];
    const branches: string[] = [];

    const rng = new Rng(seed);
    const createdIds = new Map<string, number[]>();
    const pool = () => [...createdIds.values(), ...protectedIds.values()].flat();
    const gen = new ValueGen(doc, rng, () =>
      rng.chance(0.8) ? (rng.pick(pool()) ?? 1) : rng.pick([0, -1, 999_999, 2 ** 40]),
    );
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let i = 0; i < REQUESTS; i++) {
      const op = rng.pick(ops);
      const req = generateRequest(op, gen, rng, { protectedIds, createdIds, branches, protectedBranches });
      const headers: Record<string, string> = {
        Authorization: `Token ${rng.chance(0.2) ? limitedToken : ADMIN_TOKEN}`,
        ...req.headers,
      };
      if (rng.chance(0.03)) delete headers.Authorization;
      const abort = new AbortController();
      let status: number;
      let text = '';
      try {
        const res = await fetch(`${svc.url}${req.path}`, {
          method: req.method,
          headers,
          body: typeof req.body === 'string' || req.body === undefined ? req.body : new Uint8Array(req.body),
          signal: abort.signal,
        });
        status = res.status;
        // A stream answers with its headers; its body never ends.
        if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) abort.abort();
        else text = await res.text();
      } catch (err) {
        failures.push(`#${i} ${req.method} ${req.path} [${req.what}]: ${(err as Error).message}`);
        continue;
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500)
        failures.push(`#${i} ${req.method} ${req.path.slice(0, 200)} [${req.what}] -> ${status} ${text.slice(0, 300)}`);
      if (status === 201 && req.method === 'POST' && op.collection === null) {
        const answer = JSON.parse(text) as { id?: number; schema_id?: string } | Array<{ id?: number }>;
        for (const body of Array.isArray(answer) ? answer : [answer]) {
          if (typeof body.id === 'number')
            (createdIds.get(op.path) ?? createdIds.set(op.path, []).get(op.path)!).push(body.id);
          if ('schema_id' in body && typeof body.schema_id === 'string') branches.push(body.schema_id);
        }
      }
    }
    console.log(
      `      fuzz: ${REQUESTS} requests over ${ops.length} operations; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    assert.deepEqual(failures.slice(0, 20), [], `seed ${seed}: ${failures.length} failures`);
    assert.deepEqual(
      svc.log.lines.filter((l) => l.startsWith('error:')).slice(0, 5),
      [],
      `seed ${seed}: server errors were logged`,
    );

    if (databaseKind(svc.host.db) === 'sqlite') {
      // SQLite's own check of its file (PostgreSQL has no such command: its storage checks itself).
      const integrity = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(svc.host.db);
      assert.deepEqual(integrity.rows, [{ integrity_check: 'ok' }]);
    }
    const changed: string[] = [];
    for (const [path, was] of before) {
      const now = (await svc.admin.get(path)).body;
      if (isDeepStrictEqual(now, was)) continue;
      const keys = [...new Set([...Object.keys(was as object), ...Object.keys(now as object)])];
      const diff = keys.filter(
        (k) => !isDeepStrictEqual((was as Record<string, unknown>)[k], (now as Record<string, unknown>)[k]),
      );
      changed.push(
        `${path}: ${diff.map((k) => `${k}: ${JSON.stringify((was as Record<string, unknown>)[k])?.slice(0, 200)} -> ${JSON.stringify((now as Record<string, unknown>)[k])?.slice(0, 200)}`).join('; ')}`,
      );
    }
    assert.deepEqual(changed, [], `seed ${seed}: objects written before the run changed`);
  });
});
