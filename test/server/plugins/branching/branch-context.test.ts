import assert from 'node:assert/strict';
import {
  type ApiClient,
  eachTestService,
  hostOnly,
  serviceForEachTest,
  type TestService,
} from '../../../support/service';
import { changelogOf, CHANGES, createBranch, createUser, SITES, DEVICES } from './fixtures';

describe('branching: writes and reads in a branch', () => {
  let svc: TestService;
  let branch: { id: number; schema_id: string };
  let inBranch: ApiClient;
  let moved: Array<{ objectTypes: string[]; newlyTouchedTypes: string[] }>;
  serviceForEachTest(
    async (started) => {
      svc = started;
      branch = await createBranch(svc, 'feature');
      inBranch = svc.admin.inBranch(branch.schema_id);
      moved = [];
      svc.host.branchHooks.on('changesMoved', async (_ctx, p) => {
        moved.push({ objectTypes: p.objectTypes, newlyTouchedTypes: p.newlyTouchedTypes });
      });
    },
    { plugins: hostOnly() },
  );

  const changes = async () => (await svc.admin.get(`${CHANGES}?branch_id=${branch.id}`)).body.results;

  it('keeps main untouched and records one change per object', async () => {
    const site = (await svc.admin.post(SITES, { name: 'dc1', status: 'active' })).body;
    const dev = (await svc.admin.post(DEVICES, { name: 'edge-1', status: 'active' })).body;

    const created = await inBranch.post(DEVICES, { name: 'edge-2', status: 'planned' });
    assert.equal(created.status, 201);
    assert.equal((await inBranch.patch(`${SITES}${site.id}/`, { status: 'retired' })).status, 200);
    assert.equal((await inBranch.delete(`${DEVICES}${dev.id}/`)).status, 204);

    assert.deepEqual((await svc.admin.get(SITES)).body.results, [site], 'main is untouched');
    assert.deepEqual((await svc.admin.get(DEVICES)).body.results, [dev]);
    assert.equal((await svc.admin.get(`${DEVICES}${created.body.id}/`)).status, 404);

    const rows = await changes();
    assert.deepEqual(
      rows.map((c: any) => [c.object_type, c.object_id, c.action]),
      [
        ['dcim.device', created.body.id, 'create'],
        ['dcim.site', site.id, 'update'],
        ['dcim.device', dev.id, 'delete'],
      ],
    );
    const [create, update, del] = rows;
    assert.deepEqual([create.original, create.modified], [null, { name: 'edge-2', status: 'planned' }]);
    assert.deepEqual(
      [update.original, update.modified, update.current],
      [
        { name: 'dc1', status: 'active' },
        { name: 'dc1', status: 'retired' },
        { name: 'dc1', status: 'active' },
      ],
    );
    assert.deepEqual([del.original, del.modified], [{ name: 'edge-1', status: 'active' }, null]);
    assert.equal(update.object_repr, 'dc1');
    assert.equal(update.branch, branch.id);
    assert.equal(update.conflicts, null);
    assert.equal(create.current, null);

    const log = await changelogOf(svc, 'dcim.site', site.id);
    assert.deepEqual(
      log.map((r) => [r.action, r.branch_id]),
      [
        ['create', null],
        ['update', branch.id],
      ],
    );

    assert.deepEqual(moved, [
      { objectTypes: ['dcim.device'], newlyTouchedTypes: ['dcim.device'] },
      { objectTypes: ['dcim.site'], newlyTouchedTypes: ['dcim.site'] },
      { objectTypes: ['dcim.device'], newlyTouchedTypes: [] },
    ]);
  });

  it('overlays the branch on main for lists and details', async () => {
    const keep = (await svc.admin.post(DEVICES, { name: 'keep', status: 'active' })).body;
    const edit = (await svc.admin.post(DEVICES, { name: 'edit', status: 'active' })).body;
    const gone = (await svc.admin.post(DEVICES, { name: 'gone', status: 'active' })).body;
    svc.clock.advanceDays(1);
    await inBranch.patch(`${DEVICES}${edit.id}/`, { status: 'planned' });
    await inBranch.delete(`${DEVICES}${gone.id}/`);
    const added = (await inBranch.post(DEVICES, { name: 'added', status: 'planned' })).body;

    const list = (await inBranch.get(DEVICES)).body;
    assert.deepEqual(
      list.results.map((o: any) => o.name),
      ['keep', 'edit', 'added'],
    );
    assert.equal(list.count, 3);
    assert.deepEqual(list.results[0], keep);
    assert.equal(list.results[1].status, 'planned');
    assert.equal(list.results[1].created, edit.created);
    assert.equal(list.results[1].last_updated, '2026-11-02T09:00:00.000Z');
    assert.deepEqual(
      (await inBranch.get(`${DEVICES}?status=planned`)).body.results.map((o: any) => o.name),
      ['edit', 'added'],
    );
    assert.equal((await inBranch.get(`${DEVICES}${gone.id}/`)).status, 404);
    assert.equal((await inBranch.patch(`${DEVICES}${gone.id}/`, { name: 'x' })).status, 404);
    assert.deepEqual((await inBranch.get(`${DEVICES}${added.id}/`)).body, added);
    assert.equal((await inBranch.get(`${DEVICES}${edit.id}/`)).body.status, 'planned');
    assert.equal((await svc.admin.get(`${DEVICES}${edit.id}/`)).body.status, 'active');

    const lateOnMain = (await svc.admin.post(DEVICES, { name: 'late' })).body;
    assert.equal(
      (await inBranch.get(`${DEVICES}${lateOnMain.id}/`)).status,
      200,
      'main objects the branch does not touch show through',
    );
  });

  it('keeps the net effect: create then delete leaves nothing, update then update keeps the first baseline', async () => {
    const created = (await inBranch.post(DEVICES, { name: 'temp' })).body;
    await inBranch.patch(`${DEVICES}${created.id}/`, { status: 'x' });
    assert.deepEqual(
      (await changes()).map((c: any) => [c.action, c.modified]),
      [['create', { name: 'temp', status: 'x' }]],
    );
    await inBranch.delete(`${DEVICES}${created.id}/`);
    assert.deepEqual(await changes(), []);

    const dev = (await svc.admin.post(DEVICES, { name: 'd', status: 'active' })).body;
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    const first = (await changes())[0];
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'offline', rack: 3 });
    const rows = await changes();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].id, first.id, 'the same change row');
    assert.deepEqual(rows[0].original, { name: 'd', status: 'active' });
    assert.deepEqual(rows[0].modified, { name: 'd', status: 'offline', rack: 3 });

    await inBranch.put(`${DEVICES}${dev.id}/`, { name: 'd', status: 'active' });
    assert.deepEqual(await changes(), [], 'updating back to the original removes the change');

    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    await inBranch.delete(`${DEVICES}${dev.id}/`);
    const rows2 = await changes();
    assert.deepEqual(
      rows2.map((c: any) => [c.action, c.original, c.modified]),
      [['delete', { name: 'd', status: 'active' }, null]],
    );

    assert.deepEqual(
      moved.map((m) => m.newlyTouchedTypes),
      [['dcim.device'], [], [], ['dcim.device'], [], [], ['dcim.device'], []],
    );
  });

  it('keeps created ids when objects are created in a branch and on main', async () => {
    const inB = (await inBranch.post(SITES, { name: 'b' })).body;
    const onMain = (await svc.admin.post(SITES, { name: 'm' })).body;
    assert.notEqual(inB.id, onMain.id);
    assert.deepEqual(
      (await inBranch.get(SITES)).body.results.map((o: any) => o.id),
      [inB.id, onMain.id].sort((a, b) => a - b),
    );
  });

  it('refuses writes into a branch that is not ready, and keeps reads working', async () => {
    const dev = (await svc.admin.post(DEVICES, { name: 'd' })).body;
    await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    assert.equal(
      (await svc.admin.post(`/api/plugins/branching/branches/${branch.id}/merge/`, { commit: true })).status,
      200,
    );
    const refused = await inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'offline' });
    assert.equal(refused.status, 400);
    assert.match(refused.body.detail, /merged/);
    assert.equal((await inBranch.post(DEVICES, { name: 'x' })).status, 400);
    assert.equal((await inBranch.delete(`${DEVICES}${dev.id}/`)).status, 400);
    assert.equal((await inBranch.get(`${DEVICES}${dev.id}/`)).body.status, 'planned');
  });
});

