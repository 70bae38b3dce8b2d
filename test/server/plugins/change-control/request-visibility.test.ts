import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { notify } from '../../../../server/host/events/notifications';
import { suiteService, type ApiClient } from '../../../support/service';
import { statementsOf } from '../../../support/quiet';
import { SseStream } from '../../../support/sse';
import { forSuite } from '../../../support/prepared';
import {
  actor,
  CC,
  CC_TYPES,
  CHECKS,
  COMMENTS,
  created,
  expectStatus,
  ok,
  POLICIES,
  REQUESTS,
  REVIEWS,
  review,
  VIEW_ALL,
  type Actor,
} from './fixtures';
import { rootComment, scene, world, type Scene } from './reviews-comments-fixtures';

const JOURNAL = '/api/extras/journal-entries/';
const CHANGELOG = '/api/core/object-changes/';
const NOTIFICATIONS = '/api/extras/notifications/';

/** Everything one request gathers: a rejection, a comment, a check result, a journal entry. */
async function gathered(s: Scene, words: string): Promise<void> {
  expectStatus(await review(s.bob.client, s.cr.id, 'reject', `${words} rejection`), 201);
  await rootComment(s, s.carol.client, `${words} comment`);
  const check = (await ok(s.svc.admin.get(`${CHECKS}?change_request_id=${s.cr.id}&name=ci/build`))).results[0];
  await ok(s.svc.admin.patch(`${CHECKS}${check.id}/`, { status: 'failure', summary: `${words} summary` }));
  await created(
    s.svc.admin.post(JOURNAL, {
      assigned_object_type: 'change_control.changerequest',
      assigned_object_id: s.cr.id,
      comments: `${words} journal`,
    }),
  );
  await ok(s.svc.admin.patch(`${REQUESTS}${s.cr.id}/`, { title: `${words} title`, description: `${words} text` }));
}

