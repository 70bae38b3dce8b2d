import assert from 'node:assert/strict';
import type { HostPlugin } from '../../../../server/host/host';
import { branchingPlugin } from '../../../../server/plugins/branching/plugin';
import { mergeBranch } from '../../../../server/plugins/branching/merge';
import { createCtx } from '../../../../server/host/core/context';
import { startService, type ApiClient, type TestService, hostOnly } from '../../../support/service';
import { BRANCHES, changelogOf, createBranch, createUser, DEVICES } from './fixtures';

interface Fixture {
  branch: { id: number; schema_id: string };
  inBranch: ApiClient;
  kept: any;
  edited: any;
  removed: any;
  added: any;
}

/** Main with three devices; a branch that edits one, deletes one and adds one. */
async function prepare(svc: TestService): Promise<Fixture> {
  const kept = (await svc.admin.post(DEVICES, { name: 'kept', status: 'active' })).body;
  const edited = (await svc.admin.post(DEVICES, { name: 'edited', status: 'active', rack: 1 })).body;
  const removed = (await svc.admin.post(DEVICES, { name: 'removed', status: 'active' })).body;
  const branch = await createBranch(svc, 'feature');
  const inBranch = svc.admin.inBranch(branch.schema_id);
  svc.clock.advanceDays(1);
  await inBranch.patch(`${DEVICES}${edited.id}/`, { status: 'planned' });
  await inBranch.delete(`${DEVICES}${removed.id}/`);
  const added = (await inBranch.post(DEVICES, { name: 'added', status: 'planned' })).body;
  return { branch, inBranch, kept, edited, removed, added };
}

