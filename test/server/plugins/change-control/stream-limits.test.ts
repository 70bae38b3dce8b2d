import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { sql } from 'kysely';
import { OpenStreams } from '../../../../server/host/http/pipeline';
import { observeStatements } from '../../../../server/host/db/database';
import { StreamReply } from '../../../../server/host/http/routes';
import type { StreamSink } from '../../../../server/host/core/stream-sink';
import { STREAM_RETENTION } from '../../../../server/plugins/change-control/stream/stream-repository';
import { MAX_STREAMS_PER_USER } from '../../../../server/plugins/change-control/stream/hub';
import { streamHub } from '../../../../server/plugins/change-control/stream/routes';
import { suiteService } from '../../../support/service';
import { settled } from '../../../support/quiet';
import { SseStream } from '../../../support/sse';
import { forSuite } from '../../../support/prepared';
import { until } from '../../../support/until';
import { actor, CC, ccDb, REQUESTS, ok } from './fixtures';
import { rootComment, scene, world } from './reviews-comments-fixtures';

const STREAM = `${CC}stream/`;

describe('change control: the event stream is cheap for what it cannot show', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));
  const streams: SseStream[] = [];
  const open = async (token: string, lastEventId?: string) => {
    const s = await SseStream.open(`${svc.url}${STREAM}`, { token, lastEventId });
    streams.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await until('the streams closed', () => streamHub(svc.host).size === 0);
  });

  it('Stream: replay skips the events a caller may not see in the database, whatever the backlog: one read of the events, no request loaded per hidden event', async () => {
    const visible = await scene(w);
    const hidden = await scene(w);
    await ok(svc.admin.patch(`${REQUESTS}${visible.cr.id}/`, { ref: 'STREAM-SEEN' }));
    const from = Number(
      (
        (await ccDb(svc)
          .selectFrom('cc_stream_events')
          .select(sql<number>`max(id)`.as('id'))
          .executeTakeFirstOrThrow()) as { id: number }
      ).id,
    );
    // A backlog of 3,000 events of a request the caller may not view.
    const now = svc.clock.now().toISOString();
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000)
      insert into cc_stream_events (time, event, change_request_id, object_type, object_id)
      select ${now}, 'change_request_updated', ${hidden.cr.id}, 'change_control.changerequest', ${hidden.cr.id} from n`.execute(
      svc.host.db,
    );
    const narrow = await actor(svc, 'narrow-reader', [
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: 'STREAM-SEEN' } },
      { object_types: ['change_control.changecomment'], actions: ['view'] },
    ]);
    const marker = await rootComment(visible, visible.carol.client, 'after the backlog');
    // Counted from a quiet moment: a stream already open (on PostgreSQL the instance then listens,
    // and a stream opening does not make them all read again) and what the marker's commit woke, done.
    await open(narrow.key);
    await settled(svc);
    const seen: string[] = [];
    const stop = observeStatements(svc.host.db, (q) => seen.push(q));
    try {
      const s = await open(narrow.key, String(from));
      const events = await s.nextUntil((e) => e.event === 'comment_created' && e.json.object_id === marker.id);
      assert.ok(events.every((e) => e.json.change_request === visible.cr.id));
      await settled(svc);
    } finally {
      stop();
    }
    const eventReads = seen.filter((q) => /from "cc_stream_events"/.test(q) && /"id" > /.test(q));
    assert.ok(eventReads.length <= 2, `events read ${eventReads.length} times:\n${eventReads.join('\n')}`);
    const requestLoads = seen.filter((q) => /^select \* from "cc_change_requests" where "id" = /.test(q));
    assert.ok(requestLoads.length <= 2, `requests loaded ${requestLoads.length} times`);
  });

  it(`Stream: at most ${MAX_STREAMS_PER_USER} open streams per user; one more is 429 with Retry-After until one closes (other users unaffected)`, async () => {
    const reader = await actor(svc, 'many-streams', [
      { object_types: ['change_control.changerequest'], actions: ['view'] },
    ]);
    const held: SseStream[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_USER; i++) {
      const s = await open(reader.key);
      assert.equal(s.status, 200, `stream ${i + 1}`);
      held.push(s);
    }
    const refused = await open(reader.key);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0, JSON.stringify(refused.headers));
    assert.match((refused as SseStream & { body: { detail: string } }).body.detail, /open event streams/);
    assert.equal((await open(w.dave.key)).status, 200, 'another user is unaffected');
    held[0]!.close();
    await until('a stream closed', () => streamHub(svc.host).size === MAX_STREAMS_PER_USER);
    assert.equal((await open(reader.key)).status, 200, 'a closed stream gives its place back');
  });

  it('Stream: a resume from an event older than the retention window answers with a reset event, even before the sweep prunes it', async () => {
    const sc = await scene(w);
    const old = (await rootComment(sc, sc.carol.client, 'yesterday')).id;
    const oldEvent = Number(
      (
        (await ccDb(svc)
          .selectFrom('cc_stream_events')
          .select(sql<number>`max(id)`.as('id'))
          .executeTakeFirstOrThrow()) as { id: number }
      ).id,
    );
    await rootComment(sc, sc.carol.client, 'still yesterday');
    svc.clock.advance(STREAM_RETENTION.maxAgeMs + 60_000);
    try {
      const s = await open(w.dave.key, String(oldEvent - 1));
      const first = await s.next();
      assert.equal(first.event, 'reset');
      // A resume within the window replays.
      const recent = await rootComment(sc, sc.carol.client, 'today');
      const within = await open(w.dave.key, String(Number(first.id)));
      const replayed = await within.nextUntil((e) => e.event === 'comment_created' && e.json.object_id === recent.id);
      assert.ok(replayed.every((e) => e.event !== 'reset' && e.json.object_id !== old));
    } finally {
      svc.clock.advance(-(STREAM_RETENTION.maxAgeMs + 60_000));
    }
  });
});

/** A response as the open-streams registry uses it: events, headers, the socket, writes and a drain. */
class SlowResponse extends EventEmitter {
  writableNeedDrain = true;
  readonly socket = { setNoDelay: () => undefined };
  status(): this {
    return this;
  }
  setHeader(): void {}
  flushHeaders(): void {}
  write(): boolean {
    return false;
  }
  end(): void {
    this.emit('close');
  }
}

describe('change control: a slow stream reader', () => {
  it('Stream: no listener grows per drain: waiting a thousand times for a slow reader adds no drain or close listener', async () => {
    const streams = new OpenStreams();
    const res = new SlowResponse();
    let sink!: StreamSink;
    streams.open(
      { socket: res.socket } as unknown as Request,
      res as unknown as Response,
      new StreamReply('text/event-stream', (s) => (sink = s)),
    );
    const before = { drain: res.listenerCount('drain'), close: res.listenerCount('close') };
    const waits = Array.from({ length: 1000 }, () => sink.drained());
    assert.deepEqual({ drain: res.listenerCount('drain'), close: res.listenerCount('close') }, before);
    res.writableNeedDrain = false;
    res.emit('drain');
    await Promise.all(waits);
    // A wait when the stream closes resolves too, and the stream lets go of the response.
    res.writableNeedDrain = true;
    const pending = sink.drained();
    res.end();
    await pending;
    assert.equal(sink.closed, true);
    assert.equal(res.listenerCount('drain'), 0);
  });
});