describe('branching: who may write in a branch, and who learns that it exists', () => {
  const svc = eachTestService({ plugins: hostOnly() });

  const DEVICE_RIGHTS = { object_types: ['dcim.device'], actions: ['view', 'add', 'change', 'delete'] };
  const SEE_BRANCHES = { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] };
  const changeCount = async (branchId: number) =>
    (await svc.admin.get(`${CHANGES}?branch_id=${branchId}`)).body.count as number;

  it("refuses a write in someone else's branch without branching.change_branch for it: 403 naming the branch, nothing written", async () => {
    const branch = await createBranch(svc, 'admins-work');
    const dev = (await svc.admin.post(DEVICES, { name: 'edge-1' })).body;
    const mallory = await createUser(svc, 'mallory', [DEVICE_RIGHTS, SEE_BRANCHES]);
    const inBranch = mallory.client.inBranch(branch.schema_id);
    for (const res of [
      await inBranch.post(DEVICES, { name: 'sneaky' }),
      await inBranch.patch(`${DEVICES}${dev.id}/`, { name: 'renamed' }),
      await inBranch.put(`${DEVICES}${dev.id}/`, { name: 'replaced' }),
      await inBranch.delete(`${DEVICES}${dev.id}/`),
    ]) {
      assert.equal(res.status, 403);
      assert.equal(
        res.body.detail,
        'You may not write to branch "admins-work": only its owner or a holder of branching.change_branch for it may.',
      );
    }
    assert.equal(await changeCount(branch.id), 0);
    // On main the same user writes as before; reads in the branch are allowed.
    assert.equal((await mallory.client.patch(`${DEVICES}${dev.id}/`, { name: 'on-main' })).status, 200);
    assert.equal((await inBranch.get(DEVICES)).status, 200);
  });

  it('lets the owner write, and a holder of change_branch whose constraints admit the branch; superusers are exempt', async () => {
    const owner = await createUser(svc, 'owner', [
      DEVICE_RIGHTS,
      SEE_BRANCHES,
      { object_types: ['branching.branch'], actions: ['add'] },
    ]);
    const own = (await owner.client.post('/api/plugins/branching/branches/', { name: 'owned' })).body;
    assert.equal((await owner.client.inBranch(own.schema_id).post(DEVICES, { name: 'mine' })).status, 201);

    const teamBranch = await createBranch(svc, 'team-1');
    const otherBranch = await createBranch(svc, 'other');
    const editor = await createUser(svc, 'editor', [
      DEVICE_RIGHTS,
      SEE_BRANCHES,
      { object_types: ['branching.branch'], actions: ['change'], constraints: { name__in: ['team-1'] } },
    ]);
    assert.equal((await editor.client.inBranch(teamBranch.schema_id).post(DEVICES, { name: 'team' })).status, 201);
    const refused = await editor.client.inBranch(otherBranch.schema_id).post(DEVICES, { name: 'elsewhere' });
    assert.equal(refused.status, 403);
    assert.match(refused.body.detail, /branch "other"/);
    assert.equal((await svc.admin.inBranch(own.schema_id).post(DEVICES, { name: 'admin-too' })).status, 201);
    assert.equal(await changeCount(own.id), 2);
  });

  it('Branch actions need their own permission: sync needs sync_branch, merge merge_branch, revert revert_branch, each with constraints admitting the branch; owning the branch or change_branch is neither needed nor enough', async () => {
    const branch = await createBranch(svc, 'to-merge');
    await svc.admin.inBranch(branch.schema_id).post(DEVICES, { name: 'new' });
    const actionPath = (action: string) => `/api/plugins/branching/branches/${branch.id}/${action}/`;
    // The branch's writer (change_branch) without the action permissions: refused every action.
    const writer = await createUser(svc, 'writer', [
      SEE_BRANCHES,
      { object_types: ['branching.branch'], actions: ['change'] },
    ]);
    for (const action of ['sync', 'merge', 'revert'])
      assert.equal((await writer.client.post(actionPath(action), { commit: true })).status, 403, action);
    // Action permissions whose constraints exclude the branch: refused too.
    const elsewhere = await createUser(svc, 'elsewhere', [
      SEE_BRANCHES,
      { object_types: ['branching.branch'], actions: ['sync', 'merge', 'revert'], constraints: { name: 'other' } },
    ]);
    for (const action of ['sync', 'merge'])
      assert.equal((await elsewhere.client.post(actionPath(action), { commit: true })).status, 403, action);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 0, 'nothing merged');

    // Each action permission alone, for this branch: sync, then merge, then revert.
    const only = async (name: string, action: string) =>
      (
        await createUser(svc, name, [
          SEE_BRANCHES,
          { object_types: ['branching.branch'], actions: [action], constraints: { name: 'to-merge' } },
        ])
      ).client;
    const syncer = await only('syncer', 'sync');
    const merger = await only('merger', 'merge');
    const reverter = await only('reverter', 'revert');
    assert.equal((await merger.post(actionPath('sync'), { commit: true })).status, 403, 'merge_branch does not sync');
    assert.equal((await syncer.post(actionPath('sync'), { commit: true })).status, 200);
    assert.equal((await syncer.post(actionPath('merge'), { commit: true })).status, 403, 'sync_branch does not merge');
    assert.equal((await merger.post(actionPath('merge'), { commit: true })).status, 200);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 1, 'merged');
    assert.equal(
      (await merger.post(actionPath('revert'), { commit: true })).status,
      403,
      'merge_branch does not revert',
    );
    assert.equal((await reverter.post(actionPath('revert'), { commit: true })).status, 200);
    assert.equal((await svc.admin.get(DEVICES)).body.count, 0, 'reverted');
  });

  it("lists in an action's summary only the changed objects the caller may see (the action itself covers them all)", async () => {
    const branch = await createBranch(svc, 'mixed');
    const inBranch = svc.admin.inBranch(branch.schema_id);
    await inBranch.post(DEVICES, { name: 'lab-dev', role: 'lab' });
    await inBranch.post(DEVICES, { name: 'core-dev', role: 'core' });
    const labOnly = await createUser(svc, 'lab-merger', [
      SEE_BRANCHES,
      { object_types: ['branching.branch'], actions: ['merge', 'change'] },
      { object_types: ['dcim.device'], actions: ['view'], constraints: { role: 'lab' } },
    ]);
    const dry = await labOnly.client.post(`/api/plugins/branching/branches/${branch.id}/merge/`, { commit: false });
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.deepEqual(
      dry.body.changes.map((c: { object_repr: string }) => c.object_repr),
      ['lab-dev'],
    );
    const merged = await labOnly.client.post(`/api/plugins/branching/branches/${branch.id}/merge/`, { commit: true });
    assert.deepEqual(
      merged.body.changes.map((c: { object_repr: string }) => c.object_repr),
      ['lab-dev'],
    );
    assert.deepEqual((await svc.admin.get(DEVICES)).body.results.map((d: { name: string }) => d.name).sort(), [
      'core-dev',
      'lab-dev',
    ]);
  });

  it('answers a branch the caller cannot view exactly as one that does not exist, with or without a token', async () => {
    const branch = await createBranch(svc, 'secret');
    await svc.admin.inBranch(branch.schema_id).post(DEVICES, { name: 'hidden' });
    const blind = await createUser(svc, 'blind', [DEVICE_RIGHTS]);
    const narrow = await createUser(svc, 'narrow', [
      DEVICE_RIGHTS,
      { object_types: ['branching.branch'], actions: ['view'], constraints: { name: 'public' } },
    ]);
    const probes: Array<[string, ApiClient, string, string, unknown?]> = [
      ['no view_branch, list', blind.client, 'GET', DEVICES],
      ['constrained away, list', narrow.client, 'GET', DEVICES],
      ['no view_branch, write', blind.client, 'POST', DEVICES, { name: 'x' }],
      ['no token, status', svc.anonymous, 'GET', '/api/status/'],
      [
        'no token, provision',
        svc.anonymous,
        'POST',
        '/api/users/tokens/provision/',
        { username: 'blind', password: 'x' },
      ],
      ['no token, list', svc.anonymous, 'GET', DEVICES],
    ];
    for (const [what, client, method, path, body] of probes) {
      const existing = await client.inBranch(branch.schema_id).request(method, path, body);
      const missing = await client.inBranch('nosuchbr').request(method, path, body);
      assert.equal(existing.status, missing.status, what);
      assert.deepEqual(
        JSON.stringify(existing.body).replace(branch.schema_id, 'X'),
        JSON.stringify(missing.body).replace('nosuchbr', 'X'),
        what,
      );
      assert.notEqual(existing.status, 200, what);
    }
    assert.deepEqual((await blind.client.inBranch(branch.schema_id).get(DEVICES)).body, {
      'X-NetBox-Branch': [`Unknown branch "${branch.schema_id}".`],
    });
    // Without the header the same callers read main as before.
    assert.equal((await blind.client.get(DEVICES)).status, 200);
    assert.equal((await svc.anonymous.get('/api/status/')).status, 200);
  });
});
