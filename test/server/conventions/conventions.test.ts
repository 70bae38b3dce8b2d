import assert from 'node:assert/strict';
import { request } from 'node:http';
import { isListRoute } from '../../../server/host/http/openapi';
import { eachTestService, expectQueriesRefused } from '../../support/service';

const ids = (list: { results: Array<{ id: number }> }): number[] => list.results.map((o) => o.id);

describe('conventions: bodies', () => {
  const svc = eachTestService();

  it('answers 415 to a body that is not JSON', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await svc.admin.post('/api/users/groups/', undefined, {
        raw: 'name=netops',
        headers: { 'Content-Type': contentType },
      });
      assert.equal(res.status, 415, contentType);
      assert.ok(res.body.detail);
    }
    const noType = await svc.admin.patch('/api/users/groups/1/', undefined, { raw: '{"name":"x"}' });
    assert.equal(noType.status, 415);
    assert.equal((await svc.admin.get('/api/users/groups/?name=netops')).body.count, 0);
  });

  it('answers 400 with a detail to malformed JSON', async () => {
    for (const raw of ['{"name": ', '{name: "x"}', "{'name': 'x'}", 'nope']) {
      const res = await svc.admin.post('/api/users/groups/', undefined, {
        raw,
        headers: { 'Content-Type': 'application/json' },
      });
      assert.equal(res.status, 400, raw);
      assert.equal(typeof res.body.detail, 'string');
    }
  });

  it('answers 413 to a body over 1 MiB and accepts one just under', async () => {
    const big = JSON.stringify({ name: 'big', description: 'x'.repeat(1024 * 1024) });
    const res = await svc.admin.post('/api/users/groups/', undefined, {
      raw: big,
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(res.status, 413);
    assert.ok(res.body.detail);
    const under = JSON.stringify({ name: 'under', description: 'x'.repeat(150) + ' '.repeat(1000 * 1000) });
    const ok = await svc.admin.post('/api/users/groups/', undefined, {
      raw: under,
      headers: { 'Content-Type': 'application/json' },
    });
    assert.notEqual(ok.status, 413);
    assert.ok(ok.status < 500);
  });

  it('answers a JSON body of the wrong shape with 400 field errors', async () => {
    // A list is a bulk create: each item must be of the right shape, and an empty list is refused.
    const array = await svc.admin.post('/api/users/groups/', [{ name: 'x' }, 7]);
    assert.equal(array.status, 400);
    assert.deepEqual(array.body[0], {});
    assert.equal((await svc.admin.post('/api/users/groups/', [])).status, 400);
    assert.equal((await svc.admin.post('/api/users/groups/', 'x')).status, 400);
    const types = await svc.admin.post('/api/users/groups/', { name: 123 });
    assert.equal(types.status, 400);
    assert.ok(types.body.name);
    const unknown = await svc.admin.post('/api/users/groups/', { name: 'x', colour: 'red' });
    assert.equal(unknown.status, 400);
    assert.ok(unknown.body.colour);
  });
});

