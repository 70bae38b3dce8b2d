import assert from 'node:assert/strict';
import { BUILTIN_CHECKS } from '../../../../contract/api/change-control';
import { createCtx } from '../../../../server/host/core/context';
import { factsOfView } from '../../../../server/plugins/change-control/checks/builtins';
import { buildBuiltinFacts, buildCheckView } from '../../../../server/plugins/change-control/checks/view';
import { ccDb } from '../../../../server/plugins/change-control/db/database';
import type { TestService } from '../../../support/service';
import { actor, type PermissionGrant } from '../../host/users/fixtures';
import {
  branch,
  BRANCHES,
  CC_TYPES,
  changesOf,
  COMMENTS,
  created,
  detail,
  DEVICES,
  expectStatus,
  ok,
  openRequest,
  policy,
  REQUESTS,
} from './fixtures';
import { approve, assertCheck, checksByName, RUN_CHECKS, setup, startWithChecks } from './checks-support';

const BUILTINS = ['has-changes', 'no-conflicts', 'not-stale', 'threads-resolved', 'mergeable'];

/** The built-in checks: labels, failing conditions, applied only when a policy names them, skipped when the branch is gone. */
describe('change control checks: built-in checks', () => {
  let svc: TestService;
  before(async () => {
    svc = await startWithChecks({ config: { host: { changelog_retention_days: 5 } } });
  });
  after(async () => svc.close());

  it('Built-in checks apply only when a policy names them: a request under a policy naming none carries none of them', async () => {
    const s = await setup(svc, { policy: {} });
    const checks = await checksByName(svc.admin, s.cr.id);
    for (const name of BUILTINS) assert.equal(checks[name], undefined, name);
    await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
    assert.deepEqual(Object.keys(await checksByName(svc.admin, s.cr.id)), []);
  });

  it('Built-in checks carry their labels: Branch has changes, No conflicts with main, Branch not stale, Comment threads resolved', async () => {
    const s = await setup(svc, { policy: { checks: BUILTINS } });
    const checks = await checksByName(svc.admin, s.cr.id);
    assertCheck(checks['has-changes'], { label: 'Branch has changes', required: true });
    assertCheck(checks['no-conflicts'], { label: 'No conflicts with main', required: true });
    assertCheck(checks['not-stale'], { label: 'Branch not stale', required: true });
    assertCheck(checks['threads-resolved'], { label: 'Comment threads resolved', required: true });
    for (const name of BUILTINS) assertCheck(checks[name], { status: 'success', blocks_merge: false });
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    await approve(s.reviewer, s.cr.id);
    assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
  });

  it('Built-in no-conflicts: fails when branching flags a conflict with main, counting in the summary and naming the object and attribute in its objects; passes again after a sync', async () => {
    const base = await created(svc.admin.post(DEVICES, { name: `core-${Date.now()}`, status: 'active', serial: 'A' }));
    const s = await setup(svc, { policy: { checks: ['no-conflicts'] } });
    await ok(s.inBranch.patch(`${DEVICES}${base.id}/`, { status: 'planned' }));
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    await approve(s.reviewer, s.cr.id);
    assertCheck((await checksByName(svc.admin, s.cr.id))['no-conflicts'], {
      status: 'success',
      summary: 'No conflicts with main.',
    });
    assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);

    await ok(svc.admin.patch(`${DEVICES}${base.id}/`, { status: 'offline' }));
    const failing = (await checksByName(svc.admin, s.cr.id))['no-conflicts'];
    assertCheck(failing, {
      status: 'failure',
      blocks_merge: true,
      summary: '1 change conflicts with main.',
    });
    assert.deepEqual(failing.objects, [
      {
        object_type: 'dcim.device',
        object_id: base.id,
        object_repr: base.name,
        problem: 'Conflicts with main on status.',
      },
    ]);
    // A viewer of the request whose device grant does not admit the object learns only the count.
    for (const [name, grant] of [
      ['no-devices', []],
      ['other-devices', [{ object_types: ['dcim.device'], actions: ['view'], constraints: { name: 'elsewhere' } }]],
    ] as Array<[string, PermissionGrant[]]>) {
      const watcher = await actor(svc, `${name}-${Date.now()}`, [
        { object_types: CC_TYPES, actions: ['view'] },
        { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] },
        ...grant,
      ]);
      const seen = (await checksByName(watcher.client, s.cr.id))['no-conflicts'];
      assertCheck(seen, { status: 'failure', summary: '1 change conflicts with main.' });
      assert.deepEqual(seen.objects, [], name);
      assert.doesNotMatch(JSON.stringify(seen), new RegExp(base.name), name);
    }
    const admitted = await actor(svc, `this-device-${Date.now()}`, [
      { object_types: CC_TYPES, actions: ['view'] },
      { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] },
      { object_types: ['dcim.device'], actions: ['view'], constraints: { name: base.name } },
    ]);
    assert.deepEqual(
      (await checksByName(admitted.client, s.cr.id))['no-conflicts'].objects.map((o: any) => o.object_id),
      [base.id],
    );
    const d = await detail(s.author.client, s.cr.id);
    assert.equal(d.has_conflicts, true);
    assert.equal(d.ready_to_merge, false);
    assert.match(d.merge_blocked_reason, /Required check "No conflicts with main" failed/);
    const refused = await s.author.client.post(`${BRANCHES}${s.branchId}/merge/`, { commit: true });
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /No conflicts with main/);

    expectStatus(await s.author.client.post(`${BRANCHES}${s.branchId}/sync/`, { commit: true }), 200);
    assertCheck((await checksByName(svc.admin, s.cr.id))['no-conflicts'], { status: 'success' });
  });

  it('Built-in mergeable: the merge as a dry run passes while it applies cleanly, and fails listing each object that would conflict or fail to apply; nothing is written', async () => {
    const edited = await created(svc.admin.post(DEVICES, { name: `edited-${Date.now()}`, status: 'active' }));
    const removed = await created(svc.admin.post(DEVICES, { name: `removed-${Date.now()}`, status: 'active' }));
    const s = await setup(svc, { policy: { checks: ['mergeable'] } });
    await ok(s.inBranch.patch(`${DEVICES}${edited.id}/`, { status: 'planned' }));
    await ok(s.inBranch.patch(`${DEVICES}${removed.id}/`, { serial: 'X1' }));
    const clean = (await checksByName(svc.admin, s.cr.id))['mergeable'];
    assertCheck(clean, {
      label: 'Merges cleanly',
      required: true,
      status: 'success',
      summary: /^The merge applies cleanly \(\d+ changes\)\.$/,
    });
    assert.deepEqual(clean.objects, []);

    await ok(svc.admin.patch(`${DEVICES}${edited.id}/`, { status: 'offline' }));
    expectStatus(await svc.admin.delete(`${DEVICES}${removed.id}/`), 204);
    const failing = (await checksByName(svc.admin, s.cr.id))['mergeable'];
    assertCheck(failing, {
      status: 'failure',
      blocks_merge: true,
      summary: '2 objects would conflict or fail to apply.',
    });
    assert.deepEqual(
      failing.objects
        .map((o: any) => [o.object_type, o.object_id, o.problem])
        .sort((a: any[], b: any[]) => a[1] - b[1]),
      [
        ['dcim.device', edited.id, 'Conflicts with main on status.'],
        ['dcim.device', removed.id, 'Main deleted it since the branch changed it.'],
      ],
    );
    assert.equal(failing.objects.find((o: any) => o.object_id === edited.id).object_repr, edited.name);
    // A dry run: main still has what it had.
    assert.match(JSON.stringify((await ok(svc.admin.get(`${DEVICES}${edited.id}/`))).status), /offline/);
    const d = await detail(s.author.client, s.cr.id);
    assert.match(
      d.merge_blocked_reason,
      /Required check "Merges cleanly" failed \(2 objects would conflict or fail to apply/,
    );
  });

  it('Built-in checks read counts and the first problems kept per branch, the same facts as the full view gives: beyond the few shown, and an object type the catalogue no longer knows', async () => {
    const s = await setup(svc, { policy: { checks: BUILTINS } });
    const bases = [];
    for (let i = 0; i < 7; i++)
      bases.push(await created(svc.admin.post(DEVICES, { name: `kept-${Date.now()}-${i}`, status: 'active' })));
    for (const b of bases) await ok(s.inBranch.patch(`${DEVICES}${b.id}/`, { status: 'planned' }));
    for (const b of bases.slice(0, 6)) await ok(svc.admin.patch(`${DEVICES}${b.id}/`, { status: 'offline' }));
    expectStatus(await svc.admin.delete(`${DEVICES}${bases[6].id}/`), 204);
    // A change of a type the catalogue no longer knows, written beside the service (which moves the revision).
    await svc.host.db.transaction().execute(async (trx) => {
      const now = new Date().toISOString();
      await trx
        .insertInto('branch_changes')
        .values({
          branch_id: s.branchId,
          object_type: 'legacy.widget',
          object_id: 990001,
          action: 'create',
          original: null,
          modified: '{"name":"w"}',
          premerge: null,
          created: now,
          last_updated: now,
        })
        .execute();
      await trx
        .updateTable('branches')
        .set((eb) => ({ changes_revision: eb('changes_revision', '+', 1) }))
        .where('id', '=', s.branchId)
        .execute();
      await trx
        .updateTable('data_version')
        .set((eb) => ({ version: eb('version', '+', 1) }))
        .execute();
    });
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'unit', baseUrl: 'http://unit' });
    const row = await ccDb(ctx)
      .selectFrom('cc_change_requests')
      .selectAll()
      .where('id', '=', s.cr.id)
      .executeTakeFirstOrThrow();
    const kept = await buildBuiltinFacts(ctx, row, new Set(BUILTIN_CHECKS));
    const full = factsOfView(await buildCheckView(ctx, row), svc.host.objectTypes);
    assert.deepEqual(kept, full);
    assert.equal(kept.conflicts.count, 7, 'six attributes main changed too, and an update of an object main deleted');
    assert.equal(kept.problems.count, 8);
    assert.equal(kept.problems.first.at(-1)!.problem, 'Its object type legacy.widget is no longer in the catalogue.');
    await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
    const checks = await checksByName(svc.admin, s.cr.id);
    assertCheck(checks['no-conflicts'], {
      status: 'failure',
      summary: '7 changes conflict with main.',
    });
    assertCheck(checks['mergeable'], {
      status: 'failure',
      summary: '8 objects would conflict or fail to apply.',
    });
    assertCheck(checks['has-changes'], { status: 'success', summary: '9 changes to merge.' });
  });

  it('Built-in not-stale: fails when the branch is older than changelog_retention_days without a sync; a sync makes it pass', async () => {
    const s = await setup(svc, { policy: { checks: ['not-stale'] } });
    assertCheck((await checksByName(svc.admin, s.cr.id))['not-stale'], { status: 'success' });
    svc.clock.advanceDays(4);
    await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
    assertCheck((await checksByName(svc.admin, s.cr.id))['not-stale'], { status: 'success' });
    svc.clock.advanceDays(2);
    await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
    assertCheck((await checksByName(svc.admin, s.cr.id))['not-stale'], {
      status: 'failure',
      blocks_merge: true,
      summary: /too far behind main to sync safely \(created .* and never synced\)/,
    });
    expectStatus(await s.author.client.post(`${BRANCHES}${s.branchId}/sync/`, { commit: true }), 200);
    assertCheck((await checksByName(svc.admin, s.cr.id))['not-stale'], { status: 'success' });
    svc.clock.advanceDays(6);
    await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
    assertCheck((await checksByName(svc.admin, s.cr.id))['not-stale'], { status: 'failure', summary: /last synced/ });
  });

  it('Built-in threads-resolved: fails while a comment thread on the Changes tab is open; passes once resolved', async () => {
    const s = await setup(svc, { policy: { checks: ['threads-resolved'] } });
    assertCheck((await checksByName(svc.admin, s.cr.id))['threads-resolved'], {
      status: 'success',
      summary: 'No comment threads.',
    });
    const change = (await changesOf(svc, s.branchId))[0];
    const first = await created(
      s.reviewer.client.post(COMMENTS, { change_request: s.cr.id, change_diff: change.id, text: 'Why planned?' }),
    );
    await created(
      s.reviewer.client.post(COMMENTS, { change_request: s.cr.id, change_diff: change.id, text: 'And the serial?' }),
    );
    assertCheck((await checksByName(svc.admin, s.cr.id))['threads-resolved'], {
      status: 'failure',
      summary: '2 comment threads are still open.',
      blocks_merge: true,
    });
    await ok(s.reviewer.client.patch(`${COMMENTS}${first.id}/`, { resolved: true }));
    assertCheck((await checksByName(svc.admin, s.cr.id))['threads-resolved'], {
      status: 'failure',
      summary: '1 comment thread is still open.',
    });
    const threads = (await ok(svc.admin.get(`${COMMENTS}?change_request_id=${s.cr.id}`))).results.filter(
      (c: any) => c.parent === null && !c.resolved,
    );
    await ok(s.reviewer.client.patch(`${COMMENTS}${threads[0].id}/`, { resolved: true }));
    assertCheck((await checksByName(svc.admin, s.cr.id))['threads-resolved'], {
      status: 'success',
      summary: 'Every comment thread is resolved.',
    });
  });

  it('Every built-in check reports skipped on a change request whose branch is gone', async () => {
    const base = await created(svc.admin.post(DEVICES, { name: `gone-${Date.now()}`, status: 'active' }));
    const s = await setup(svc, { policy: { checks: BUILTINS } });
    await ok(s.inBranch.patch(`${DEVICES}${base.id}/`, { status: 'planned' }));
    await ok(svc.admin.patch(`${DEVICES}${base.id}/`, { status: 'offline' }));
    const change = (await changesOf(svc, s.branchId))[0];
    await created(
      s.reviewer.client.post(COMMENTS, { change_request: s.cr.id, change_diff: change.id, text: 'open thread' }),
    );
    svc.clock.advanceDays(6);
    await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
    const before = await checksByName(svc.admin, s.cr.id);
    for (const name of ['no-conflicts', 'not-stale', 'threads-resolved', 'mergeable'])
      assertCheck(before[name], { status: 'failure' });

    expectStatus(await s.author.client.delete(`${BRANCHES}${s.branchId}/`), 204);
    const d = await detail(svc.admin, s.cr.id);
    assert.equal(d.branch_deleted, true);
    const after = await checksByName(svc.admin, s.cr.id);
    for (const name of BUILTINS)
      assertCheck(after[name], { status: 'skipped', summary: 'The branch is gone.', blocks_merge: false });
    await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
    for (const name of BUILTINS) assertCheck((await checksByName(svc.admin, s.cr.id))[name], { status: 'skipped' });
  });
});

