import assert from 'node:assert/strict';
import { z } from 'zod';
import { openApiPath } from '../../../../server/host/http/openapi';
import { eachTestService } from '../../../support/service';

/** Every `$ref` in the document, as the component name it points at. */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else refs(value, out);
    }
  }
  return out;
}

describe('extras: /api/schema/', () => {
  const svc = eachTestService();

  it('is a public OpenAPI 3.1 document listing every registered route', async () => {
    const res = await svc.anonymous.get('/api/schema/');
    assert.equal(res.status, 200);
    const doc = res.body;
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(typeof doc.info.version, 'string');
    assert.deepEqual(doc.servers, [{ url: svc.url }]);
    assert.deepEqual(doc.components.securitySchemes.Token, {
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description: doc.components.securitySchemes.Token.description,
    });

    const missing: string[] = [];
    const ids = new Set<string>();
    for (const route of svc.host.routes.all()) {
      const op = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      if (!op) {
        missing.push(`${route.method} ${route.path}`);
        continue;
      }
      assert.ok(!ids.has(op.operationId), `operationId ${op.operationId} is unique`);
      ids.add(op.operationId);
      assert.equal(op.summary, route.summary);
      assert.deepEqual(op.tags, [route.tag]);
      assert.ok(Object.keys(op.responses).length > 0);
      assert.deepEqual(op.security, 'public' in route.access ? [] : [{ Token: [] }]);
    }
    assert.deepEqual(missing, []);
    for (const path of Object.keys(doc.paths)) assert.ok(!path.includes(':'), `${path} uses {param}`);

    for (const ref of refs(doc)) {
      assert.match(ref, /^#\/components\/schemas\//);
      assert.ok(doc.components.schemas[ref.slice('#/components/schemas/'.length)], `${ref} resolves`);
    }
  });

  it('describes parameters, bodies and list envelopes from the route table and its zod schemas', async () => {
    const doc = (await svc.anonymous.get('/api/schema/')).body;
    const resolve = (schema: { $ref?: string }) =>
      schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;

    const detail = doc.paths['/api/extras/webhooks/{id}/'].patch;
    assert.deepEqual(detail.parameters[0], { name: 'id', in: 'path', required: true, schema: { type: 'integer' } });
    const body = resolve(detail.requestBody.content['application/json'].schema);
    assert.equal(body.type, 'object');
    assert.ok(body.properties.payload_url);
    assert.deepEqual(body.properties.http_method.enum, ['POST', 'PUT', 'PATCH', 'GET', 'DELETE']);

    const list = doc.paths['/api/core/object-changes/'].get;
    const names = list.parameters.map((p: { name: string }) => p.name);
    for (const name of [
      'limit',
      'offset',
      'ordering',
      'changed_object_type',
      'changed_object_id',
      'request_id',
      'user_id',
      'action',
    ])
      assert.ok(names.includes(name), name);
    const envelope = list.responses['200'].content['application/json'].schema;
    assert.deepEqual(envelope.required, ['count', 'next', 'previous', 'results']);
    const item = resolve(envelope.properties.results.items);
    assert.ok(item.properties.request_id);
    assert.ok(item.properties.prechange_data);

    assert.ok(doc.paths['/api/extras/webhooks/{id}/'].delete.responses['204']);
    assert.ok(!('security' in doc.paths['/api/status/'].get) || doc.paths['/api/status/'].get.security.length === 0);
    // A create takes one object or a list of them (a bulk create).
    const ruleBody = doc.paths['/api/extras/event-rules/'].post.requestBody.content['application/json'].schema;
    const rule = resolve(ruleBody.oneOf[0]);
    assert.ok(rule.required.includes('event_types'));
    assert.deepEqual(resolve(ruleBody.oneOf[1].items), rule);

    // Every write takes an Idempotency-Key header and documents its 409 and 422; reads do not.
    for (const [path, ops] of Object.entries(doc.paths) as Array<[string, Record<string, any>]>) {
      for (const [method, op] of Object.entries(ops)) {
        const header = (op.parameters ?? []).find((p: { name: string }) => p.name === 'Idempotency-Key');
        if (method === 'get' || method === 'options') assert.equal(header, undefined, `${method} ${path}`);
        else {
          assert.deepEqual(header?.in, 'header', `${method} ${path}`);
          assert.ok(op.responses['409'] && op.responses['422'], `${method} ${path}`);
        }
      }
    }
  });

  it("describes an object's ETag and the If-Match of its single writes with their 412, and none on list writes", async () => {
    const paths = (await svc.anonymous.get('/api/schema/')).body.paths;
    const one = paths['/api/dcim/devices/{id}/'];
    const list = paths['/api/dcim/devices/'];
    const ifMatch = (op: any) => (op.parameters ?? []).find((p: any) => p.name === 'If-Match');
    assert.ok(one.get.responses['200'].headers.ETag);
    assert.ok(list.post.responses['201'].headers.ETag);
    for (const method of ['patch', 'put', 'delete']) {
      assert.equal(ifMatch(one[method])?.in, 'header', method);
      assert.match(one[method].responses['412'].description, /changed since the version If-Match names/);
      assert.equal(ifMatch(list[method]), undefined, `bulk ${method}`);
      assert.equal(list[method].responses['412'], undefined, `bulk ${method}`);
    }
    assert.ok(one.patch.responses['200'].headers.ETag);
    assert.equal(ifMatch(one.get), undefined);
    assert.equal(
      ifMatch(paths['/api/plugins/branching/branches/{id}/'].patch),
      undefined,
      'objects of the catalogue only',
    );
  });

  it('never fails, even for routes whose schemas cannot be represented', async () => {
    svc.host.routes.add({
      method: 'POST',
      path: '/api/test/odd/:name/',
      access: { authenticated: true },
      summary: 'An odd route',
      tag: 'test',
      body: z.object({ when: z.date(), big: z.bigint(), fn: z.custom<() => void>(() => true) }),
      response: z.map(z.string(), z.symbol()),
      handler: async () => ({}),
    });
    const res = await svc.anonymous.get('/api/schema/');
    assert.equal(res.status, 200);
    const op = res.body.paths['/api/test/odd/{name}/'].post;
    assert.equal(op.summary, 'An odd route');
    assert.deepEqual(op.parameters[0], { name: 'name', in: 'path', required: true, schema: { type: 'string' } });
    assert.deepEqual(
      svc.log.lines.filter((l) => l.startsWith('error:')),
      [],
    );
  });
});