describe('branching: merge and revert', () => {
  let svc: TestService;
  let fired: string[];
  const start = async (plugins?: HostPlugin[]) => {
    svc = await startService({ plugins: plugins ?? hostOnly() });
    fired = [];
    for (const name of ['merged', 'reverted', 'synced'] as const) {
      svc.host.branchHooks.on(name, async (_ctx, p) => {
        fired.push(`${name}:${p.branch.status}`);
      });
    }
  };
  afterEach(async () => svc.close());

  it('merges: applies every change to main, records main changelog entries and marks the branch merged', async () => {
    await start();
    const f = await prepare(svc);
    svc.clock.advanceDays(1);
    const res = await svc.admin.post(`${BRANCHES}${f.branch.id}/merge/`, { commit: true });
    assert.equal(res.status, 200);
    assert.equal(res.body.commit, true);
    assert.equal(res.body.branch.status, 'merged');
    assert.equal(res.body.branch.merged_time, '2026-11-03T09:00:00.000Z');
    const admin = await svc.host.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirstOrThrow();
    assert.equal(res.body.branch.merged_by, admin.id);
    assert.deepEqual(
      res.body.changes.map((c: any) => [c.object_id, c.action, c.effect]),
      [
        [f.edited.id, 'update', 'updated'],
        [f.removed.id, 'delete', 'deleted'],
        [f.added.id, 'create', 'created'],
      ],
    );

    const main = (await svc.admin.get(DEVICES)).body.results;
    assert.deepEqual(
      main.map((o: any) => [o.id, o.name, o.status]),
      [
        [f.kept.id, 'kept', 'active'],
        [f.edited.id, 'edited', 'planned'],
        [f.added.id, 'added', 'planned'],
      ],
    );
    assert.equal(main[1].rack, 1);
    assert.equal(main[2].created, f.added.created, 'a branch-created object keeps its id and creation time');

    const editedLog = await changelogOf(svc, 'dcim.device', f.edited.id);
    assert.deepEqual(
      editedLog.map((r) => [r.action, r.branch_id]),
      [
        ['create', null],
        ['update', f.branch.id],
        ['update', null],
      ],
    );
    const addedLog = await changelogOf(svc, 'dcim.device', f.added.id);
    assert.deepEqual(
      addedLog.map((r) => [r.action, r.branch_id]),
      [
        ['create', f.branch.id],
        ['create', null],
      ],
    );
    assert.deepEqual(
      (await changelogOf(svc, 'dcim.device', f.removed.id)).map((r) => [r.action, r.branch_id]).slice(-1),
      [['delete', null]],
    );
    assert.deepEqual(fired, ['merged:merged']);

    assert.equal((await svc.admin.get(`${BRANCHES}${f.branch.id}/`)).body.status, 'merged');
    const again = await svc.admin.post(`${BRANCHES}${f.branch.id}/merge/`, { commit: true });
    assert.equal(again.status, 409);
    assert.match(again.body.detail, /merged/);
    assert.equal((await svc.admin.post(`${BRANCHES}${f.branch.id}/sync/`, { commit: true })).status, 409);
  });

  it('keeps main changes to attributes the branch did not touch when merging', async () => {
    await start();
    const f = await prepare(svc);
    await svc.admin.patch(`${DEVICES}${f.edited.id}/`, { rack: 7 });
    await svc.admin.post(`${BRANCHES}${f.branch.id}/merge/`, { commit: true });
    const merged = (await svc.admin.get(`${DEVICES}${f.edited.id}/`)).body;
    assert.equal(merged.status, 'planned');
    assert.equal(merged.rack, 7);
  });

  it('writes nothing in a dry run and reports what would happen', async () => {
    await start();
    const f = await prepare(svc);
    const before = (await svc.admin.get(DEVICES)).body;
    const logCount = async () => (await svc.host.db.selectFrom('object_changes').select('id').execute()).length;
    const logBefore = await logCount();
    for (const body of [{ commit: false }, {}]) {
      const dry = await svc.admin.post(`${BRANCHES}${f.branch.id}/merge/`, body);
      assert.equal(dry.status, 200);
      assert.equal(dry.body.commit, false);
      assert.equal(dry.body.branch.status, 'ready');
      assert.deepEqual(
        dry.body.changes.map((c: any) => c.effect),
        ['updated', 'deleted', 'created'],
      );
    }
    const sync = await svc.admin.post(`${BRANCHES}${f.branch.id}/sync/`, { commit: false });
    assert.equal(sync.body.branch.last_sync, null);
    assert.deepEqual((await svc.admin.get(DEVICES)).body, before);
    assert.equal(await logCount(), logBefore);
    assert.equal((await svc.admin.get(`${BRANCHES}${f.branch.id}/`)).body.status, 'ready');
    assert.equal(
      (await svc.host.db.selectFrom('branch_changes').select('premerge').where('premerge', 'is not', null).execute())
        .length,
      0,
    );
    assert.deepEqual(fired, []);
    assert.equal((await svc.admin.post(`${BRANCHES}${f.branch.id}/merge/`, { commit: 'yes' })).status, 400);
  });

  it('reverts: main goes back exactly to its state before the merge and the branch is ready again', async () => {
    await start();
    const f = await prepare(svc);
    const before = (await svc.admin.get(DEVICES)).body;
    svc.clock.advanceDays(1);
    await svc.admin.post(`${BRANCHES}${f.branch.id}/merge/`, { commit: true });
    svc.clock.advanceDays(1);

    const dry = await svc.admin.post(`${BRANCHES}${f.branch.id}/revert/`, { commit: false });
    assert.deepEqual(
      dry.body.changes.map((c: any) => c.effect),
      ['updated', 'created', 'deleted'],
    );
    assert.equal((await svc.admin.get(DEVICES)).body.count, 3);
    assert.equal(dry.body.branch.status, 'merged');

    const res = await svc.admin.post(`${BRANCHES}${f.branch.id}/revert/`, { commit: true });
    assert.equal(res.status, 200);
    assert.equal(res.body.branch.status, 'ready');
    assert.equal(res.body.branch.merged_time, null);
    assert.equal(res.body.branch.merged_by, null);
    assert.deepEqual((await svc.admin.get(DEVICES)).body, before);
    assert.deepEqual(
      (await changelogOf(svc, 'dcim.device', f.added.id)).map((r) => [r.action, r.branch_id]),
      [
        ['create', f.branch.id],
        ['create', null],
        ['delete', null],
      ],
    );
    assert.deepEqual(fired, ['merged:merged', 'reverted:ready']);

    const again = await svc.admin.post(`${BRANCHES}${f.branch.id}/revert/`, { commit: true });
    assert.equal(again.status, 409);
    assert.match(again.body.detail, /only a merged branch/);
    assert.equal(
      (await f.inBranch.patch(`${DEVICES}${f.kept.id}/`, { status: 'x' })).status,
      200,
      'the branch accepts changes again',
    );
  });

  it('lets a merge validator refuse with 409 and writes nothing', async () => {
    const seen: string[] = [];
    const gate: HostPlugin = {
      name: 'gate',
      version: '1.0.0',
      hostVersion: { min: '4.7.0', max: '4.7.99' },
      requires: { branching: '1.2' },
      register(host) {
        host.mergeValidators.add(async (ctx, branch) => {
          seen.push(branch.name);
          await ctx.db
            .updateTable('branches')
            .set({ description: 'touched by the gate' })
            .where('id', '=', branch.id)
            .execute();
          return branch.name === 'feature' ? 'Change request is not approved.' : null;
        });
      },
    };
    await start([branchingPlugin(), gate]);
    const f = await prepare(svc);
    const before = (await svc.admin.get(DEVICES)).body;
    const res = await svc.admin.post(`${BRANCHES}${f.branch.id}/merge/`, { commit: true });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, { detail: 'Change request is not approved.' });
    assert.deepEqual((await svc.admin.get(DEVICES)).body, before);
    const b = (await svc.admin.get(`${BRANCHES}${f.branch.id}/`)).body;
    assert.equal(b.status, 'ready');
    assert.equal(b.description, '', 'what the validator wrote rolled back');
    assert.equal((await svc.admin.post(`${BRANCHES}${f.branch.id}/merge/`, { commit: false })).status, 409);
    assert.deepEqual(seen, ['feature', 'feature']);
    assert.deepEqual(fired, []);

    const other = await createBranch(svc, 'other');
    assert.equal((await svc.admin.post(`${BRANCHES}${other.id}/merge/`, { commit: true })).status, 200);
  });

  it('merges from code as a given user', async () => {
    await start();
    const f = await prepare(svc);
    const merger = await createUser(svc, 'merger');
    const ctx = createCtx({
      host: svc.host,
      user: { id: merger.id, username: 'merger', isSuperuser: false, groupIds: [], writeEnabled: true },
      requestId: 'auto-merge',
      baseUrl: svc.url,
    });
    const result = await mergeBranch(ctx, f.branch.id, { commit: true });
    assert.equal(result.branch.status, 'merged');
    assert.equal(result.branch.merged_by, merger.id);
    assert.equal((await svc.admin.get(`${DEVICES}${f.added.id}/`)).status, 200);
    const log = await changelogOf(svc, 'dcim.device', f.added.id);
    assert.equal(log.at(-1)!.user_name, 'merger');
    assert.equal(log.at(-1)!.request_id, 'auto-merge');
  });
});
