import assert from 'node:assert/strict';
import { hostOnly, serviceForEachTest, type ApiClient, type TestService } from '../../../support/service';
import { BRANCHES, changelogOf, CHANGES, createUser, DEVICES, SITES, type TestUser } from './fixtures';

const VIEW_BRANCHES = { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] };
const ADD_BRANCH = { object_types: ['branching.branch'], actions: ['add'] };
const DEVICE_VIEW = { object_types: ['dcim.device', 'dcim.site'], actions: ['view'] };

describe('branching: reverting one object to main, and what a caller may do in a branch', () => {
  let svc: TestService;
  /** alice owns the branch and holds every device and site permission. */
  let alice: TestUser;
  let branch: { id: number; schema_id: string };
  let inBranch: ApiClient;
  serviceForEachTest(
    async (started) => {
      svc = started;
      alice = await createUser(svc, 'alice', [
        VIEW_BRANCHES,
        ADD_BRANCH,
        { object_types: ['dcim.device', 'dcim.site'], actions: ['view', 'add', 'change', 'delete'] },
      ]);
      branch = (await alice.client.post(BRANCHES, { name: 'feature' })).body;
      inBranch = alice.client.inBranch(branch.schema_id);
    },
    { plugins: hostOnly() },
  );

  const changeOf = async (objectId: number) =>
    (await svc.admin.get(`${CHANGES}?branch_id=${branch.id}&object_id=${objectId}`)).body.results[0];
  const revert = (client: ApiClient, changeId: number) => client.post(`${CHANGES}${changeId}/revert/`, {});

  it("reverting an update makes the branch show main's state now, even when main moved since (the change is gone, an update is logged in the branch)", async () => {
    const dev = (await svc.admin.post(DEVICES, { name: 'sw1', rack: 'R1' })).body;
    assert.equal((await inBranch.patch(`${DEVICES}${dev.id}/`, { rack: 'R2' })).status, 200);
    assert.equal((await svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'active' })).status, 200);
    const change = await changeOf(dev.id);
    assert.equal(change.action, 'update');

    const res = await revert(alice.client, change.id);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.action, 'update');
    assert.equal(res.body.change, change.id);
    assert.equal(res.body.object.rack, 'R1');
    assert.equal(res.body.object.status, 'active');
    assert.equal(await changeOf(dev.id), undefined);
    const seen = (await inBranch.get(`${DEVICES}${dev.id}/`)).body;
    assert.deepEqual([seen.rack, seen.status], ['R1', 'active']);
    const log = await changelogOf(svc, 'dcim.device', dev.id);
    const last = log.at(-1)!;
    assert.deepEqual([last.action, last.branch_id, last.user_id], ['update', branch.id, alice.id]);
    assert.equal(JSON.parse(last.prechange_data!).rack, 'R2');
    assert.equal(JSON.parse(last.postchange_data!).rack, 'R1');
  });

  it('reverting a create removes the object from the branch (a delete logged); reverting a delete brings it back (a create logged)', async () => {
    const made = (await inBranch.post(DEVICES, { name: 'new-one' })).body;
    const createChange = await changeOf(made.id);
    const r1 = await revert(alice.client, createChange.id);
    assert.equal(r1.status, 200);
    assert.deepEqual([r1.body.action, r1.body.object], ['delete', null]);
    assert.equal((await inBranch.get(`${DEVICES}${made.id}/`)).status, 404);
    assert.equal((await changelogOf(svc, 'dcim.device', made.id)).at(-1)!.action, 'delete');

    const site = (await svc.admin.post(SITES, { name: 'dc1' })).body;
    assert.equal((await inBranch.delete(`${SITES}${site.id}/`)).status, 204);
    const deleteChange = await changeOf(site.id);
    const r2 = await revert(alice.client, deleteChange.id);
    assert.equal(r2.status, 200);
    assert.equal(r2.body.action, 'create');
    assert.equal(r2.body.object.name, 'dc1');
    assert.equal((await inBranch.get(`${SITES}${site.id}/`)).body.name, 'dc1');
    assert.equal((await changelogOf(svc, 'dcim.site', site.id)).at(-1)!.action, 'create');
    assert.equal((await svc.admin.get(`${CHANGES}?branch_id=${branch.id}`)).body.count, 0);
  });

  it('reverting needs the right to write the branch: a viewer who may not write it is refused (403) and nothing changes', async () => {
    const dev = (await inBranch.post(DEVICES, { name: 'sw9' })).body;
    const change = await changeOf(dev.id);
    const bob = await createUser(svc, 'bob', [
      VIEW_BRANCHES,
      { object_types: ['dcim.device'], actions: ['view', 'add', 'change', 'delete'] },
    ]);
    const res = await revert(bob.client, change.id);
    assert.equal(res.status, 403);
    assert.match(res.body.detail, /may not write to branch "feature"/);
    assert.equal((await changeOf(dev.id)).id, change.id);
  });

  it('reverting needs the object permission of the write it amounts to (delete for a create undone, add for a delete undone, change for an update)', async () => {
    const carol = await createUser(svc, 'carol', [
      VIEW_BRANCHES,
      { object_types: ['branching.branch'], actions: ['change'] },
      { object_types: ['dcim.device'], actions: ['view', 'change'] },
    ]);
    const made = (await inBranch.post(DEVICES, { name: 'made' })).body;
    const main = (await svc.admin.post(DEVICES, { name: 'main', rack: 'R1' })).body;
    const gone = (await svc.admin.post(DEVICES, { name: 'gone' })).body;
    await inBranch.patch(`${DEVICES}${main.id}/`, { rack: 'R2' });
    await inBranch.delete(`${DEVICES}${gone.id}/`);

    assert.equal((await revert(carol.client, (await changeOf(made.id)).id)).status, 403, 'delete is not held');
    assert.equal((await revert(carol.client, (await changeOf(gone.id)).id)).status, 403, 'add is not held');
    assert.equal((await inBranch.get(`${DEVICES}${made.id}/`)).status, 200);
    assert.equal((await inBranch.get(`${DEVICES}${gone.id}/`)).status, 404);
    const r = await revert(carol.client, (await changeOf(main.id)).id);
    assert.equal(r.status, 200, 'change is held, and change_branch lets carol write the branch');
    assert.equal(r.body.object.rack, 'R1');
  });

  it('a change the caller may not see is 404 (another branch they cannot view, an object type they cannot view)', async () => {
    const dev = (await inBranch.post(DEVICES, { name: 'hidden' })).body;
    const change = await changeOf(dev.id);
    const noBranch = await createUser(svc, 'dan', [DEVICE_VIEW]);
    const noDevices = await createUser(svc, 'eve', [VIEW_BRANCHES]);
    assert.equal((await revert(noBranch.client, change.id)).status, 404);
    assert.equal((await revert(noDevices.client, change.id)).status, 404);
    assert.equal((await revert(alice.client, 999_999)).status, 404);
    assert.equal((await changeOf(dev.id)).id, change.id);
  });

  it('a branch that is not ready takes no revert (400 naming its status)', async () => {
    const dev = (await inBranch.post(DEVICES, { name: 'm' })).body;
    const change = await changeOf(dev.id);
    await svc.host.db.updateTable('branches').set({ status: 'merged' }).where('id', '=', branch.id).execute();
    const res = await revert(alice.client, change.id);
    assert.equal(res.status, 400);
    assert.match(res.body.detail, /is merged; only a ready branch accepts changes/);
  });

  it('the changes list filters on object_id (several values: any of them)', async () => {
    const a = (await inBranch.post(DEVICES, { name: 'a' })).body;
    const b = (await inBranch.post(DEVICES, { name: 'b' })).body;
    await inBranch.post(DEVICES, { name: 'c' });
    const res = await svc.admin.get(`${CHANGES}?branch_id=${branch.id}&object_id=${a.id}&object_id=${b.id}`);
    assert.deepEqual(
      res.body.results.map((c: { object_id: number }) => c.object_id),
      [a.id, b.id],
    );
    assert.equal((await svc.admin.get(`${CHANGES}?object_id=x`)).status, 400);
  });

  it('branches/{id}/access/ says whether the caller may write the branch (and why not) and what their object permissions grant per type', async () => {
    const mine = (await alice.client.get(`${BRANCHES}${branch.id}/access/`)).body;
    assert.deepEqual([mine.branch, mine.write, mine.reason], [branch.id, true, null]);
    const device = mine.object_types.find((t: { object_type: string }) => t.object_type === 'dcim.device');
    assert.deepEqual(device, {
      object_type: 'dcim.device',
      display: 'Device',
      url: `${svc.url}${DEVICES}`,
      view: true,
      add: true,
      change: true,
      delete: true,
    });
    const vlan = mine.object_types.find((t: { object_type: string }) => t.object_type === 'ipam.vlan');
    assert.deepEqual([vlan.view, vlan.add, vlan.change, vlan.delete], [false, false, false, false]);

    const bob = await createUser(svc, 'bob', [VIEW_BRANCHES, DEVICE_VIEW]);
    const theirs = (await bob.client.get(`${BRANCHES}${branch.id}/access/`)).body;
    assert.equal(theirs.write, false);
    assert.match(theirs.reason, /only its owner or a holder of branching.change_branch for it may/);

    const stranger = await createUser(svc, 'dan', [DEVICE_VIEW]);
    assert.equal((await stranger.client.get(`${BRANCHES}${branch.id}/access/`)).status, 404);
    assert.equal((await svc.anonymous.get(`${BRANCHES}${branch.id}/access/`)).status, 403);

    await svc.host.db.updateTable('branches').set({ status: 'merged' }).where('id', '=', branch.id).execute();
    const merged = (await alice.client.get(`${BRANCHES}${branch.id}/access/`)).body;
    assert.deepEqual(
      [merged.write, merged.reason],
      [false, 'Branch "feature" is merged; only a ready branch accepts changes.'],
    );
  });
});