describe('change control: every list follows the visibility of the change request it belongs to', () => {
  const svc = suiteService({ config: { change_control: { required_external_checks: ['ci/build'] } } });
  const w = forSuite(() => world(svc));
  let shown: Scene;
  let hidden: Scene;
  let snoop: Actor;
  before(async () => {
    shown = await scene(w);
    hidden = await scene(w);
    await ok(svc.admin.patch(`${REQUESTS}${shown.cr.id}/`, { ref: 'VISIBLE-1' }));
    await gathered(shown, 'Open');
    await gathered(hidden, 'Secret');
    // Sees every model of the plugin, every branch and object, the journal and the changelog;
    // of the change requests only the one whose ref is the visible request's.
    snoop = await actor(svc, 'snoop', [
      ...VIEW_ALL.filter((g) => !g.object_types.includes('change_control.changerequest')),
      { object_types: CC_TYPES.filter((t) => t !== 'change_control.changerequest'), actions: ['view'] },
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: 'VISIBLE-1' } },
      { object_types: ['extras.journalentry', 'core.objectchange'], actions: ['view'] },
    ]);
  });

  /** Every id and text a list shows, as one string (what a caller could learn from it). */
  const shownBy = async (client: ApiClient, path: string): Promise<{ count: number; text: string }> => {
    const res = await ok(client.get(path));
    return { count: res.count, text: JSON.stringify(res.results) };
  };

  it('Request visibility: reviews, checks, comments and journal entries of a request the caller cannot view are absent from every list (filtered, unfiltered, q, count) and 404 on detail', async () => {
    const lists: Array<[string, string]> = [
      [REVIEWS, 'change_request_id'],
      [CHECKS, 'change_request_id'],
      [COMMENTS, 'change_request_id'],
      [JOURNAL, 'assigned_object_id'],
    ];
    for (const [path, filter] of lists) {
      // The admin sees both requests' rows: the test has something to hide.
      const all = await shownBy(svc.admin, `${path}?limit=1000`);
      assert.match(all.text, /Secret/, path);
      const ofHidden = await ok(svc.admin.get(`${path}?${filter}=${hidden.cr.id}`));
      assert.ok(ofHidden.count > 0, path);

      const unfiltered = await shownBy(snoop.client, `${path}?limit=1000`);
      assert.doesNotMatch(unfiltered.text, /Secret/, path);
      assert.match(unfiltered.text, /Open/, `${path}: what the caller may view is listed`);
      assert.equal((await shownBy(snoop.client, `${path}?${filter}=${hidden.cr.id}`)).count, 0, path);
      assert.equal((await shownBy(snoop.client, `${path}?q=secret`)).count, 0, `${path} q`);
      for (const row of ofHidden.results as Array<{ id: number }>)
        expectStatus(await snoop.client.get(`${path}${row.id}/`), 404, `${path}${row.id}/`);
    }
    expectStatus(await snoop.client.get(`${REQUESTS}${hidden.cr.id}/`), 404);
    expectStatus(await snoop.client.get(`${REQUESTS}${shown.cr.id}/`), 200);
  });

  it('Request visibility: the changelog shows no entry of a hidden request or of what belongs to it (reviews, checks, comments and their change_label, journal entries), whatever q or filter is given', async () => {
    const everything = await shownBy(svc.admin, `${CHANGELOG}?limit=1000`);
    assert.match(everything.text, /Secret journal/);
    assert.match(everything.text, new RegExp(hidden.devices[0]!.name));
    const queries = [
      'limit=1000',
      'q=secret',
      'changed_object_type=extras.journalentry',
      'changed_object_type=change_control.changecomment',
      'changed_object_type=change_control.review',
      'changed_object_type=change_control.mergecheck',
      `changed_object_type=change_control.changerequest&changed_object_id=${hidden.cr.id}`,
    ];
    for (const query of queries) {
      const seen = await shownBy(snoop.client, `${CHANGELOG}?${query}`);
      assert.doesNotMatch(seen.text, /Secret/, query);
      assert.ok(!seen.text.includes(`"change_request":${hidden.cr.id},`), query);
    }
    assert.match(
      (await shownBy(snoop.client, `${CHANGELOG}?changed_object_type=extras.journalentry`)).text,
      /Open journal/,
    );
    const hiddenEntries = (await ok(svc.admin.get(`${CHANGELOG}?q=secret&limit=1000`))).results;
    assert.ok(hiddenEntries.length > 0);
    for (const entry of hiddenEntries as Array<{ id: number }>)
      expectStatus(await snoop.client.get(`${CHANGELOG}${entry.id}/`), 404);
  });

  it('Request visibility: search and notifications name nothing of a request the caller cannot view', async () => {
    const search = JSON.stringify((await ok(snoop.client.get('/api/search/?q=secret'))).results);
    assert.equal(search, '[]');
    assert.notEqual(JSON.stringify((await ok(svc.admin.get('/api/search/?q=secret'))).results), '[]');
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
    await inTransaction(ctx, async (tx) => {
      for (const s of [shown, hidden])
        await notify(tx, [snoop.id], {
          objectType: 'change_control.changerequest',
          objectId: s.cr.id,
          objectRepr: s === hidden ? 'Secret title' : 'Open title',
          eventType: 'change_request_rejected',
        });
    });
    const mine = await shownBy(snoop.client, `${NOTIFICATIONS}?limit=1000`);
    assert.equal(mine.count, 1);
    assert.doesNotMatch(mine.text, /Secret/);
    assert.equal((await shownBy(snoop.client, `${NOTIFICATIONS}?q=secret`)).count, 0);
  });

  it('Request visibility: the event stream replays no event of a request the caller cannot view', async () => {
    const stream = await SseStream.open(`${svc.url}${CC}stream/`, { token: snoop.key, lastEventId: '0' });
    try {
      assert.equal(stream.status, 200);
      // A marker everyone may see: a comment on the visible request.
      const marker = (await rootComment(shown, shown.carol.client, 'marker')).id;
      const events = await stream.nextUntil((e) => e.event === 'comment_created' && e.json.object_id === marker);
      assert.ok(events.length > 1, 'the visible request replays');
      assert.ok(
        events.every((e) => e.event === 'reset' || e.json.change_request === shown.cr.id),
        JSON.stringify(events.map((e) => e.json)),
      );
    } finally {
      stream.close();
    }
  });

  it('Errors never name what the caller cannot view: deleting a policy that governs hidden requests is 409 counting them, naming only the visible', async () => {
    const deleter = await actor(svc, 'deleter', [
      { object_types: ['change_control.policy'], actions: ['view', 'delete'] },
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: 'VISIBLE-1' } },
    ]);
    const refused = await deleter.client.delete(`${POLICIES}${w.policyId}/`);
    expectStatus(refused, 409);
    assert.deepEqual(refused.body.change_requests, [shown.cr.id]);
    assert.equal(refused.body.count, 2);
    assert.match(refused.body.detail, new RegExp(`#${shown.cr.id} and 1 more you cannot view`));
    assert.ok(!refused.body.detail.includes(`#${hidden.cr.id}`));
    const blind = await actor(svc, 'blind-deleter', [
      { object_types: ['change_control.policy'], actions: ['view', 'delete'] },
    ]);
    const blindRefused = await blind.client.delete(`${POLICIES}${w.policyId}/`);
    expectStatus(blindRefused, 409);
    assert.deepEqual(blindRefused.body.change_requests, []);
    assert.match(blindRefused.body.detail, /\(2 you cannot view\)/);
  });
});

