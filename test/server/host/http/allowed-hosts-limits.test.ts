import assert from 'node:assert/strict';
import { request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import express from 'express';
import { serverFor } from '../../../../server/app';
import { AllowedHosts, hostOf } from '../../../../server/host/http/allowed-hosts';
import { SERVER_TIMEOUTS } from '../../../../server/host/http/server-limits';
import { ADMIN_TOKEN, startService, withService, type TestService } from '../../../support/service';
import { until } from '../../../support/until';

/** One GET with a chosen Host header (and token): status and parsed body. */
function getWithHost(
  svc: TestService,
  path: string,
  host: string | null,
  token: string | null = ADMIN_TOKEN,
): Promise<{ status: number; body: any }> {
  const url = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (host !== null) headers.Host = host;
    if (token) headers.Authorization = `Token ${token}`;
    const req = request(
      { host: url.hostname, port: url.port, path, headers, setHost: host === null ? false : undefined },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('HTTP: allowed hosts (NetBox ALLOWED_HOSTS)', () => {
  it('reads a Host header as NetBox does: lower-cased, without its port, IPv6 in brackets; a malformed one names no host', () => {
    assert.equal(hostOf('LocalHost:8000'), 'localhost');
    assert.equal(hostOf('[::1]:8000'), '[::1]');
    assert.equal(hostOf('example.net.'), 'example.net');
    for (const bad of ['', 'a b', 'evil.example@good', 'x:y:z', '[::1', undefined]) assert.equal(hostOf(bad), null);
    const hosts = new AllowedHosts(['localhost', '.corp.example', '::1']);
    assert.ok(hosts.allows('localhost:1') && hosts.allows('a.b.corp.example') && hosts.allows('corp.example'));
    assert.ok(hosts.allows('[::1]:8000'));
    assert.ok(!hosts.allows('evilcorp.example') && !hosts.allows('127.0.0.1'));
    assert.ok(new AllowedHosts(['*']).allows('anything.example'));
  });

  it('Allowed hosts: a request whose Host is not allowed is 400 before authentication (good token, bad token or none), on every route; the defaults allow localhost, 127.0.0.1 and [::1]', async () => {
    await withService(startService(), async (svc) => {
      const port = new URL(svc.url).port;
      for (const token of [ADMIN_TOKEN, 'f'.repeat(40), null]) {
        const refused = await getWithHost(
          svc,
          '/api/plugins/change-control/change-requests/',
          `evil.example:${port}`,
          token,
        );
        assert.equal(refused.status, 400, String(token));
        assert.match(refused.body.detail, /Invalid Host header "evil\.example:\d+"/);
      }
      assert.equal((await getWithHost(svc, '/api/status/', 'rebound.attacker.example', null)).status, 400);
      assert.equal((await getWithHost(svc, '/api/status/', null, null)).status, 400, 'no Host at all');
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`])
        assert.equal((await getWithHost(svc, '/api/status/', host)).status, 200, host);
      // Bad tokens from a refused host were never looked at: the throttle counted none.
      assert.equal((await svc.admin.get('/api/status/')).status, 200);
    });
  });

  it('Allowed hosts: host.allowed_hosts replaces the defaults (the bound address stays allowed); every url and next is built from the allowed host the request named', async () => {
    await withService(
      startService({ config: { host: { allowed_hosts: ['cc.example.net', '.corp.example'] } } }),
      async (svc) => {
        const port = new URL(svc.url).port;
        assert.equal((await getWithHost(svc, '/api/status/', `localhost:${port}`)).status, 400);
        for (let i = 0; i < 2; i++) await svc.admin.post('/api/users/groups/', { name: `g${i}` });
        const page = await getWithHost(svc, '/api/users/groups/?limit=1', `cc.example.net:${port}`);
        assert.equal(page.status, 200);
        assert.match(page.body.next, new RegExp(`^http://cc\\.example\\.net:${port}/api/users/groups/`));
        assert.match(page.body.results[0].url, /^http:\/\/cc\.example\.net:\d+\//);
        assert.equal((await getWithHost(svc, '/api/status/', `team.corp.example:${port}`)).status, 200);
        assert.equal((await svc.admin.get('/api/status/')).status, 200, 'the bound address 127.0.0.1');
      },
    );
  });
});

describe('HTTP: server limits for a local service', () => {
  let server: Server;
  let port: number;
  const sockets: Socket[] = [];
  before(async () => {
    const app = express();
    app.get('/ping', (_req, res) => res.json({ ok: true }));
    server = serverFor(app, { maxConnections: 2 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('Server timeouts: headers within 10 s, the whole request within 60 s, an idle kept-alive connection closed after 5 s', () => {
    assert.deepEqual(
      [server.headersTimeout, server.requestTimeout, server.keepAliveTimeout],
      [SERVER_TIMEOUTS.headersMs, SERVER_TIMEOUTS.requestMs, SERVER_TIMEOUTS.keepAliveMs],
    );
    assert.deepEqual([SERVER_TIMEOUTS.headersMs, SERVER_TIMEOUTS.requestMs], [10_000, 60_000]);
  });

  it('Connection cap: with max_connections 2, a third connection is closed as it arrives; one closing lets another in', async () => {
    const open = (): Promise<Socket> =>
      new Promise((resolve) => {
        const s = connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => undefined);
        sockets.push(s);
      });
    const first = await open();
    await open();
    const third = await open();
    let closed = false;
    third.on('close', () => (closed = true));
    await until('the third connection closed', () => closed);
    first.destroy();
    const connections = () => new Promise<number>((resolve) => server.getConnections((_err, n) => resolve(n)));
    for (let tries = 0; (await connections()) >= 2 && tries < 100; tries++) await new Promise((r) => setTimeout(r, 20));
    const fourth = await open();
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      fourth.on('data', (c: Buffer) => {
        text += c.toString();
        if (text.includes('"ok":true')) resolve(text);
      });
      fourth.write('GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    });
    assert.match(answer, /^HTTP\/1\.1 200/);
  });
});
