import assert from 'node:assert/strict';
import { z } from 'zod';
import { Reply, RouteRegistry } from '../../../../server/host/http/routes';
import { domainForSuite } from '../../../support/domain';

// Routes declared as data on a group take the group's path, tag, access and answer's schema
// unless they name their own; what each route ends up declaring is what the route table holds.
describe('http: route groups', () => {
  const d = domainForSuite();
  const output = z.object({ id: z.number() });
  const write = z.strictObject({ name: z.string() });

  it("joins the paths, and gives each route the group's tag, access and response unless it names its own", () => {
    const registry = new RouteRegistry();
    const routes = registry.group({
      path: '/api/things/',
      tag: 'things',
      access: { authenticated: true },
      response: output,
    });
    routes.add({ method: 'GET', summary: 'List', handler: async () => [] });
    routes.add({
      method: 'POST',
      path: ':id/run/',
      access: { permission: 'things.run_thing' },
      summary: 'Run',
      handler: async () => ({}),
    });
    const [list, run] = registry.all();
    assert.deepEqual(
      [list!.path, list!.tag, list!.access, list!.response],
      ['/api/things/', 'things', { authenticated: true }, output],
    );
    assert.deepEqual([run!.path, run!.access], ['/api/things/:id/run/', { permission: 'things.run_thing' }]);
  });

  it('refuses a route with no access of its own in a group without one', () => {
    const routes = new RouteRegistry().group({ path: '/api/things/', tag: 'things' });
    assert.throws(() => routes.add({ method: 'GET', summary: 'List', handler: async () => [] }), /declares no access/);
  });

  it('declares PATCH and PUT with one handler that knows which it serves, and DELETE as 204 without a body', async () => {
    const registry = new RouteRegistry();
    const routes = registry.group({
      path: '/api/things/',
      tag: 'things',
      access: { authenticated: true },
      response: output,
    });
    const served: string[] = [];
    const deleted: string[] = [];
    routes.patchAndPut({
      path: ':id/',
      summary: { PATCH: 'Edit', PUT: 'Replace' },
      body: { PATCH: write.partial(), PUT: write },
      handler: async (_input, method) => served.push(method),
    });
    routes.remove({ path: ':id/', summary: 'Delete', run: async ({ params }) => void deleted.push(params.id!) });
    const find = (method: string, path: string) => registry.all().find((r) => r.method === method && r.path === path);
    const [patch, put, del] = [
      find('PATCH', '/api/things/:id/'),
      find('PUT', '/api/things/:id/'),
      find('DELETE', '/api/things/:id/'),
    ];
    assert.deepEqual(
      [patch!.method, patch!.summary, put!.method, put!.summary, del!.method],
      ['PATCH', 'Edit', 'PUT', 'Replace', 'DELETE'],
    );
    assert.equal(put!.body, write);
    const input = {
      ctx: d.ctx(),
      params: { id: '7' },
      query: {},
      body: undefined,
      url: new URL('http://x/'),
      header: () => undefined,
      address: '',
    };
    await patch!.handler(input);
    await put!.handler(input);
    assert.deepEqual(served, ['PATCH', 'PUT']);
    const answer = await del!.handler(input);
    assert.ok(answer instanceof Reply && answer.status === 204 && answer.body === undefined);
    assert.deepEqual([del!.status, del!.response], [204, undefined]);
    assert.deepEqual(deleted, ['7']);
  });
});