describe('change control checks: built-in has-changes', () => {
  let svc: TestService;
  before(async () => {
    svc = await startWithChecks();
    // Unconditional: it governs every branch, even one that touches nothing.
    await policy(svc, { name: 'everything', object_types: [], checks: ['has-changes'] });
  });
  after(async () => svc.close());

  it('Built-in has-changes: fails when the branch has nothing to merge; passes once it changes something', async () => {
    const { branch: b, inBranch } = await branch(svc.admin, 'empty-branch');
    const cr = await openRequest(svc.admin, b.id);
    assertCheck((await checksByName(svc.admin, cr.id))['has-changes'], {
      status: 'failure',
      summary: 'The branch has nothing to merge.',
      blocks_merge: true,
      label: 'Branch has changes',
    });
    const dev = await created(inBranch.post(DEVICES, { name: 'r1' }));
    assertCheck((await checksByName(svc.admin, cr.id))['has-changes'], {
      status: 'success',
      summary: '1 change to merge.',
    });
    // Creating and deleting the same object in the branch leaves nothing to merge again.
    expectStatus(await inBranch.delete(`${DEVICES}${dev.id}/`), 204);
    assertCheck((await checksByName(svc.admin, cr.id))['has-changes'], {
      status: 'failure',
      summary: 'The branch has nothing to merge.',
    });
  });
});
