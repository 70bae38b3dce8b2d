import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { streamEvent, STREAM_EVENTS } from '../../../../contract/api/change-control';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { commitSignal } from '../../../../server/host/db/commit-signals';
import { onPostgres } from '../../../support/database';
import { streamHub } from '../../../../server/plugins/change-control/stream/routes';
import {
  pruneStreamEvents,
  STREAM_RETENTION,
} from '../../../../server/plugins/change-control/stream/stream-repository';
import { suiteService } from '../../../support/service';
import { SseStream, type SseEvent } from '../../../support/sse';
import {
  BRANCHES,
  CC,
  CC_TYPES,
  CHECKS,
  checkNamed,
  COMMENTS,
  created,
  DEVICES,
  expectStatus,
  ok,
  REQUESTS,
  REVIEWS,
  review,
  VIEW_ALL,
  ccDb,
} from './fixtures';
import {
  editInBranch,
  reply,
  rootComment,
  scene,
  withPermissions,
  world,
  type Scene,
} from './reviews-comments-fixtures';
import { forSuite } from '../../../support/prepared';

const STREAM = `${CC}stream/`;

/** The events of one change request, as the stream says them: type and object. */
const said = (events: SseEvent[]) => events.map((e) => `${e.event} ${e.json.object_type}:${e.json.object_id}`);