describe('conventions: lists and filters', () => {
  const svc = eachTestService();

  it('wraps lists in {count, next, previous, results}', async () => {
    for (let i = 0; i < 3; i++) await svc.admin.post('/api/users/groups/', { name: `g${i}` });
    const first = await svc.admin.get('/api/users/groups/?limit=2');
    assert.deepEqual(Object.keys(first.body).sort(), ['count', 'next', 'previous', 'results']);
    assert.equal(first.body.count, 3);
    assert.equal(first.body.previous, null);
    assert.equal(first.body.results.length, 2);
    const next = await svc.admin.get(first.body.next);
    assert.equal(next.body.results.length, 1);
    assert.equal(next.body.next, null);
    assert.ok(next.body.previous);
    const all = await svc.admin.get('/api/users/groups/');
    assert.equal(all.body.next, null);
    assert.equal(all.body.previous, null);
  });

  it('caps limit at 1000 and defaults to 50', async () => {
    const now = svc.clock.now().toISOString();
    const rows = Array.from({ length: 1005 }, (_, i) => ({
      name: `bulk-${String(i).padStart(4, '0')}`,
      description: '',
      created: now,
      last_updated: now,
    }));
    for (let i = 0; i < rows.length; i += 200)
      await svc.host.db
        .insertInto('groups')
        .values(rows.slice(i, i + 200))
        .execute();
    const capped = await svc.admin.get('/api/users/groups/?limit=5000');
    assert.equal(capped.status, 200);
    assert.equal(capped.body.count, 1005);
    assert.equal(capped.body.results.length, 1000);
    assert.match(capped.body.next, /limit=1000/);
    assert.match(capped.body.next, /offset=1000/);
    const rest = await svc.admin.get(capped.body.next);
    assert.equal(rest.body.results.length, 5);
    assert.equal((await svc.admin.get('/api/users/groups/')).body.results.length, 50);
  });

  it('orders by a declared field, ascending or descending, and refuses an unknown one naming ordering', async () => {
    for (const name of ['b', 'c', 'a']) await svc.admin.post('/api/users/groups/', { name });
    const names = (list: { results: Array<{ name: string }> }): string[] => list.results.map((g) => g.name);
    assert.deepEqual(names((await svc.admin.get('/api/users/groups/?ordering=name')).body), ['a', 'b', 'c']);
    assert.deepEqual(names((await svc.admin.get('/api/users/groups/?ordering=-name')).body), ['c', 'b', 'a']);
    for (const path of [
      '/api/users/groups/?ordering=nope',
      '/api/users/users/?ordering=-password',
      '/api/users/tokens/?ordering=key',
      '/api/core/object-types/?ordering=x',
    ]) {
      const res = await svc.admin.get(path);
      assert.equal(res.status, 400, path);
      assert.ok(Array.isArray(res.body.ordering), `${path}: ${JSON.stringify(res.body)}`);
    }
  });

  it('combines a repeated filter parameter as OR and different parameters as AND', async () => {
    const make = async (username: string, is_active: boolean): Promise<number> =>
      (await svc.admin.post('/api/users/users/', { username, is_active })).body.id as number;
    const a = await make('a', true);
    const b = await make('b', false);
    const c = await make('c', true);
    assert.deepEqual(ids((await svc.admin.get('/api/users/users/?username=a&username=b')).body), [a, b]);
    assert.deepEqual(ids((await svc.admin.get('/api/users/users/?username=a&username=b&is_active=true')).body), [a]);
    assert.deepEqual(ids((await svc.admin.get(`/api/users/users/?id=${b}&id=${c}&is_active=false`)).body), [b]);
    assert.deepEqual(ids((await svc.admin.get(`/api/users/users/?id=${a},${c}`)).body), [a, c]);
  });

  it('refuses malformed filter values with 400 naming the filter', async () => {
    await expectQueriesRefused(svc.admin, [
      ['/api/users/users/?id=zz', 'id'],
      ['/api/users/users/?id=1&id=zz', 'id'],
      ['/api/users/users/?group_id=1.5', 'group_id'],
      ['/api/users/users/?is_active=maybe', 'is_active'],
      // Two bad filters: the one named is the first in the list's own order, whatever the query's.
      ['/api/users/users/?is_active=maybe&id=zz', 'id'],
      ['/api/users/tokens/?write_enabled=2', 'write_enabled'],
      ['/api/core/object-types/?app_label=nonsense', 'app_label'],
      ['/api/users/groups/?limit=abc', 'limit'],
      ['/api/users/groups/?offset=-1', 'offset'],
    ]);
  });
});

describe('conventions: every list (filters, q, ordering, brief, fields)', () => {
  const svc = eachTestService();

  /** Every list route but the source-of-truth catalogue's (which filter on any attribute). */
  const listPaths = (): string[] => {
    const catalogue = new Set(svc.host.objectTypes.sourceOfTruth().map((t) => t.path));
    return svc.host.routes
      .all()
      .filter((r) => isListRoute(r) && !r.path.includes(':') && !catalogue.has(r.path))
      .map((r) => r.path);
  };

  it('refuses an unknown filter name on every list with 400 naming it, and always accepts limit, offset, ordering, q, brief, fields and format', async () => {
    const paths = listPaths();
    assert.ok(paths.length >= 15, `only ${paths.length} lists`);
    for (const path of paths) {
      const unknown = await svc.admin.get(`${path}?colour=red`);
      assert.equal(unknown.status, 400, path);
      assert.ok(Array.isArray(unknown.body.colour), `${path}: ${JSON.stringify(unknown.body)}`);
      const reserved = await svc.admin.get(`${path}?limit=5&offset=0&q=x&brief=true&fields=id&format=json`);
      assert.equal(reserved.status, 200, `${path}: ${JSON.stringify(reserved.body)}`);
    }
  });

  it("q matches a case-insensitive substring of the list's text fields; % and _ are plain characters", async () => {
    await svc.admin.post('/api/users/groups/', { name: 'Network Ops', description: 'routers' });
    await svc.admin.post('/api/users/groups/', { name: 'db_admins', description: 'Databases 100%' });
    const names = async (q: string): Promise<string[]> =>
      (
        (await svc.admin.get(`/api/users/groups/?q=${encodeURIComponent(q)}`)).body.results as Array<{ name: string }>
      ).map((g) => g.name);
    assert.deepEqual(await names('network'), ['Network Ops']);
    assert.deepEqual(await names('ROUTERS'), ['Network Ops']);
    assert.deepEqual(await names('100%'), ['db_admins']);
    assert.deepEqual(await names('_'), ['db_admins']);
    assert.deepEqual(await names('%'), ['db_admins']);
    assert.deepEqual(await names('nothing'), []);
  });

  it('brief=true answers id, url and display; fields= only the named fields (lists and single objects)', async () => {
    const id = (await svc.admin.post('/api/users/groups/', { name: 'netops', description: 'x' })).body.id as number;
    const brief = (await svc.admin.get('/api/users/groups/?brief=true')).body.results[0];
    assert.deepEqual(Object.keys(brief).sort(), ['display', 'id', 'url']);
    assert.equal(brief.display, 'netops');
    const fields = (await svc.admin.get('/api/users/groups/?fields=name,description')).body.results[0];
    assert.deepEqual(fields, { name: 'netops', description: 'x' });
    assert.deepEqual((await svc.admin.get(`/api/users/groups/${id}/?fields=id,name`)).body, { id, name: 'netops' });
    assert.deepEqual(Object.keys((await svc.admin.get(`/api/users/groups/${id}/?brief=1`)).body).sort(), [
      'display',
      'id',
      'url',
    ]);
    for (const bad of ['brief=maybe', 'fields=na-me']) {
      const res = await svc.admin.get(`/api/users/groups/?${bad}`);
      assert.equal(res.status, 400, bad);
      assert.ok(Array.isArray(res.body[bad.split('=')[0]!]), bad);
    }
  });

  it('orders by several fields, each ascending or descending', async () => {
    for (const [name, description] of [
      ['b', '1'],
      ['a', '2'],
      ['c', '1'],
    ])
      await svc.admin.post('/api/users/groups/', { name, description });
    const names = (await svc.admin.get('/api/users/groups/?ordering=-name')).body.results.map(
      (g: { name: string }) => g.name,
    );
    assert.deepEqual(names, ['c', 'b', 'a']);
    const byCreatedThenName = await svc.admin.get('/api/users/groups/?ordering=created,-name');
    assert.equal(byCreatedThenName.status, 200);
    assert.equal(byCreatedThenName.body.count, 3);
  });
});

