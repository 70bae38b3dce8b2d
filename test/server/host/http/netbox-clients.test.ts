import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import { BRANCHES, changelogOf, createBranch, createUser, DEVICES } from '../../plugins/branching/fixtures';

const TAGS = '/api/extras/tags/';

async function branchChangesOf(svc: ReturnType<typeof eachTestService>, branchId: number) {
  return svc.host.db
    .selectFrom('branch_changes')
    .selectAll()
    .where('branch_id', '=', branchId)
    .orderBy('object_id')
    .execute();
}

describe('real NetBox clients: API root, schema, bulk writes, OPTIONS', () => {
  const svc = eachTestService();

  it('GET /api/ lists the sections with their URLs, without a token, and answers with API-Version', async () => {
    const root = await svc.anonymous.get('/api/');
    assert.equal(root.status, 200);
    assert.ok(root.headers.get('api-version'));
    for (const section of ['circuits', 'core', 'dcim', 'extras', 'ipam', 'plugins', 'status', 'tenancy', 'users'])
      assert.equal(root.body[section], `${svc.url}/api/${section}/`, section);
    assert.equal(root.body.schema, undefined);
  });

  it('/api/schema/?format=json and /api/docs/?format=openapi serve the OpenAPI document', async () => {
    const schema = await svc.anonymous.get('/api/schema/?format=json');
    assert.equal(schema.status, 200);
    assert.equal(schema.body.openapi, '3.1.0');
    const docs = await svc.anonymous.get('/api/docs/?format=openapi');
    assert.equal(docs.status, 200);
    assert.deepEqual(Object.keys(docs.body.paths), Object.keys(schema.body.paths));
    // The bulk operations are described: a list body on PATCH, PUT and DELETE of a list.
    const devices = schema.body.paths['/api/dcim/devices/'];
    assert.equal(devices.patch.requestBody.content['application/json'].schema.type, 'array');
    assert.equal(devices.delete.requestBody.content['application/json'].schema.maxItems, 1000);
    assert.ok(devices.post.requestBody.content['application/json'].schema.oneOf);
  });

  it('a bulk create writes all or none: an invalid item is a 400 with the errors aligned with the items', async () => {
    const refused = await svc.admin.post(DEVICES, [{ name: 'a' }, { 'bad key': 1 }, { name: 'c' }]);
    assert.equal(refused.status, 400);
    assert.ok(Array.isArray(refused.body) && refused.body.length === 3);
    assert.deepEqual(refused.body[0], {});
    assert.ok(refused.body[1]['bad key'] || Object.keys(refused.body[1]).length > 0);
    assert.deepEqual(refused.body[2], {});
    assert.equal((await svc.admin.get(DEVICES)).body.count, 0);

    const created = await svc.admin.post(DEVICES, [{ name: 'a' }, { name: 'b', status: 'active' }]);
    assert.equal(created.status, 201);
    assert.deepEqual(
      created.body.map((d: { name: string }) => d.name),
      ['a', 'b'],
    );
    assert.equal((await svc.admin.get(DEVICES)).body.count, 2);
  });

  it('bulk update (PATCH, PUT) and bulk delete take a list with ids, all or none: an unknown id is a 404 at its place', async () => {
    const [a, b] = (
      await svc.admin.post(DEVICES, [
        { name: 'a', site: 1 },
        { name: 'b', site: 1 },
      ])
    ).body;
    const missing = await svc.admin.patch(DEVICES, [
      { id: a.id, status: 'planned' },
      { id: 999999, status: 'planned' },
    ]);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body[0], {});
    assert.ok(missing.body[1].detail);
    assert.equal((await svc.admin.get(`${DEVICES}${a.id}/`)).body.status, undefined);

    const patched = await svc.admin.patch(DEVICES, [
      { id: a.id, status: 'planned' },
      { id: b.id, status: 'active' },
    ]);
    assert.equal(patched.status, 200);
    assert.deepEqual(
      patched.body.map((d: { status: string; site: number }) => [d.status, d.site]),
      [
        ['planned', 1],
        ['active', 1],
      ],
    );
    const put = await svc.admin.put(DEVICES, [{ id: a.id, name: 'a2' }]);
    assert.equal(put.status, 200);
    assert.equal(put.body[0].site, undefined, 'PUT replaces the attributes');

    const noId = await svc.admin.patch(DEVICES, [{ status: 'x' }, { id: a.id, status: 'y' }, { id: a.id }]);
    assert.equal(noId.status, 400);
    assert.deepEqual(noId.body[0], { id: ['This field is required.'] });
    assert.deepEqual(noId.body[1], {});
    assert.deepEqual(noId.body[2], { id: ['This object is named more than once in the list.'] });

    const delMissing = await svc.admin.request('DELETE', DEVICES, [{ id: a.id }, { id: 999999 }]);
    assert.equal(delMissing.status, 404);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 2);
    const deleted = await svc.admin.request('DELETE', DEVICES, [{ id: a.id }, { id: b.id }]);
    assert.equal(deleted.status, 204);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 0);
    assert.equal((await svc.admin.request('DELETE', DEVICES, { id: 1 })).status, 400);
  });

  it('a bulk item is judged by the caller object constraints before and after the change; one refused writes nothing', async () => {
    const mine = (await svc.admin.post(DEVICES, { name: 'm', tenant: 'blue' })).body.id;
    const theirs = (await svc.admin.post(DEVICES, { name: 't', tenant: 'red' })).body.id;
    const blue = await createUser(svc, 'blue', [
      { object_types: ['dcim.device'], actions: ['view', 'add', 'change', 'delete'], constraints: { tenant: 'blue' } },
    ]);
    const create = await blue.client.post(DEVICES, [
      { name: 'x', tenant: 'blue' },
      { name: 'y', tenant: 'red' },
    ]);
    assert.equal(create.status, 403);
    assert.deepEqual(create.body[0], {});
    assert.ok(create.body[1].detail);
    const after = await blue.client.patch(DEVICES, [{ id: mine, tenant: 'red' }]);
    assert.equal(after.status, 403, 'the new state must satisfy the constraint too');
    const hidden = await blue.client.patch(DEVICES, [
      { id: mine, name: 'm2' },
      { id: theirs, name: 't2' },
    ]);
    assert.equal(hidden.status, 404, 'an object the caller cannot see is not found');
    assert.ok(!JSON.stringify(hidden.body).includes('red'));
    const del = await blue.client.request('DELETE', DEVICES, [{ id: mine }, { id: theirs }]);
    assert.equal(del.status, 404);
    const all = await svc.admin.get(`${DEVICES}?ordering=name`);
    assert.deepEqual(
      all.body.results.map((d: { name: string; tenant: string }) => [d.name, d.tenant]),
      [
        ['m', 'blue'],
        ['t', 'red'],
      ],
    );
  });

  it('a bulk write into a branch makes one branch change per object and a changelog entry per object, as its caller', async () => {
    const existing = (await svc.admin.post(DEVICES, { name: 'main-1' })).body.id;
    const branch = await createBranch(svc, 'bulk');
    const inBranch = svc.admin.inBranch(branch.schema_id);
    const created = await inBranch.post(DEVICES, [{ name: 'n1' }, { name: 'n2' }, { name: 'n3' }]);
    assert.equal(created.status, 201);
    const ids = created.body.map((d: { id: number }) => d.id);
    assert.equal(
      (
        await inBranch.patch(DEVICES, [
          { id: ids[0], status: 'planned' },
          { id: existing, status: 'active' },
        ])
      ).status,
      200,
    );
    assert.equal((await inBranch.request('DELETE', DEVICES, [{ id: ids[2] }])).status, 204);
    const rows = await branchChangesOf(svc, branch.id);
    assert.deepEqual(
      rows.map((r) => [r.object_id, r.action]),
      [
        [existing, 'update'],
        [ids[0], 'create'],
        [ids[1], 'create'],
      ],
    );
    assert.equal((await svc.admin.get(DEVICES)).body.count, 1, 'main is untouched');
    const log = await changelogOf(svc, 'dcim.device', ids[0]);
    assert.deepEqual(
      log.map((r) => r.action),
      ['create', 'update'],
    );
    // Recorded as the caller, in the branch: who wrote the branch (independent approval) reads this.
    const me = (await svc.admin.get('/api/users/me/')).body.id;
    assert.ok(log.every((r) => r.user_id === me && r.branch_id === branch.id));
    for (const id of [...ids, existing]) assert.ok((await changelogOf(svc, 'dcim.device', id)).length >= 1);

    // The branch rule: a user with the object permission who neither owns the branch nor holds change_branch.
    const other = await createUser(svc, 'other', [
      { object_types: ['dcim.device'], actions: ['view', 'add', 'change', 'delete'] },
      { object_types: ['branching.branch'], actions: ['view'] },
    ]);
    const refused = await other.client.inBranch(branch.schema_id).post(DEVICES, [{ name: 'z' }]);
    assert.equal(refused.status, 403);
    assert.equal((await branchChangesOf(svc, branch.id)).length, 3);
  });

  it('the main write guards refuse a bulk write on main as they refuse a single write', async () => {
    svc.host.mainWriteGuards.push(async () => 'Direct changes to main are disabled.');
    const refused = await svc.admin.post(DEVICES, [{ name: 'a' }, { name: 'b' }]);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, [
      { detail: 'Direct changes to main are disabled.' },
      { detail: 'Direct changes to main are disabled.' },
    ]);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 0);
  });

  it('a bulk write with an Idempotency-Key is replayed, not written twice', async () => {
    const headers = { 'Idempotency-Key': 'bulk-1' };
    const first = await svc.admin.post(DEVICES, [{ name: 'a' }, { name: 'b' }], { headers });
    const again = await svc.admin.post(DEVICES, [{ name: 'a' }, { name: 'b' }], { headers });
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 2);
  });

  it('a list of more than 1,000 items is a 400 naming the limit, and nothing is written', async () => {
    const items = Array.from({ length: 1001 }, (_, i) => ({ name: `d${i}` }));
    const refused = await svc.admin.post(DEVICES, items);
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify(refused.body), /at most 1000/);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 0);
  });

  it('bulk writes on the other list endpoints are all or none too (tags)', async () => {
    const refused = await svc.admin.post(TAGS, [
      { name: 'Core', slug: 'core' },
      { name: 'Edge', slug: 'core' },
    ]);
    assert.ok(refused.status >= 400 && refused.status < 500, String(refused.status));
    assert.ok(Array.isArray(refused.body) && refused.body.length === 2);
    assert.deepEqual(refused.body[0], {});
    assert.equal((await svc.admin.get(TAGS)).body.count, 0);
    const created = await svc.admin.post(TAGS, [
      { name: 'Core', slug: 'core' },
      { name: 'Edge', slug: 'edge' },
    ]);
    assert.equal(created.status, 201);
    const ids = created.body.map((t: { id: number }) => t.id);
    const patched = await svc.admin.patch(TAGS, [
      { id: ids[0], name: 'Core 2' },
      { id: ids[1], name: 'Edge 2' },
    ]);
    assert.equal(patched.status, 200);
    assert.deepEqual(
      patched.body.map((t: { name: string }) => t.name),
      ['Core 2', 'Edge 2'],
    );
    assert.equal(
      (
        await svc.admin.request(
          'DELETE',
          TAGS,
          ids.map((id: number) => ({ id })),
        )
      ).status,
      204,
    );
    assert.equal((await svc.admin.get(TAGS)).body.count, 0);
  });

  it('OPTIONS on a list answers DRF metadata with the choice fields, with the same authentication as GET', async () => {
    const devices = await svc.admin.request('OPTIONS', DEVICES);
    assert.equal(devices.status, 200);
    assert.deepEqual(devices.body.renders, ['application/json']);
    const status = devices.body.actions.POST.status;
    assert.equal(status.type, 'choice');
    assert.deepEqual(status.choices[1], { value: 'active', display_name: 'Active' });

    const crs = await svc.admin.request('OPTIONS', '/api/plugins/change-control/change-requests/');
    assert.deepEqual(
      crs.body.actions.POST.priority.choices.map((c: { value: string }) => c.value),
      ['low', 'medium', 'high', 'critical'],
    );
    assert.equal(crs.body.actions.POST.branch.required, true);
    const reviews = await svc.admin.request('OPTIONS', '/api/plugins/change-control/reviews/');
    assert.deepEqual(
      reviews.body.actions.POST.decision.choices.map((c: { value: string }) => c.value),
      ['approve', 'reject', 'comment'],
    );

    assert.equal((await svc.anonymous.request('OPTIONS', DEVICES)).status, 403);
    const nobody = await createUser(svc, 'nobody');
    assert.equal((await nobody.client.request('OPTIONS', DEVICES)).status, 403);
    assert.equal((await svc.admin.request('OPTIONS', BRANCHES)).status, 200);
  });
});