describe('change control: the event stream (stream/)', () => {
  const svc = suiteService({ config: { change_control: { required_external_checks: ['ci/build'] } } });
  const w = forSuite(() => world(svc, { checks: ['threads-resolved'] }));

  const open = (token: string | null, options: { query?: string; lastEventId?: string } = {}) =>
    SseStream.open(`${svc.url}${STREAM}`, { token, ...options });
  const streams: SseStream[] = [];
  const watch = async (token: string | null, options: { query?: string; lastEventId?: string } = {}) => {
    const s = await open(token, options);
    assert.equal(s.status, 200, JSON.stringify((s as { body?: unknown }).body));
    streams.push(s);
    return s;
  };
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });

  /** A write everyone sees, to mark a point in the stream: a comment on this scene's request. */
  async function sentinel(s: Scene): Promise<number> {
    return (await rootComment(s, s.carol.client, 'sentinel')).id;
  }
  const isComment = (id: number) => (e: SseEvent) => e.event === 'comment_created' && e.json.object_id === id;

  it('answers text/event-stream, without caching, to a holder of view_changerequest; 403 without a token or the permission', async () => {
    const s = await watch(w.dave.key);
    assert.match(String(s.headers['content-type']), /^text\/event-stream/);
    assert.match(String(s.headers['cache-control']), /no-cache/);
    assert.equal(s.headers['api-version'], '4.7');
    assert.deepEqual(s.comments, ['connected']);
    const anonymous = (await open(null)) as SseStream & { body: any };
    assert.equal(anonymous.status, 403);
    assert.equal(typeof anonymous.body.detail, 'string');
    const stranger = await withPermissions(
      svc,
      'stranger',
      [{ object_types: ['change_control.policy'], actions: ['view'] }],
      false,
    );
    assert.equal((await open(stranger.key)).status, 403);
  });

  it('refuses a malformed Last-Event-ID, last_event_id or change_request with 400 naming it', async () => {
    const cases: Array<[{ query?: string; lastEventId?: string }, string]> = [
      [{ lastEventId: 'abc' }, 'Last-Event-ID'],
      [{ lastEventId: '-1' }, 'Last-Event-ID'],
      [{ lastEventId: '1'.repeat(30) }, 'Last-Event-ID'],
      [{ query: '?last_event_id=1.5' }, 'last_event_id'],
      [{ query: '?change_request=x' }, 'change_request'],
      [{ query: '?change_request=99999999999999999999' }, 'change_request'],
      [{ query: `?change_request=${Array.from({ length: 1001 }, (_, i) => i + 1).join(',')}` }, 'change_request'],
    ];
    for (const [options, field] of cases) {
      const res = (await open(w.dave.key, options)) as SseStream & { body: any };
      assert.equal(res.status, 400, JSON.stringify(options));
      assert.ok(
        Array.isArray(res.body[field]),
        `${JSON.stringify(options)} names ${field}: ${JSON.stringify(res.body)}`,
      );
    }
  });

  it('announces what changed as it commits: lifecycle events, request writes, reviews, comments, checks and branch changes, each naming its object', async () => {
    const s = await watch(svc.admin.token!);
    const sc = await scene(w);
    const cr = sc.cr.id;
    const upToSubmit = await s.nextUntil((e) => e.event === 'change_request_review_requested');
    const opened = said(upToSubmit);
    assert.ok(opened.includes(`change_request_created change_control.changerequest:${cr}`), opened.join('\n'));
    assert.ok(opened.includes(`change_request_submitted change_control.changerequest:${cr}`), opened.join('\n'));
    assert.ok(
      opened.some((x) => x.startsWith('check_updated change_control.mergecheck:')),
      opened.join('\n'),
    );

    const c = await rootComment(sc, sc.bob.client);
    const onComment = said(await s.nextUntil(isComment(c.id)));
    assert.ok(onComment.includes(`comment_created change_control.changecomment:${c.id}`));
    await ok(sc.bob.client.patch(`${COMMENTS}${c.id}/`, { resolved: true }));
    assert.ok(
      said(await s.nextUntil((e) => e.event === 'comment_updated')).includes(
        `comment_updated change_control.changecomment:${c.id}`,
      ),
    );

    expectStatus(await review(sc.bob.client, cr, 'comment', 'Looks fine.'), 201);
    const rev = (await ok(svc.admin.get(`${REVIEWS}?change_request_id=${cr}`))).results[0];
    assert.ok(
      said(await s.nextUntil((e) => e.event === 'review_submitted')).includes(
        `review_submitted change_control.changerequest:${cr}`,
      ),
    );
    expectStatus(await sc.bob.client.delete(`${REVIEWS}${rev.id}/`), 204);
    assert.ok(
      said(await s.nextUntil((e) => e.event === 'review_deleted')).includes(
        `review_deleted change_control.review:${rev.id}`,
      ),
    );

    const build = await checkNamed(svc.admin, cr, 'ci/build');
    await ok(svc.admin.patch(`${CHECKS}${build.id}/`, { status: 'running' }));
    assert.ok(
      said(await s.nextUntil((e) => e.event === 'check_updated' && e.json.object_id === build.id)).includes(
        `check_updated change_control.mergecheck:${build.id}`,
      ),
    );

    await editInBranch(sc);
    assert.ok(
      said(await s.nextUntil((e) => e.event === 'changes_updated')).includes(
        `changes_updated branching.branch:${sc.branchId}`,
      ),
    );

    expectStatus(await sc.bob.client.delete(`${COMMENTS}${c.id}/`), 204);
    assert.ok(
      said(await s.nextUntil((e) => e.event === 'comment_deleted')).includes(
        `comment_deleted change_control.changecomment:${c.id}`,
      ),
    );

    await ok(svc.admin.patch(`${REQUESTS}${cr}/`, { title: 'Renamed' }));
    assert.ok(
      said(await s.nextUntil((e) => e.event === 'change_request_updated')).includes(
        `change_request_updated change_control.changerequest:${cr}`,
      ),
    );
    expectStatus(await svc.admin.delete(`${REQUESTS}${cr}/`), 204);
    await s.nextUntil((e) => e.event === 'change_request_deleted' && e.json.change_request === cr);

    // Every event: `id:` is data.id, data is a StreamEvent, ids grow.
    let previous = 0;
    for (const e of s.events) {
      const data = streamEvent.parse(e.json);
      assert.equal(String(data.id), e.id);
      assert.equal(data.event, e.event);
      assert.ok((STREAM_EVENTS as readonly string[]).includes(e.event));
      assert.ok(data.id > previous);
      assert.equal(data.time, svc.clock.now().toISOString());
      previous = data.id;
    }
  });

  it('says changes_updated and change_request_updated at most once per transaction and request; merging completes the request', async () => {
    const s = await watch(svc.admin.token!);
    const sc = await scene(w);
    await s.nextUntil((e) => e.event === 'change_request_review_requested' && e.json.change_request === sc.cr.id);
    // Two devices written in one request: one object write each, so two transactions.
    await editInBranch(sc, 0);
    await editInBranch(sc, 1);
    const mark = await sentinel(sc);
    const edits = await s.nextUntil(isComment(mark));
    assert.equal(edits.filter((e) => e.event === 'changes_updated').length, 2);
    expectStatus(await review(sc.bob.client, sc.cr.id, 'approve'), 201);
    await ok(sc.carol.client.patch(`${COMMENTS}${mark}/`, { resolved: true }));
    await ok(
      svc.admin.patch(`${CHECKS}${(await checkNamed(svc.admin, sc.cr.id, 'ci/build')).id}/`, { status: 'success' }),
    );
    const lastBefore = Number(
      (await sql<{ n: number }>`select max(id) as n from cc_stream_events`.execute(svc.host.db)).rows[0]!.n,
    );
    const merged = await svc.admin.post(`${BRANCHES}${sc.branchId}/merge/`, { commit: true });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    // Nothing else writes meanwhile: the events after lastBefore are the merge's own transaction.
    const rows = (
      await sql<{
        id: number;
        event: string;
      }>`select id, event from cc_stream_events where id > ${lastBefore} order by id`.execute(svc.host.db)
    ).rows;
    const inMerge = rows.map((r) => r.event);
    assert.equal(inMerge.filter((e) => e === 'changes_updated').length, 1, inMerge.join('\n'));
    assert.equal(inMerge.filter((e) => e === 'change_request_updated').length, 1, inMerge.join('\n'));
    assert.ok(inMerge.includes('change_request_completed'));
    const streamed = await s.nextUntil((e) => Number(e.id) === rows[rows.length - 1]!.id);
    assert.deepEqual(
      streamed.filter((e) => Number(e.id) > lastBefore).map((e) => e.event),
      inMerge,
    );
  });

  it('resumes with Last-Event-ID (header or ?last_event_id=): the kept events after it come first, then new ones', async () => {
    const sc = await scene(w);
    const first = await watch(w.dave.key);
    const a = await rootComment(sc, sc.bob.client, 'a');
    const seen = await first.nextUntil(isComment(a.id));
    const lastSeen = seen[seen.length - 1]!.id!;
    first.close();
    // While disconnected:
    const b = await rootComment(sc, sc.bob.client, 'b');
    const c = await reply(sc, sc.carol.client, b.id, 'c');
    for (const resume of [
      { lastEventId: lastSeen },
      { query: `?last_event_id=${lastSeen}` },
      { lastEventId: lastSeen, query: '?last_event_id=0' },
    ]) {
      const again = await watch(w.dave.key, resume);
      const missed = await again.nextUntil(isComment(c.id));
      assert.ok(
        missed.every((e) => Number(e.id) > Number(lastSeen)),
        JSON.stringify(resume),
      );
      assert.equal(missed[0]!.event === 'reset', false);
      assert.ok(said(missed).includes(`comment_created change_control.changecomment:${b.id}`), JSON.stringify(resume));
      const d = await sentinel(sc);
      await again.nextUntil(isComment(d));
    }
    // Without Last-Event-ID: only what happens from now on.
    const fresh = await watch(w.dave.key);
    const e = await sentinel(sc);
    const next = await fresh.nextUntil(isComment(e));
    assert.ok(next.every((x) => Number(x.id) > Number(lastSeen)));
    assert.ok(!said(next).includes(`comment_created change_control.changecomment:${b.id}`));
  });

  it('says reset first when the id asked for is older than the kept window (24 h), or was never handed out; then goes on', async () => {
    const sc = await scene(w);
    const a = await rootComment(sc, sc.bob.client, 'old');
    const old = (await ccDb(svc)
      .selectFrom('cc_stream_events')
      .select(sql<number>`min(id)`.as('id'))
      .executeTakeFirstOrThrow()) as { id: number };
    svc.clock.advance(STREAM_RETENTION.maxAgeMs + 60_000);
    await pruneStreamEvents(createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: '' }));
    svc.clock.advance(-(STREAM_RETENTION.maxAgeMs + 60_000));
    for (const lastEventId of [String(old.id), '0', '999999999']) {
      const s = await watch(w.dave.key, { lastEventId });
      const reset = await s.next();
      assert.equal(reset.event, 'reset', lastEventId);
      assert.deepEqual(reset.json, {});
      const b = await sentinel(sc);
      const after = await s.nextUntil(isComment(b));
      assert.ok(!said(after).includes(`comment_created change_control.changecomment:${a.id}`));
      assert.ok(after.every((x) => Number(x.id) > Number(reset.id)));
    }
  });

  it('keeps at most 100,000 events: pruning drops the oldest beyond that and remembers where it pruned', async () => {
    const before = (await ccDb(svc)
      .selectFrom('cc_stream_events')
      .select(sql<number>`max(id)`.as('id'))
      .executeTakeFirstOrThrow()) as { id: number };
    const now = svc.clock.now().toISOString();
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${STREAM_RETENTION.maxRows + 10})
      insert into cc_stream_events (time, event, change_request_id, object_type, object_id) select ${now}, 'comment_updated', 0, 'change_control.changecomment', i from n`.execute(
      svc.host.db,
    );
    await pruneStreamEvents(createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: '' }));
    const kept = await sql<{
      n: number;
      low: number;
      pruned: number;
    }>`select count(*) as n, min(id) as low, (select pruned_through from cc_stream_state) as pruned from cc_stream_events`.execute(
      svc.host.db,
    );
    assert.equal(kept.rows[0]!.n, STREAM_RETENTION.maxRows);
    assert.equal(kept.rows[0]!.pruned, kept.rows[0]!.low - 1);
    assert.ok(kept.rows[0]!.pruned > before.id);
    const s = await watch(w.dave.key, { lastEventId: String(before.id) });
    assert.equal((await s.next()).event, 'reset');
  });

  it('sends an event only to callers who may view its change request (constraints included): others receive none of its events', async () => {
    const hidden = await scene(w);
    const shown = await scene(w);
    const eve = await withPermissions(
      svc,
      'eve',
      [
        ...VIEW_ALL.filter((g) => !g.object_types.includes('change_control.changerequest')),
        { object_types: CC_TYPES.filter((t) => t !== 'change_control.changerequest'), actions: ['view'] },
        { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { id: shown.cr.id } },
      ],
      false,
    );
    const s = await watch(eve.key);
    const filtered = await watch(w.dave.key, { query: `?change_request=${shown.cr.id}` });
    const everything = await watch(w.dave.key);
    // Activity on the hidden request: a comment, a review, a check report, a branch edit, a lifecycle move.
    const c = await rootComment(hidden, hidden.bob.client, 'secret');
    expectStatus(await review(hidden.bob.client, hidden.cr.id, 'approve'), 201);
    await ok(hidden.inBranch.patch(`${DEVICES}${hidden.devices[0]!.id}/`, { status: 'active' }));
    await ok(hidden.alice.client.post(`${REQUESTS}${hidden.cr.id}/return-to-draft/`, {}));
    expectStatus(await hidden.bob.client.delete(`${COMMENTS}${c.id}/`), 204);
    const mark = await sentinel(shown);
    const seenByEve = await s.nextUntil(isComment(mark));
    assert.deepEqual([...new Set(seenByEve.map((e) => e.json.change_request))], [shown.cr.id]);
    assert.deepEqual(
      [...new Set((await filtered.nextUntil(isComment(mark))).map((e) => e.json.change_request))],
      [shown.cr.id],
    );
    const all = await everything.nextUntil(isComment(mark));
    assert.ok(all.some((e) => e.json.change_request === hidden.cr.id && e.event === 'comment_deleted'));
    // Permissions are read when sending: granting the request now lets its next events through.
    await created(
      svc.admin.post('/api/users/permissions/', {
        name: 'eve-hidden',
        object_types: ['change_control.changerequest'],
        actions: ['view'],
        users: [eve.id],
        constraints: { id: hidden.cr.id },
      }),
    );
    const later = await sentinel(hidden);
    assert.ok(
      said(await s.nextUntil(isComment(later))).includes(`comment_created change_control.changecomment:${later}`),
    );
  });

  it('sends an event only to callers who may view the object it names (a comment, a check, the branch)', async () => {
    const sc = await scene(w);
    const frank = await withPermissions(
      svc,
      'frank',
      [
        { object_types: CC_TYPES.filter((t) => t !== 'change_control.changecomment'), actions: ['view'] },
        { object_types: ['branching.changediff', 'dcim.device'], actions: ['view'] },
        { object_types: ['change_control.changecomment'], actions: ['view'], constraints: { author: '$user' } },
      ],
      false,
    );
    const s = await watch(frank.key);
    const hiddenComment = await rootComment(sc, sc.bob.client, 'not for frank');
    await editInBranch(sc);
    expectStatus(await sc.bob.client.delete(`${COMMENTS}${hiddenComment.id}/`), 204);
    expectStatus(await review(sc.bob.client, sc.cr.id, 'comment', 'visible to frank'), 201);
    const seen = await s.nextUntil((e) => e.event === 'review_submitted');
    const events = seen.map((e) => e.event);
    assert.ok(!events.includes('comment_created') && !events.includes('comment_deleted'), events.join(', '));
    assert.ok(!events.includes('changes_updated'), events.join(', '));
  });

  it('announces nothing of a write that fails: events are written in its transaction and sent after commit', async () => {
    const sc = await scene(w);
    const lowOnly = await withPermissions(svc, 'low-only', [
      { object_types: ['change_control.changerequest'], actions: ['change'], constraints: { priority: 'low' } },
    ]);
    await ok(svc.admin.patch(`${REQUESTS}${sc.cr.id}/`, { priority: 'low' }));
    const s = await watch(w.dave.key);
    const last = async () =>
      Number(
        (await sql<{ n: number | null }>`select max(id) as n from cc_stream_events`.execute(svc.host.db)).rows[0]!.n ??
          0,
      );
    const before = await last();
    // The write happens, then its answer fails the change constraint: everything rolls back.
    expectStatus(await lowOnly.client.patch(`${REQUESTS}${sc.cr.id}/`, { priority: 'high' }), 403);
    // A failure inside the pipeline after the event was recorded rolls it back too.
    svc.host.events.subscribe(async (_ctx, e) => {
      if (e.event === 'object_created' && (e.data as { text?: string }).text === 'boom')
        throw new Error('refused by a test subscriber');
    });
    assert.equal(
      (await sc.bob.client.post(COMMENTS, { change_request: sc.cr.id, change_diff: sc.changes[0]!.id, text: 'boom' }))
        .status,
      500,
    );
    svc.log.lines.splice(0);
    assert.equal(await last(), before, 'nothing was kept');
    const mark = await sentinel(sc);
    const received = await s.nextUntil(isComment(mark));
    assert.ok(!said(received).some((x) => x.includes('boom')));
    const mine = await ccDb(svc)
      .selectFrom('cc_stream_events')
      .select(['id'])
      .where('id', '>', before)
      .orderBy('id')
      .execute();
    // The first event the stream sends is the sentinel's own, the first kept after what existed
    // before (on SQLite right after it; PostgreSQL's identities skip what a rollback used).
    assert.equal(Number(received[0]!.id), (mine as Array<{ id: number }>)[0]!.id);
    assert.deepEqual(
      received.map((e) => Number(e.id)),
      (mine as Array<{ id: number }>).map((r) => r.id).filter((id) => id <= Number(received[received.length - 1]!.id)),
    );
  });

  it('writes a keep-alive comment periodically, and ends the stream once its token is revoked', async () => {
    const hub = streamHub(svc.host);
    hub.keepAliveMs = 20;
    const tokenOwner = await withPermissions(svc, 'short-lived', []);
    const s = await watch(tokenOwner.key);
    hub.keepAliveMs = 15_000;
    await s.until(() => s.comments.includes('keep-alive'));
    const tokens = (await ok(svc.admin.get(`/api/users/tokens/?user_id=${tokenOwner.id}`))).results;
    for (const t of tokens) expectStatus(await svc.admin.delete(`/api/users/tokens/${t.id}/`), 204);
    await s.closedByServer();
    assert.equal(s.ended, true);
  });

  it('says change_request_updated when what shows with a request moves without a change of its row (who waits to review it)', async () => {
    const sc = await scene(w);
    const hank = await withPermissions(svc, 'hank', [{ object_types: ['change_control.review'], actions: ['add'] }]);
    const rule = (await ok(svc.admin.get(`${CC}policy-rules/?policy_id=${w.policyId}`))).results[0];
    const s = await watch(w.dave.key, { query: `?change_request=${sc.cr.id}` });
    const before = (await ok(svc.admin.get(`${REQUESTS}${sc.cr.id}/`))).last_updated;
    try {
      // One more eligible reviewer: the request now waits for hank too; its own fields stay as they were.
      await ok(svc.admin.patch(`${CC}policy-rules/${rule.id}/`, { users: [...rule.users, hank.id] }));
      const waiting = (await ok(hank.client.get(`${REQUESTS}?reviewer=me`))).results.map((r: { id: number }) => r.id);
      assert.ok(waiting.includes(sc.cr.id));
      const e = await s.next();
      assert.deepEqual([e.event, e.json.change_request], ['change_request_updated', sc.cr.id]);
      assert.equal((await ok(svc.admin.get(`${REQUESTS}${sc.cr.id}/`))).last_updated, before);
    } finally {
      await ok(svc.admin.patch(`${CC}policy-rules/${rule.id}/`, { users: rule.users }));
    }
  });

  if (onPostgres) {
    const until = async (done: () => boolean, poke: () => void | Promise<void>, what: () => string): Promise<void> => {
      for (let i = 0; !done(); i++) {
        assert.ok(i < 500, what());
        await poke();
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const listening = async (channel: string): Promise<number> =>
      Number(
        (
          await sql<{
            n: number;
          }>`select count(*)::int as n from pg_stat_activity where query = ${`listen ${channel}`}`.execute(svc.host.db)
        ).rows[0]!.n,
      );

    it('listens on PostgreSQL only while something listens to the signal, and calls the listener once when it starts to (a commit before may have been missed)', async () => {
      const signal = commitSignal(svc.host.db, 'cc_signal_lazy', svc.host.unawaited);
      signal.notify();
      assert.equal(await listening('cc_signal_lazy'), 0, 'no LISTEN connection without a listener');
      let heard = 0;
      const stop = signal.subscribe(() => heard++);
      await until(
        () => heard > 0,
        () => undefined,
        () => 'never called once listening',
      );
      assert.equal(await listening('cc_signal_lazy'), 1);
      stop();
    });

    it("wakes each instance once per commit: what its own NOTIFY brings back through its LISTEN is not heard again, another instance's is", async () => {
      // Two instances' signals of one channel (each with its own LISTEN connection).
      const heard = { a: 0, b: 0 };
      const own = { a: 0, b: 0 };
      const a = commitSignal(svc.host.db, 'cc_signal_test', svc.host.unawaited);
      const b = commitSignal(svc.host.db, 'cc_signal_test', svc.host.unawaited);
      a.subscribe(() => heard.a++);
      b.subscribe(() => heard.b++);
      const pokeA = () => void (own.a++, a.notify());
      const pokeB = () => void (own.b++, b.notify());
      const what = () => JSON.stringify({ heard, own });
      // Both listening: each heard the other (besides its own notifications and the call when it started to listen).
      await until(() => heard.a - own.a >= 2, pokeB, what);
      await until(() => heard.b - own.b >= 2, pokeA, what);
      // What is still on its way arrives before a notification sent after it (PostgreSQL delivers in commit order).
      const drainedA = heard.a;
      pokeB();
      await until(
        () => heard.a > drainedA,
        () => undefined,
        what,
      );
      const drainedB = heard.b;
      pokeA();
      await until(
        () => heard.b > drainedB,
        () => undefined,
        what,
      );
      heard.a = 0;
      heard.b = 0;
      const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
      await inTransaction(ctx, async (tx) => a.notifyOnCommit(tx.db, (task) => tx.afterCommit(task)));
      assert.equal(heard.a, 1, 'the writer wakes its own listeners after the commit');
      await until(
        () => heard.b === 1,
        () => undefined,
        what,
      );
      // Then two notifications of the other instance: when both arrived, the writer's own came back
      // before them (and was not heard).
      b.notify();
      b.notify();
      await until(
        () => heard.a >= 3 && heard.b >= 3,
        () => undefined,
        what,
      );
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(heard, { a: 3, b: 3 });
    });
  }

  it('is described in the OpenAPI document as text/event-stream', async () => {
    const doc = (await svc.anonymous.get('/api/schema/')).body;
    const op = doc.paths[STREAM].get;
    assert.ok(op.responses['200'].content['text/event-stream']);
    assert.match(op.description, /Last-Event-ID/);
    assert.deepEqual(op.parameters.map((p: { name: string }) => p.name).sort(), ['change_request', 'last_event_id']);
  });
});