describe('conventions: headers and status', () => {
  const svc = eachTestService();

  it('sends API-Version: 4.7 on every response, errors included', async () => {
    const responses = [
      await svc.anonymous.get('/api/status/'),
      await svc.admin.get('/api/users/groups/'),
      await svc.admin.post('/api/users/groups/', { name: 'x' }),
      await svc.admin.delete('/api/users/groups/1/'),
      await svc.anonymous.get('/api/users/groups/'),
      await svc.admin.get('/api/users/groups/999999/'),
      await svc.admin.get('/api/no/such/endpoint/'),
      await svc.admin.post('/api/core/object-types/', {}),
      await svc.admin.get('/api/users/groups/?id=zz'),
      await svc.admin.post('/api/users/groups/', undefined, {
        raw: '{',
        headers: { 'Content-Type': 'application/json' },
      }),
      await svc.admin.post('/api/users/groups/', undefined, { raw: 'x', headers: { 'Content-Type': 'text/plain' } }),
    ];
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 201, 204, 403, 404, 404, 405, 400, 400, 415],
    );
    for (const res of responses) assert.equal(res.headers.get('API-Version'), '4.7');
  });

  it('sends a JSON answer with its type, charset and length in bytes; HEAD the same headers and no body; a conditional GET as Express answers it', async () => {
    const group = await svc.admin.post('/api/users/groups/', { name: 'Équipe réseau ✓' });
    const url = `${svc.url}/api/users/groups/${group.body.id}/`;
    const headers = { Authorization: `Token ${svc.admin.token}` };
    const get = await fetch(url, { headers });
    const text = await get.text();
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(get.headers.get('content-length'), String(Buffer.byteLength(text)));
    assert.ok(Buffer.byteLength(text) > text.length, 'the answer has characters of several bytes');
    assert.equal(JSON.parse(text).name, 'Équipe réseau ✓');
    assert.equal(get.headers.get('etag'), null);
    const head = await fetch(url, { method: 'HEAD', headers });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(text)));
    assert.equal(await head.text(), '');
    // fetch would answer a 304 as 200 from its own cache: asked over plain HTTP.
    const conditional = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(url, { headers: { ...headers, 'If-None-Match': '*' } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(conditional, { status: 304, body: '' });
    const created = await fetch(`${svc.url}/api/users/groups/`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'ops ✓' }),
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('content-length'), String(Buffer.byteLength(await created.text())));
  });

  it('answers /api/status/ without a token', async () => {
    const res = await svc.anonymous.get('/api/status/');
    assert.equal(res.status, 200);
    assert.equal(res.body['host-version'], '4.7.0');
    assert.equal(typeof res.body.plugins, 'object');
    for (const version of Object.values(res.body.plugins)) assert.match(version as string, /^\d+\.\d+\.\d+/);
    const withBadToken = await svc.as('not-a-real-token').get('/api/status/');
    assert.equal(withBadToken.status, 200);
  });

  it('answers an unknown id with 404 {"detail": "Not found."}, numeric or not', async () => {
    for (const path of [
      '/api/users/users/999999/',
      '/api/users/users/abc/',
      '/api/users/tokens/999999/',
      '/api/users/permissions/abc/',
      '/api/core/object-types/999999/',
    ]) {
      const res = await svc.admin.get(path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.body, { detail: 'Not found.' });
    }
  });
});
