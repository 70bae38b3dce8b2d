import assert from 'node:assert/strict';
import type { BranchHookName } from '../../../../server/host/core/hooks';
import { serviceForEachTest, type TestService } from '../../../support/service';
import { BRANCHES, changelogOf, createBranch, createUser } from './fixtures';

describe('branching: branches', () => {
  let svc: TestService;
  let hooks: Array<{ name: BranchHookName; branch: string; extra?: unknown }>;
  serviceForEachTest(async (started) => {
    svc = started;
    hooks = [];
    for (const name of ['renamed', 'deleting'] as const) {
      svc.host.branchHooks.on(name, async (ctx, payload) => {
        const stillThere = await ctx.db
          .selectFrom('branches')
          .select('id')
          .where('id', '=', payload.branch.id)
          .executeTakeFirst();
        hooks.push({
          name,
          branch: payload.branch.name,
          extra: 'oldName' in payload ? payload.oldName : Boolean(stillThere),
        });
      });
    }
  });

  it('creates a ready branch with a random 8-character schema id, owned by the creator', async () => {
    const res = await svc.admin.post(BRANCHES, { name: 'feature-1', description: 'New racks' });
    assert.equal(res.status, 201);
    const b = res.body;
    assert.match(b.schema_id, /^[a-z0-9]{8}$/);
    assert.equal(b.status, 'ready');
    assert.equal(b.display, 'feature-1');
    assert.equal(b.description, 'New racks');
    assert.equal(b.url, `${svc.url}${BRANCHES}${b.id}/`);
    assert.equal(b.last_sync, null);
    assert.equal(b.merged_time, null);
    assert.equal(b.merged_by, null);
    const admin = await svc.host.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirstOrThrow();
    assert.equal(b.owner, admin.id);
    const other = await createBranch(svc, 'feature-2');
    assert.notEqual(other.schema_id, b.schema_id);
    assert.equal((await changelogOf(svc, 'branching.branch', b.id)).length, 1);
  });

  it('refuses a duplicate or blank name with a field error', async () => {
    await createBranch(svc, 'feature-1');
    const dup = await svc.admin.post(BRANCHES, { name: 'feature-1' });
    assert.equal(dup.status, 400);
    assert.ok(dup.body.name);
    assert.equal((await svc.admin.post(BRANCHES, { name: '  ' })).status, 400);
    assert.equal((await svc.admin.post(BRANCHES, { name: 'x', status: 'merged' })).status, 400);
  });

  it('lists with the id, name, status and owner filters', async () => {
    const a = await createBranch(svc, 'a');
    await createBranch(svc, 'b');
    const user = await createUser(svc, 'alice', [{ object_types: ['branching.branch'], actions: ['view', 'add'] }]);
    const c = (await user.client.post(BRANCHES, { name: 'c' })).body;
    assert.equal(c.owner, user.id);
    const names = async (q: string) =>
      (await svc.admin.get(`${BRANCHES}?${q}`)).body.results.map((x: { name: string }) => x.name);
    assert.deepEqual(await names(`id=${a.id}`), ['a']);
    assert.deepEqual(await names('name=a&name=c'), ['a', 'c']);
    assert.deepEqual(await names('status=ready'), ['a', 'b', 'c']);
    assert.deepEqual(await names('status=merged'), []);
    assert.deepEqual(await names(`owner=${user.id}`), ['c']);
    assert.deepEqual(
      (await user.client.get(`${BRANCHES}?owner=me`)).body.results.map((x: { name: string }) => x.name),
      ['c'],
    );
    assert.equal((await svc.admin.get(`${BRANCHES}?status=bogus`)).status, 400);
  });

  it('renames with PATCH and runs the renamed hooks', async () => {
    const b = await createBranch(svc, 'old');
    const res = await svc.admin.patch(`${BRANCHES}${b.id}/`, { name: 'new' });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'new');
    assert.equal(res.body.schema_id, b.schema_id);
    await svc.admin.patch(`${BRANCHES}${b.id}/`, { description: 'only the description' });
    assert.deepEqual(hooks, [{ name: 'renamed', branch: 'new', extra: 'old' }]);
  });

  it('deletes the branch and its changes, running the deleting hooks before removal', async () => {
    const b = await createBranch(svc, 'doomed');
    await svc.admin.inBranch(b.schema_id).post('/api/dcim/sites/', { name: 's' });
    assert.equal((await svc.admin.delete(`${BRANCHES}${b.id}/`)).status, 204);
    assert.deepEqual(hooks, [{ name: 'deleting', branch: 'doomed', extra: true }]);
    assert.equal((await svc.admin.get(`${BRANCHES}${b.id}/`)).status, 404);
    const left = await svc.host.db.selectFrom('branch_changes').selectAll().execute();
    assert.equal(left.length, 0);
    assert.equal((await svc.admin.inBranch(b.schema_id).get('/api/dcim/sites/')).status, 400);
  });

  it('answers 400 naming the header for an unknown schema id', async () => {
    const res = await svc.admin.inBranch('zzzzzzzz').get('/api/dcim/sites/');
    assert.equal(res.status, 400);
    assert.ok(res.body['X-NetBox-Branch']);
  });

  it('checks the branch permissions, with constraints hiding branches', async () => {
    const b = await createBranch(svc, 'admins');
    const nobody = await createUser(svc, 'nobody');
    assert.equal((await nobody.client.get(BRANCHES)).status, 403);
    assert.equal((await nobody.client.post(BRANCHES, { name: 'x' })).status, 403);
    assert.equal((await nobody.client.post(`${BRANCHES}${b.id}/merge/`, { commit: true })).status, 403);

    const own = await createUser(svc, 'owner', [
      {
        object_types: ['branching.branch'],
        actions: ['view', 'add', 'change', 'delete', 'sync', 'merge'],
        constraints: { owner: '$user' },
      },
    ]);
    const mine = (await own.client.post(BRANCHES, { name: 'mine' })).body;
    assert.deepEqual(
      (await own.client.get(BRANCHES)).body.results.map((x: { name: string }) => x.name),
      ['mine'],
    );
    assert.equal((await own.client.get(`${BRANCHES}${b.id}/`)).status, 404);
    assert.equal((await own.client.patch(`${BRANCHES}${b.id}/`, { name: 'x' })).status, 404);
    assert.equal((await own.client.post(`${BRANCHES}${b.id}/sync/`, { commit: true })).status, 404);
    assert.equal((await own.client.post(`${BRANCHES}${mine.id}/sync/`, { commit: true })).status, 200);
    assert.equal(
      (await own.client.post(`${BRANCHES}${mine.id}/revert/`, { commit: true })).status,
      403,
      'no revert_branch',
    );
    assert.equal((await own.client.delete(`${BRANCHES}${mine.id}/`)).status, 204);
  });

  it('registers the branching object types and its version', async () => {
    assert.equal(svc.host.objectTypes.get('branching.branch')?.display, 'Branch');
    assert.equal(svc.host.objectTypes.get('branching.changediff')?.display, 'Change diff');
    assert.equal((await svc.anonymous.get('/api/status/')).body.plugins.branching, '1.2.0');
  });
});
