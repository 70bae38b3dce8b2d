import assert from 'node:assert/strict';
import { instancesForEachTest, suiteService, type ApiClient, type ApiResponse } from '../../../support/service';
import { forSuite } from '../../../support/prepared';
import {
  actor,
  COMMENTS,
  created,
  detail,
  DEVICES,
  expectStatus,
  grant,
  ok,
  REQUESTS,
  review,
  REVIEWS,
  VIEW_ALL,
} from './fixtures';
import { assertRefused, commentsOf, postComment, scene, world, type Scene } from './reviews-comments-fixtures';

const apply = (client: ApiClient, crId: number, body: unknown) =>
  client.post(`${REQUESTS}${crId}/apply-suggestions/`, body);

/** A suggestion by `client` on the first device's change of the scene. */
const suggest = (client: ApiClient, s: Scene, suggestion: unknown, extra: Record<string, unknown> = {}) =>
  postComment(client, {
    change_request: s.cr.id,
    change_diff: s.changes[0]!.id,
    text: 'Suggested',
    suggestion,
    ...extra,
  });

const deviceLog = async (s: Scene, index = 0) =>
  (
    await ok(
      s.svc.admin.get(
        `/api/core/object-changes/?changed_object_type=dcim.device&changed_object_id=${s.devices[index]!.id}`,
      ),
    )
  ).results.sort((a: { id: number }, b: { id: number }) => a.id - b.id) as Array<{
    action: string;
    user_name: string;
  }>;

