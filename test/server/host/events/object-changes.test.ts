import assert from 'node:assert/strict';
import { eachTestService, hostOnly } from '../../../support/service';
import { actor } from '../users/fixtures';

const PATH = '/api/core/object-changes/';

describe('extras: object changes (the changelog)', () => {
  const svc = eachTestService({ plugins: hostOnly() });

  it('records create, update and delete of a group, newest first, with the data on each side', async () => {
    const created = await svc.admin.post('/api/users/groups/', { name: 'netops' });
    svc.clock.advance(1000);
    await svc.admin.patch(`/api/users/groups/${created.body.id}/`, { description: 'Network operations' });
    svc.clock.advance(1000);
    await svc.admin.delete(`/api/users/groups/${created.body.id}/`);

    const list = await svc.admin.get(`${PATH}?changed_object_type=users.group&changed_object_id=${created.body.id}`);
    assert.equal(list.status, 200);
    assert.equal(list.body.count, 3);
    const [deleted, updated, first] = list.body.results;
    assert.deepEqual([deleted.action, updated.action, first.action], ['delete', 'update', 'create']);
    assert.deepEqual(
      Object.keys(first).sort(),
      [
        'action',
        'changed_object_id',
        'changed_object_type',
        'display',
        'id',
        'object_repr',
        'postchange_data',
        'prechange_data',
        'request_id',
        'time',
        'url',
        'user',
        'user_name',
      ].sort(),
    );
    assert.equal(first.prechange_data, null);
    assert.equal(first.postchange_data.name, 'netops');
    assert.equal(updated.prechange_data.description, '');
    assert.equal(updated.postchange_data.description, 'Network operations');
    assert.equal(deleted.postchange_data, null);
    assert.equal(deleted.prechange_data.name, 'netops');
    assert.equal(first.user_name, 'admin');
    assert.equal(typeof first.user, 'number');
    assert.equal(first.object_repr, 'netops');
    assert.equal(first.time, '2026-11-01T09:00:00.000Z');
    assert.equal(deleted.time, '2026-11-01T09:00:02.000Z');

    const detail = await svc.admin.get(`${PATH}${first.id}/`);
    assert.equal(detail.status, 200);
    assert.deepEqual(detail.body, first);
    assert.equal(first.url, `${svc.url}${PATH}${first.id}/`);

    const oldestFirst = await svc.admin.get(`${PATH}?changed_object_type=users.group&ordering=id`);
    assert.deepEqual(
      oldestFirst.body.results.map((c: { action: string }) => c.action),
      ['create', 'update', 'delete'],
    );
  });

  it('filters by action, user, request and object type; repeated values are OR', async () => {
    const alice = await actor(svc, 'alice', [{ object_types: ['users.group'], actions: ['add'] }]);
    const mine = await alice.client.post('/api/users/groups/', { name: 'alices' });
    assert.equal(mine.status, 201);
    const other = await svc.admin.post('/api/users/groups/', { name: 'admins' });
    await svc.admin.patch(`/api/users/groups/${other.body.id}/`, { description: 'x' });

    const byAlice = await svc.admin.get(`${PATH}?user_id=${alice.id}&changed_object_type=users.group`);
    assert.deepEqual(
      byAlice.body.results.map((c: { object_repr: string }) => c.object_repr),
      ['alices'],
    );
    assert.equal(byAlice.body.results[0].user_name, 'alice');

    const updates = await svc.admin.get(`${PATH}?action=update&changed_object_type=users.group`);
    assert.deepEqual(
      updates.body.results.map((c: { changed_object_id: number }) => c.changed_object_id),
      [other.body.id],
    );

    const both = await svc.admin.get(
      `${PATH}?changed_object_id=${mine.body.id}&changed_object_id=${other.body.id}&changed_object_type=users.group`,
    );
    assert.equal(both.body.count, 3);

    const request = byAlice.body.results[0].request_id;
    const byRequest = await svc.admin.get(`${PATH}?request_id=${request}`);
    assert.ok(byRequest.body.results.every((c: { request_id: string }) => c.request_id === request));

    assert.equal((await svc.admin.get(`${PATH}?action=rename`)).status, 400);
    assert.equal((await svc.admin.get(`${PATH}?user_id=abc`)).status, 400);
    assert.equal((await svc.admin.get(`${PATH}?ordering=object_repr`)).status, 400);
  });

  it('gives every change of one request the same request_id, and different requests different ones', async () => {
    const branch = await svc.admin.post('/api/plugins/branching/branches/', { name: 'b1' });
    assert.equal(branch.status, 201);
    const inBranch = svc.admin.inBranch(branch.body.schema_id);
    assert.equal((await inBranch.post('/api/dcim/sites/', { name: 'site-a' })).status, 201);
    assert.equal((await inBranch.post('/api/dcim/sites/', { name: 'site-b' })).status, 201);

    const inBranchChanges = await svc.admin.get(`${PATH}?changed_object_type=dcim.site&branch_id=${branch.body.id}`);
    assert.equal(inBranchChanges.body.count, 2);
    const [b, a] = inBranchChanges.body.results;
    assert.notEqual(a.request_id, b.request_id);

    const merged = await svc.admin.post(`/api/plugins/branching/branches/${branch.body.id}/merge/`, { commit: true });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    const onMain = (await svc.admin.get(`${PATH}?changed_object_type=dcim.site&ordering=id`)).body.results.filter(
      (c: { request_id: string }) => c.request_id !== a.request_id && c.request_id !== b.request_id,
    );
    assert.equal(onMain.length, 2, 'the merge writes both sites on main');
    assert.equal(onMain[0].request_id, onMain[1].request_id);
    const sameRequest = await svc.admin.get(`${PATH}?request_id=${onMain[0].request_id}`);
    assert.ok(sameRequest.body.count >= 2);
    assert.ok(
      sameRequest.body.results.some(
        (c: { changed_object_type: string }) => c.changed_object_type === 'branching.branch',
      ),
      'the branch update shares the request',
    );
  });

  it('needs core.view_objectchange and honours its constraints; the changelog is read-only', async () => {
    const nobody = await actor(svc, 'nobody');
    assert.equal((await nobody.client.get(PATH)).status, 403);

    await svc.admin.post('/api/users/groups/', { name: 'g1' });
    const viewer = await actor(svc, 'viewer', [
      {
        object_types: ['core.objectchange'],
        actions: ['view'],
        constraints: { action: 'create', changed_object_type: 'users.group' },
      },
    ]);
    const seen = await viewer.client.get(PATH);
    assert.equal(seen.status, 200);
    assert.ok(seen.body.count >= 1);
    assert.ok(
      seen.body.results.every(
        (c: { action: string; changed_object_type: string }) =>
          c.action === 'create' && c.changed_object_type === 'users.group',
      ),
    );
    const hidden = (await svc.admin.get(`${PATH}?changed_object_type=users.user`)).body.results[0];
    assert.equal((await viewer.client.get(`${PATH}${hidden.id}/`)).status, 404);

    assert.equal((await svc.admin.post(PATH, {})).status, 405);
    assert.equal((await svc.admin.delete(`${PATH}${hidden.id}/`)).status, 405);
  });

  it("shows a source-of-truth object's recorded state only to callers who may see it: its branch, and its object's view constraints on the state recorded", async () => {
    const branch = (await svc.admin.post('/api/plugins/branching/branches/', { name: 'secret-branch' })).body;
    await svc.admin.post('/api/dcim/devices/', { name: 'lab-main', role: 'lab' });
    await svc.admin.post('/api/dcim/devices/', { name: 'core-main', role: 'core' });
    await svc.admin.inBranch(branch.schema_id).post('/api/dcim/devices/', { name: 'lab-in-branch', role: 'lab' });
    await svc.admin.post('/api/ipam/vlans/', { name: 'vlan-main' });
    const auditor = await actor(svc, 'auditor', [
      { object_types: ['core.objectchange'], actions: ['view'] },
      { object_types: ['branching.branch'], actions: ['view'], constraints: { name: 'other' } },
      { object_types: ['dcim.device'], actions: ['view'], constraints: { role: 'lab' } },
    ]);
    const reprs = async (query: string) =>
      (await auditor.client.get(`${PATH}?${query}`)).body.results.map((c: { object_repr: string }) => c.object_repr);
    assert.deepEqual(await reprs('changed_object_type=dcim.device'), ['lab-main']);
    assert.deepEqual(await reprs('changed_object_type=ipam.vlan'), []);
    assert.deepEqual(
      await reprs('changed_object_type=branching.branch'),
      [],
      "a branch's own entries follow the branch's visibility",
    );
    const all = (await svc.admin.get(`${PATH}?changed_object_type=dcim.device`)).body.results;
    assert.equal(all.length, 3);
    for (const row of all)
      assert.equal(
        (await auditor.client.get(`${PATH}${row.id}/`)).status,
        row.object_repr === 'lab-main' ? 200 : 404,
        row.object_repr,
      );
  });
});
