// The host endpoints the extension reads (users/me, token provisioning, notifications, search,
// status) are documented by the service with the very schemas of contract/api/host.ts that the
// extension parses with: one contract, two consumers.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { currentUser, notification, provisionedToken, searchResults, serviceStatus } from '../../contract/api/host';
import { startService, type TestService } from '../support/service';

type Json = Record<string, any>;

describe('extension: the host contract shared with the service', () => {
  let svc: TestService;
  let doc: Json;
  before(async () => {
    svc = await startService();
    doc = (await svc.anonymous.get('/api/schema/')).body;
  });
  after(async () => svc.close());

  /** The JSON Schema the OpenAPI document gives for a route's success answer (list items for a list). */
  function documented(path: string, method: string, status: string): Json {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method.toUpperCase()} ${path} is not in the OpenAPI document`);
    let schema: Json = op.responses[status].content['application/json'].schema;
    if (schema.properties?.results && schema.required?.includes('count')) schema = schema.properties.results.items;
    const ref: string = schema.$ref;
    assert.ok(ref, `${path}: the answer is not a component`);
    return doc.components.schemas[ref.replace('#/components/schemas/', '')];
  }

  const cases: [string, string, string, z.ZodType][] = [
    ['/api/users/me/', 'get', '200', currentUser],
    ['/api/users/tokens/provision/', 'post', '201', provisionedToken],
    ['/api/extras/notifications/', 'get', '200', notification],
    ['/api/extras/notifications/{id}/', 'patch', '200', notification],
    ['/api/search/', 'get', '200', searchResults],
    ['/api/status/', 'get', '200', serviceStatus],
  ];
  for (const [path, method, status, schema] of cases) {
    it(`documents ${method.toUpperCase()} ${path} with the schema the extension parses`, () => {
      const component = documented(path, method, status);
      const expected = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Json;
      assert.deepEqual(Object.keys(component.properties).sort(), Object.keys(expected.properties).sort());
      assert.deepEqual([...component.required].sort(), [...expected.required].sort());
    });
  }

  it('documents that the provisioning answer always holds the key', () => {
    assert.ok(documented('/api/users/tokens/provision/', 'post', '201').required.includes('key'));
  });
});