describe('change control: suggested changes', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));
  let s: Scene;
  beforeEach(async () => {
    s = await scene(w);
  });

  it("a comment carries a suggestion (the attribute, the proposed value and the value it replaces); a thread root naming no attribute takes the suggestion's", async () => {
    const c = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    assert.equal(c.attribute, 'status');
    assert.deepEqual(c.suggestion, {
      attribute: 'status',
      value: 'active',
      previous: 'planned',
      previous_absent: false,
      outdated: false,
      applied_by: null,
      applied_at: null,
    });
    assert.deepEqual((await ok(s.dave.client.get(`${COMMENTS}${c.id}/`))).suggestion, c.suggestion);
    const plain = await created(
      postComment(s.bob.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'no suggestion' }),
    );
    assert.equal(plain.suggestion, null);
    // Any JSON value, null included.
    const list = await created(suggest(s.carol.client, s, { attribute: 'tags', value: [1, { name: 'x' }, null] }));
    assert.deepEqual(
      [list.suggestion.value, list.suggestion.previous_absent, list.attribute],
      [[1, { name: 'x' }, null], true, null],
    );
    const nothing = await created(suggest(s.carol.client, s, { attribute: 'status', value: null }));
    assert.equal(nothing.suggestion.value, null);
  });

  it('a suggestion may set an attribute the branch state lacks, a new key of an existing mapping (previous_absent); nothing else that is absent', async () => {
    await ok(s.inBranch.patch(`${DEVICES}${s.devices[0]!.id}/`, { config: { mtu: 1500 } }));
    const top = await created(suggest(s.bob.client, s, { attribute: 'rack', value: 'R3' }));
    assert.deepEqual([top.suggestion.previous, top.suggestion.previous_absent], [null, true]);
    assert.equal(top.attribute, null, 'the thread is about the whole object: the change has no rack');
    const nested = await created(suggest(s.bob.client, s, { attribute: 'config.vlan', value: 10 }));
    assert.equal(nested.suggestion.attribute, 'config.vlan');
    assertRefused(
      await suggest(s.bob.client, s, { attribute: 'config.mtu.x', value: 1 }),
      'suggestion',
      /cannot be set/,
    );
    assertRefused(await suggest(s.bob.client, s, { attribute: 'site.name', value: 1 }), 'suggestion', /cannot be set/);
  });

  it("a suggestion that cannot be made is refused (400 naming suggestion): a computed field, an empty part, a value missing, an unknown key, outside its thread's attribute, on a deleted object; nothing is stored", async () => {
    const refusals: Array<[unknown, RegExp]> = [
      [{ attribute: 'id', value: 3 }, /computed by the service/],
      [{ attribute: 'last_updated', value: 'x' }, /computed by the service/],
      [{ attribute: 'status.', value: 'x' }, /empty part/],
      [{ attribute: '__proto__', value: {} }, /cannot be an attribute/],
      [{ attribute: '9lives', value: 1 }, /letters, digits and underscores/],
    ];
    for (const [suggestion, message] of refusals)
      assertRefused(await suggest(s.bob.client, s, suggestion), 'suggestion', message);
    assertRefused(await suggest(s.bob.client, s, { attribute: 'status' }), 'suggestion.value');
    assertRefused(await suggest(s.bob.client, s, { attribute: 'status', value: 1, extra: true }), 'suggestion.extra');
    assertRefused(
      await suggest(s.bob.client, s, { attribute: 'status', value: 'x' }, { attribute: 'name' }),
      'suggestion',
      /thread about .+name.+ must be for it/,
    );

    const onMain = await created(s.svc.admin.post(DEVICES, { name: `gone-${s.cr.id}`, status: 'active' }));
    expectStatus(await s.inBranch.delete(`${DEVICES}${onMain.id}/`), 204);
    const deletion = (
      await ok(s.svc.admin.get(`/api/plugins/branching/changes/?branch_id=${s.branchId}&object_id=${onMain.id}`))
    ).results[0];
    assertRefused(
      await postComment(s.bob.client, {
        change_request: s.cr.id,
        change_diff: deletion.id,
        text: 'put it back?',
        suggestion: { attribute: 'status', value: 'active' },
      }),
      'suggestion',
      /deleted object cannot take suggestions/,
    );
    assert.equal((await commentsOf(svc, s.cr.id)).length, 0);
  });

  it('applying writes the values into the branch as the applier: one branch change and one changelog entry per object for several suggestions, each comment records applied_by and applied_at, each thread is resolved', async () => {
    const a = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    const b = await created(suggest(s.carol.client, s, { attribute: 'role', value: 'leaf' }));
    const reply = await created(
      postComment(s.carol.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 'and this',
        parent: a.id,
        suggestion: { attribute: 'status', value: 'active' },
      }),
    );
    const logBefore = (await deviceLog(s)).length;
    s.svc.clock.advance(60_000);
    const res = await ok(apply(s.alice.client, s.cr.id, { comments: [a.id, b.id] }));
    assert.deepEqual(res, {
      comments: [a.id, b.id],
      objects: [{ object_type: 'dcim.device', object_id: s.devices[0]!.id }],
    });

    const device = await ok(s.inBranch.get(`${DEVICES}${s.devices[0]!.id}/`));
    assert.deepEqual([device.status, device.role], ['active', 'leaf']);
    const log = await deviceLog(s);
    assert.equal(log.length, logBefore + 1, 'one write for the object');
    assert.deepEqual([log.at(-1)!.action, log.at(-1)!.user_name], ['update', 'alice']);
    const changes = await ok(s.svc.admin.get(`/api/plugins/branching/changes/?branch_id=${s.branchId}`));
    assert.equal(changes.count, 2, 'still one change per object');

    const [ca, cb, cr] = await Promise.all([a, b, reply].map((c) => ok(s.dave.client.get(`${COMMENTS}${c.id}/`))));
    for (const c of [ca, cb]) {
      assert.deepEqual(c.suggestion.applied_by, { id: s.alice.id, username: 'alice', display: 'alice' });
      assert.equal(c.suggestion.applied_at, s.svc.clock.now().toISOString());
      assert.equal(c.suggestion.outdated, false);
      assert.equal(c.resolved, true);
    }
    assert.equal(cr.suggestion.applied_at, null, 'the reply was not applied');
    const commentLog = await ok(
      s.svc.admin.get(
        `/api/core/object-changes/?changed_object_type=change_control.changecomment&changed_object_id=${a.id}`,
      ),
    );
    assert.equal(commentLog.results[0].postchange_data.applied_by, s.alice.id, 'the newest entry records the apply');
  });

  it('a user who may not write the branch cannot apply (403, nothing written); a request they cannot see is 404', async () => {
    const c = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    const res = await apply(s.bob.client, s.cr.id, { comments: [c.id] });
    expectStatus(res, 403);
    assert.match(res.body.detail, /may not write to branch/);
    assert.equal((await ok(s.inBranch.get(`${DEVICES}${s.devices[0]!.id}/`))).status, 'planned');
    assert.equal((await ok(s.dave.client.get(`${COMMENTS}${c.id}/`))).suggestion.applied_at, null);
    const stranger = await actor(svc, `erin-${s.cr.id}`, []);
    expectStatus(await apply(stranger.client, s.cr.id, { comments: [c.id] }), 404);
    expectStatus(await apply(s.alice.client, 999_999, { comments: [c.id] }), 404);
    assert.equal((await detail(s.bob.client, s.cr.id)).actions.apply_suggestions.allowed, false);
    assert.match((await detail(s.bob.client, s.cr.id)).actions.apply_suggestions.reason, /may not write to branch/);
    assert.deepEqual((await detail(s.alice.client, s.cr.id)).actions.apply_suggestions, {
      allowed: true,
      reason: null,
    });
  });

  it('applying needs the change permission on each object: without it the whole apply is refused (403) and nothing is written', async () => {
    const c0 = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    const c1 = await created(
      postComment(s.bob.client, {
        change_request: s.cr.id,
        change_diff: s.changes[1]!.id,
        text: 'x',
        suggestion: { attribute: 'status', value: 'active' },
      }),
    );
    // Frank may write the branch but change only devices whose name ends in "a".
    const frank = await actor(svc, `frank-${s.cr.id}`, [
      ...VIEW_ALL,
      { object_types: ['branching.branch'], actions: ['change'] },
    ]);
    await grant(
      svc,
      { users: [frank.id] },
      {
        object_types: ['dcim.device'],
        actions: ['change'],
        constraints: { name: s.devices[0]!.name },
      },
    );
    expectStatus(await apply(frank.client, s.cr.id, { comments: [c0.id, c1.id] }), 403);
    for (const d of s.devices) assert.equal((await ok(s.inBranch.get(`${DEVICES}${d.id}/`))).status, 'planned');
    await ok(apply(frank.client, s.cr.id, { comments: [c0.id] }));
    assert.equal((await ok(s.inBranch.get(`${DEVICES}${s.devices[0]!.id}/`))).status, 'active');
  });

  it('a suggestion whose attribute changed since is outdated and refused (409 naming it) unless forced; applied, it is not applied again (409)', async () => {
    const c = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    await ok(s.inBranch.patch(`${DEVICES}${s.devices[0]!.id}/`, { status: 'offline' }));
    assert.equal((await ok(s.dave.client.get(`${COMMENTS}${c.id}/`))).suggestion.outdated, true);
    const refused = await apply(s.alice.client, s.cr.id, { comments: [c.id] });
    expectStatus(refused, 409);
    assert.match(refused.body.detail, new RegExp(`comment ${c.id} is outdated`));
    assert.deepEqual(refused.body.comments, [c.id]);
    assert.equal((await ok(s.inBranch.get(`${DEVICES}${s.devices[0]!.id}/`))).status, 'offline');

    await ok(apply(s.alice.client, s.cr.id, { comments: [c.id], force: true }));
    assert.equal((await ok(s.inBranch.get(`${DEVICES}${s.devices[0]!.id}/`))).status, 'active');
    assert.equal((await ok(s.dave.client.get(`${COMMENTS}${c.id}/`))).suggestion.outdated, false);
    const again = await apply(s.alice.client, s.cr.id, { comments: [c.id], force: true });
    expectStatus(again, 409);
    assert.match(again.body.detail, /applied already/);
  });

  it('an apply naming comments that cannot be applied is refused as a whole (400 naming comments): unknown, of another request, without a suggestion, two suggestions on one attribute', async () => {
    const good = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    const same = await created(suggest(s.carol.client, s, { attribute: 'status', value: 'offline' }));
    const plain = await created(
      postComment(s.bob.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'plain' }),
    );
    const other = await scene(w);
    const elsewhere = await created(suggest(other.bob.client, other, { attribute: 'status', value: 'active' }));
    const cases: Array<[unknown, RegExp]> = [
      [{ comments: [good.id, 999_999] }, /Comment 999999 does not exist on this change request/],
      [{ comments: [good.id, elsewhere.id] }, new RegExp(`Comment ${elsewhere.id} does not exist`)],
      [{ comments: [plain.id] }, /carries no suggestion/],
      [{ comments: [good.id, same.id] }, /both suggest a value for status/],
      [{ comments: [] }, /at least one/],
    ];
    for (const [body, message] of cases) assertRefused(await apply(s.alice.client, s.cr.id, body), 'comments', message);
    assertRefused(await apply(s.alice.client, s.cr.id, { comments: [good.id], force: 'yes' }), 'force');
    assert.equal((await ok(s.inBranch.get(`${DEVICES}${s.devices[0]!.id}/`))).status, 'planned');
  });

  it('applying is an ordinary write by the applier: an approval given before goes stale, and the reviewer who suggested, having written nothing, may still approve (the applier, now a writer of the branch, may not)', async () => {
    // carol may write the branch (change_branch) and change devices: she applies bob's suggestion.
    await grant(svc, { users: [s.carol.id] }, { object_types: ['branching.branch'], actions: ['change'] });
    await grant(svc, { users: [s.carol.id] }, { object_types: ['dcim.device'], actions: ['change'] });
    const c = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    await review(s.bob.client, s.cr.id, 'approve');
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
    await ok(apply(s.carol.client, s.cr.id, { comments: [c.id] }));
    const bobs = (await ok(s.bob.client.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).results[0];
    assert.equal(bobs.stale, true, 'the content changed: the approval is stale');
    assert.notEqual((await detail(s.alice.client, s.cr.id)).status, 'approved');

    await ok(s.bob.client.patch(`${REVIEWS}${bobs.id}/`, { decision: 'approve', comment: 'with the fix' }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved', "bob's approval counts: he wrote nothing");
    const carols = await review(s.carol.client, s.cr.id, 'approve');
    expectStatus(carols, 400);
    assert.match(carols.body.detail, /You changed objects on this branch/);
  });

  it('the branch of a closed request takes no suggestion (409) once it is not ready', async () => {
    const c = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    await s.svc.host.db.updateTable('branches').set({ status: 'merged' }).where('id', '=', s.branchId).execute();
    const res: ApiResponse = await apply(s.alice.client, s.cr.id, { comments: [c.id] });
    expectStatus(res, 409);
    assert.match(res.body.detail, /is merged; only a ready branch accepts changes/);
  });
});

// Writes take one lock of the database in turn (every instance's), so the second apply reads
// the comment as the first left it.
describe('change control: applying suggestions from two instances at once', () => {
  const [a, b] = instancesForEachTest();

  it('applies a suggestion once when two callers apply it at the same moment on two instances: one write, the other 409', async () => {
    const s = await scene(await world(a));
    const c = await created(suggest(s.bob.client, s, { attribute: 'status', value: 'active' }));
    const logBefore = (await deviceLog(s)).length;
    const results = await Promise.all([
      apply(s.alice.client, s.cr.id, { comments: [c.id] }),
      apply(b.as(s.alice.key), s.cr.id, { comments: [c.id] }),
    ]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409], JSON.stringify(results.map((r) => r.body)));
    assert.equal((await deviceLog(s)).length, logBefore + 1, 'one write');
  });
});
