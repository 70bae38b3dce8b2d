// Live updates: the Server-Sent Events parser, the stream client (resuming with Last-Event-ID,
// reconnecting, a `reset`, polling while the stream is unavailable or silent) against a small
// HTTP server speaking the stream's contract, and what each event asks to reload.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../extension/core/api-client';
import { LiveStream, planRefresh, type LiveState } from '../../extension/core/live-stream';
import { readStreamMessage, SseParser } from '../../extension/core/sse';
import type { StreamEvent } from '../../contract/api/change-control';
import { until } from '../support/until';

const event = (id: number, type: StreamEvent['event'], cr = 1): string =>
  `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify({ id, event: type, time: '2026-11-01T10:00:00.000Z', change_request: cr, object_type: 'change_control.changerequest', object_id: cr })}\n\n`;

describe('extension: live updates', () => {
  describe('the Server-Sent Events parser', () => {
    it('completes messages at blank lines, however the text is cut into chunks and whatever the line endings', () => {
      const text =
        'id: 1\r\nevent: comment_created\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: keep-alive\n\nid: 2\rdata: x\r\r';
      for (let cut = 0; cut <= text.length; cut += 1) {
        const p = new SseParser();
        const got = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
        assert.deepEqual(
          got,
          [
            { event: 'comment_created', data: '{"a":\n1}', lastEventId: '1' },
            { event: 'message', data: 'x', lastEventId: '2' },
          ],
          `cut at ${cut}`,
        );
      }
    });

    it('keeps the last id across messages, reads retry, drops a BOM, and ignores comments, unknown fields and empty messages', () => {
      const p = new SseParser();
      const got = p.push('\uFEFFid: 7\nretry: 2500\nfoo: bar\ndata: a\n\n:comment\n\nevent: x\n\ndata:b\n\n');
      assert.deepEqual(got, [
        { event: 'message', data: 'a', lastEventId: '7', retry: 2500 },
        { event: 'message', data: 'b', lastEventId: '7' },
      ]);
      assert.equal(p.lastId, '7');
      assert.equal(p.sawTraffic(), true);
      assert.equal(p.sawTraffic(), false);
    });

    it("reads the stream's events with the contract, a reset, and ignores what it does not know", () => {
      const [m] = new SseParser().push(event(3, 'check_updated', 9));
      assert.deepEqual(readStreamMessage(m), {
        kind: 'event',
        event: {
          id: 3,
          event: 'check_updated',
          time: '2026-11-01T10:00:00.000Z',
          change_request: 9,
          object_type: 'change_control.changerequest',
          object_id: 9,
        },
      });
      assert.deepEqual(readStreamMessage({ event: 'reset', data: '{}', lastEventId: '' }), { kind: 'reset' });
      assert.equal(readStreamMessage({ event: 'other', data: '{}', lastEventId: '' }).kind, 'ignored');
      assert.equal(readStreamMessage({ event: 'check_updated', data: 'nope', lastEventId: '' }).kind, 'ignored');
      assert.equal(readStreamMessage({ event: 'check_updated', data: '{"id":1}', lastEventId: '' }).kind, 'ignored');
    });
  });

  describe('what events reload', () => {
    it('reloads the parts an event names, per request, and the lists only for what moves requests between them', () => {
      const plan = planRefresh([
        { event: 'comment_created', change_request: 1 },
        { event: 'check_updated', change_request: 2 },
        { event: 'changes_updated', change_request: 1 },
      ]);
      assert.equal(plan.lists, true);
      assert.deepEqual([...plan.requests.get(1)!].sort(), ['changes', 'checks', 'comments', 'request']);
      assert.deepEqual([...plan.requests.get(2)!], ['checks']);
      assert.equal(planRefresh([{ event: 'comment_updated', change_request: 1 }]).lists, false);
    });
  });

  describe('the stream client', () => {
    let server: Server;
    let url: string;
    let handler: (req: IncomingMessage, res: ServerResponse) => void;
    const requests: { auth: string | undefined; accept: string | undefined; lastEventId: string | undefined }[] = [];
    let stream: LiveStream | undefined;

    beforeEach(async () => {
      requests.length = 0;
      server = createServer((req, res) => {
        requests.push({
          auth: req.headers.authorization,
          accept: req.headers.accept,
          lastEventId: req.headers['last-event-id'] as string | undefined,
        });
        handler(req, res);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterEach(async () => {
      stream?.stop();
      stream = undefined;
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    function follow(overrides: Partial<ConstructorParameters<typeof LiveStream>[0]> = {}) {
      const client = new ApiClient({ baseUrl: url, token: 'tok-1' });
      const seen = { batches: [] as StreamEvent[][], resets: 0, polls: 0, states: [] as LiveState[] };
      stream = new LiveStream({
        open: (lastEventId, signal) => client.openStream({ lastEventId, signal }),
        onEvents: (events) => seen.batches.push(events),
        onReset: () => (seen.resets += 1),
        onPoll: () => (seen.polls += 1),
        onState: (s) => seen.states.push(s),
        baseMs: 10,
        maxMs: 40,
        pollMs: 10,
        batchMs: 20,
        ...overrides,
      });
      stream.start();
      return seen;
    }

    it('follows the stream with the token, hands on events together, and resumes after a drop from the last event seen', async () => {
      let connection = 0;
      handler = (_req, res) => {
        connection += 1;
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        if (connection === 1) {
          res.write(': keep-alive\n\n');
          res.write(event(1, 'comment_created') + event(2, 'check_updated', 2));
          setTimeout(() => res.end(), 60);
        } else {
          res.write(event(3, 'review_submitted'));
        }
      };
      const seen = follow();
      await until('three events', () => seen.batches.flat().length === 3);
      assert.deepEqual(
        seen.batches[0].map((e) => e.id),
        [1, 2],
        'events arriving together come in one batch',
      );
      assert.deepEqual(
        requests.map((r) => r.lastEventId),
        [undefined, '2'],
      );
      assert.equal(requests[0].auth, 'Token tok-1');
      assert.equal(requests[0].accept, 'text/event-stream');
      assert.equal(stream!.resumeId, '3');
      assert.equal(stream!.state, 'open');
      assert.equal(seen.resets, 0);
    });

    it('reloads everything on a reset, dropping the events it had not handed on', async () => {
      handler = (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write(event(1, 'comment_created') + 'event: reset\ndata: {}\n\n' + event(2, 'comment_deleted'));
      };
      const seen = follow({ batchMs: 50 });
      await until('the reset and the event after it', () => seen.resets === 1 && seen.batches.length === 1);
      assert.deepEqual(
        seen.batches.flat().map((e) => e.id),
        [2],
      );
    });

    it('polls while the service has no stream, and asks again later', async () => {
      let offered = false;
      handler = (_req, res) => {
        if (!offered) {
          res.writeHead(404, { 'Content-Type': 'application/json' });
          res.end('{"detail":"Not found."}');
          return;
        }
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write(event(1, 'check_updated'));
      };
      const seen = follow({ unavailableRetryMs: 50 });
      await until('polling', () => seen.polls >= 2);
      assert.equal(stream!.state, 'polling');
      offered = true;
      await until('the stream once offered', () => stream!.state === 'open' && seen.batches.length === 1);
      const polls = seen.polls;
      await new Promise((r) => setTimeout(r, 40));
      assert.equal(seen.polls, polls, 'no polling while the stream is open');
    });

    it('reconnects a stream that went silent (no keep-alive), and one refused, with backoff; polling meanwhile', async () => {
      let connection = 0;
      handler = (_req, res) => {
        connection += 1;
        if (connection === 2) {
          res.writeHead(503, { 'Content-Type': 'application/json' });
          res.end('{"detail":"busy"}');
          return;
        }
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write(': keep-alive\n\n');
        if (connection >= 3) res.write(event(5, 'comment_created'));
      };
      const seen = follow({ idleMs: 60 });
      await until('the event after reconnecting twice', () => seen.batches.length === 1);
      assert.ok(connection >= 3);
      assert.ok(seen.states.includes('polling'));
      // It had received nothing to resume from, so after reconnecting it reloads everything once.
      assert.ok(seen.resets >= 1);
    });

    it('takes an answer that is not an event stream as unavailable, and stops cleanly', async () => {
      handler = (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{}');
      };
      const seen = follow();
      await until('polling', () => seen.polls >= 1);
      stream!.stop();
      const polls = seen.polls;
      await new Promise((r) => setTimeout(r, 40));
      assert.equal(seen.polls, polls);
      assert.equal(stream!.state, 'stopped');
    });
  });
});