describe('change control: who may view a change request is decided in SQL, as the detail decides it', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  it('Request visibility in SQL: each view constraint (a field, __in, $user, a boolean, null, custom_fields, display, url, a value of the wrong type) admits in the list exactly the requests the detail admits', async () => {
    const a = await scene(w, { submit: false });
    const b = await scene(w);
    await ok(svc.admin.patch(`${REQUESTS}${a.cr.id}/`, { custom_fields: { team: 'core', size: 3, lead: { id: 7 } } }));
    await ok(svc.admin.patch(`${REQUESTS}${b.cr.id}/`, { auto_merge: true, custom_fields: { team: 'edge' } }));
    const ids = [a.cr.id, b.cr.id];
    const detailOf = (id: number) =>
      svc.admin.get(`${REQUESTS}${id}/`).then((r) => r.body as { display: string; url: string });
    const constraints: unknown[] = [
      { id: a.cr.id },
      { id: String(a.cr.id) },
      { status__in: ['draft', 'approved'] },
      { status__in: [] },
      { requester: '$user' },
      { requester: w.alice.id },
      { auto_merge: true },
      { auto_merge: 1 },
      { scheduled_start: null },
      { override_by: null },
      { 'custom_fields.team': 'core' },
      { 'custom_fields.size': 3 },
      { 'custom_fields.size': '3' },
      { 'custom_fields.lead': 7 },
      { 'custom_fields.missing': null },
      { display: (await detailOf(b.cr.id)).display },
      { url: (await detailOf(a.cr.id)).url },
      { approved: false },
      { 'status.x': 'draft' },
      [{ id: a.cr.id }, { auto_merge: true }],
      { priority: 'medium', branch_deleted: false, title__in: ['nothing', 5] },
    ];
    let n = 0;
    const admitted = new Set<number>();
    for (const constraint of constraints) {
      const viewer = await actor(svc, `viewer-${++n}`, [
        { object_types: ['change_control.changerequest'], actions: ['view'], constraints: constraint },
      ]);
      const detail: number[] = [];
      for (const id of ids) if ((await viewer.client.get(`${REQUESTS}${id}/`)).status === 200) detail.push(id);
      const listed = (await ok(viewer.client.get(`${REQUESTS}?limit=1000`))).results
        .map((r: { id: number }) => r.id)
        .filter((id: number) => ids.includes(id));
      assert.deepEqual(listed, [...detail].reverse(), JSON.stringify(constraint));
      admitted.add(detail.length);
    }
    // The constraints above are not all alike: some admit neither request, some one, some both.
    assert.deepEqual([...admitted].sort(), [0, 1, 2]);
  });

  it('Request visibility at scale: with 20,000 change requests, a constrained caller gets a page of requests, reviews and checks by the database (no statement reads every request)', async () => {
    const now = svc.clock.now().toISOString();
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 20000)
      insert into cc_change_requests (branch_id, branch_name, branch_deleted, title, description, ref, status, priority,
        requester_id, auto_merge, comments, approved, gates_cleared, has_conflicts, created, last_updated)
      select null, 'gone-' || i, 1, 'bulk ' || i, '', 'BULK-' || i, 'abandoned', 'low', null, 0, '', 0, 0, 0, ${now}, ${now} from n`.execute(
      svc.host.db,
    );
    const s = await scene(w);
    const narrow = await actor(svc, 'narrow', [
      {
        object_types: ['change_control.changerequest'],
        actions: ['view'],
        constraints: { ref__in: ['BULK-7', 'SCALE-1', 'BULK-19999'] },
      },
      { object_types: ['change_control.review', 'change_control.mergecheck'], actions: ['view'] },
    ]);
    await ok(svc.admin.patch(`${REQUESTS}${s.cr.id}/`, { ref: 'SCALE-1' }));
    expectStatus(await review(s.bob.client, s.cr.id, 'approve'), 201);
    let page: { count: number; results: Array<{ ref: string }> } = { count: 0, results: [] };
    const seen = await statementsOf(svc, async () => {
      page = await ok(narrow.client.get(`${REQUESTS}?limit=2&ordering=id`));
      assert.equal((await ok(narrow.client.get(`${REVIEWS}?limit=5`))).count, 1);
      assert.equal((await ok(narrow.client.get(`${CHECKS}?limit=5`))).count, 0);
    });
    assert.equal(page.count, 3);
    assert.deepEqual(
      page.results.map((r) => r.ref),
      ['BULK-7', 'BULK-19999'],
    );
    const readsAll = seen.filter((q) => /^select \* from "cc_change_requests"/i.test(q) && !/ limit /i.test(q));
    assert.deepEqual(readsAll, [], 'no statement reads every change request');
  });
});
