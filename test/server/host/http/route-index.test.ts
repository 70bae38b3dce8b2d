import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { literalPrefix, RouteIndex } from '../../../../server/host/http/route-index';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

// Routes that overlap on purpose: a parameter hiding a later literal, a parameter first, a
// literal path that also matches without its last slash, upper case, a wildcard.
const ROUTES: Array<[Method, string]> = [
  ['get', '/api/users/tokens/:id/'],
  ['post', '/api/users/tokens/provision/'],
  ['get', '/api/users/tokens/provision/'],
  ['get', '/api/:app/me/'],
  ['get', '/api/status/'],
  ['get', '/api/plugins/x/items/'],
  ['get', '/api/plugins/x/items/:id/'],
  ['post', '/api/plugins/x/items/:id/run/'],
  ['delete', '/api/plugins/x/items/:id/'],
  ['get', '/API/Upper/:id/'],
  ['get', '/api/wild/*rest'],
  ['patch', '/api/plugins/x/:kind/:id/'],
];

const PATHS = [
  '/',
  '/api/',
  '/api/status/',
  '/api/status',
  '/API/STATUS/',
  '/api/status//',
  '/api/users/tokens/',
  '/api/users/tokens/7/',
  '/api/users/tokens/provision/',
  '/api/users/tokens/provision',
  '/api/users/me/',
  '/api/plugins/me/',
  '/api/plugins/x/items/',
  '/api/plugins/x/items',
  '/api/plugins/x/items/12/',
  '/api/plugins/x/items/12',
  '/api/plugins/x/items/12/run/',
  '/api/plugins/x/items/%41b/',
  '/api/plugins/x/items/%zz/',
  '/api/plugins/x/Items/5/',
  '/api/upper/3/',
  '/API/UPPER/3/',
  '/api/wild/a/b/c',
  '/api/wild/',
  '/api/plugins/x/items/12/?q=1',
  '/api/plugins/x/sites/4/',
  '/nothing/here/',
  '//api/status/',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS'];

function answer(name: string) {
  return (req: Request, res: Response): void => {
    res.json({ route: name, params: req.params });
  };
}

function finish(app: Express): void {
  app.use((req: Request, res: Response) => {
    res.status(404).json({ route: null, method: req.method });
  });
  app.use((err: { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(err.status ?? 500).json({ error: true });
  });
}

async function listen(app: Express): Promise<{ server: Server; base: string }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('http: the route index', () => {
  it("takes a route's literal start up to its first parameter, and leaves out a literal path's last segment", () => {
    assert.equal(
      literalPrefix('/api/plugins/change-control/change-requests/:id/submit/'),
      '/api/plugins/change-control/change-requests/',
    );
    assert.equal(literalPrefix('/api/plugins/change-control/change-requests/'), '/api/plugins/change-control/');
    assert.equal(literalPrefix('/api/status'), '/api/');
    assert.equal(literalPrefix('/API/Upper/:id/'), '/api/upper/');
    assert.equal(literalPrefix('/api/wild/*rest'), '/api/');
    assert.equal(literalPrefix('/:app/'), '/');
  });

  it('answers every method and path as Express trying every route in turn would', async () => {
    const whole = express();
    const indexed = express();
    const index = new RouteIndex();
    for (const [i, [method, path]] of ROUTES.entries()) {
      whole[method](path, answer(`${i}`));
      index.add(method, path, answer(`${i}`));
    }
    indexed.use(index.dispatch);
    finish(whole);
    finish(indexed);
    const a = await listen(whole);
    const b = await listen(indexed);
    try {
      const differences: string[] = [];
      let routed = 0;
      for (const method of METHODS) {
        for (const path of PATHS) {
          const [x, y] = await Promise.all(
            [a.base, b.base].map(async (base) => {
              const res = await fetch(base + path, { method });
              return `${res.status} ${res.headers.get('allow') ?? ''} ${await res.text()}`;
            }),
          );
          if (x !== y) differences.push(`${method} ${path}: ${x} / ${y}`);
          if (x!.startsWith('200')) routed++;
        }
      }
      assert.deepEqual(differences, []);
      assert.ok(routed > 30, `only ${routed} requests reached a route: the comparison proves little`);
    } finally {
      a.server.close();
      b.server.close();
    }
  });
});
