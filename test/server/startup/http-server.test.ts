import assert from 'node:assert/strict';
import { Agent, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { serverFor } from '../../../server/app';

/** One request on `agent`: status, headers and body text. */
function send(
  port: number,
  agent: Agent,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: IncomingMessage['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: payload === undefined ? {} : { 'Content-Type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the HTTP server that serves the app', () => {
  let server: Server;
  let port: number;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const app = express();
  app.use(express.json());
  app.get('/hello', (req, res) => {
    res.set('X-Seen', req.get('X-Missing') ?? 'none').json({ app: req.app === app, query: req.query });
  });
  app.post('/echo', (req, res) => {
    res.status(201).json({ body: req.body as unknown });
  });
  const made: Array<{ request: object | null; response: object | null }> = [];

  before(async () => {
    server = serverFor(app);
    // Seen before Express handles them: Node made them, Express has not touched them yet.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) =>
      made.push({
        request: Object.getPrototypeOf(req) as object | null,
        response: Object.getPrototypeOf(res) as object | null,
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    agent.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("makes every request and response as Express's own from the start, on one kept-alive connection as on new ones", async () => {
    made.length = 0;
    await send(port, agent, 'GET', '/hello');
    await send(port, agent, 'POST', '/echo', { a: 1 });
    await send(port, new Agent({ keepAlive: false }), 'GET', '/hello');
    assert.equal(made.length, 3);
    for (const one of made) {
      assert.equal(one.request, app.request);
      assert.equal(one.response, app.response);
    }
  });

  it("serves Express's requests and responses as before: the app, headers, the query, JSON bodies in and out, statuses", async () => {
    const got = await send(port, agent, 'GET', '/hello?x=1');
    assert.equal(got.status, 200);
    assert.equal(got.headers['x-seen'], 'none');
    assert.deepEqual(JSON.parse(got.text), { app: true, query: { x: '1' } });
    const echoed = await send(port, agent, 'POST', '/echo', { b: [1, 2] });
    assert.equal(echoed.status, 201);
    assert.deepEqual(JSON.parse(echoed.text), { body: { b: [1, 2] } });
    assert.equal((await send(port, agent, 'GET', '/nowhere')).status, 404);
  });
});
