import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';

/**
 * What every path a route matches starts with, lower-cased (routing ignores case): its path up
 * to the last `/` before its first parameter or pattern character. A path that is literal to its
 * end (or up to a pattern) also matches without its last `/`, so its last segment is left out.
 */
export function literalPrefix(path: string): string {
  const special = path.search(/[:*{}()[\]?+!\\]/);
  let literal = special === -1 ? path : path.slice(0, special);
  if (special === -1 || path[special] !== ':') literal = literal.replace(/\/+$/, '');
  return literal.slice(0, literal.lastIndexOf('/') + 1).toLowerCase();
}

/** What each router's last layer passes on: the request went through it unanswered. */
const PASSED = Symbol('passed');

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * The routes, found without trying each in turn: one Express router per literal prefix, holding
 * (in the order they were registered) every route whose prefix starts it. A request goes to the
 * router of the longest prefix its path starts with: any route that can match the path has a
 * prefix the path starts with, so a prefix of that one, so it is there, in its turn; Express
 * matches within it as it would over the whole table (parameters, decoding, case, a parameter
 * it cannot decode whatever the method). A request no route answers is passed on; a router's
 * last layer makes sure of it (alone, a router would answer OPTIONS itself, which the whole
 * table, followed by the service's own answer, never does).
 */
export class RouteIndex {
  private readonly routes: Array<{ prefix: string; method: Method; path: string; handler: RequestHandler }> = [];
  private routers: Map<string, Router> | null = null;

  add(method: Method, path: string, handler: RequestHandler): void {
    if (this.routers) throw new Error('RouteIndex: a route added after the first request');
    this.routes.push({ prefix: literalPrefix(path), method, path, handler });
  }

  /** One router per prefix, built at the first request (every route is added by then). */
  private build(): Map<string, Router> {
    const routers = new Map<string, Router>();
    for (const { prefix } of this.routes) {
      if (routers.has(prefix)) continue;
      const router = express.Router();
      for (const route of this.routes)
        if (prefix.startsWith(route.prefix)) router[route.method](route.path, route.handler);
      router.use(passOn);
      routers.set(prefix, router);
    }
    return routers;
  }

  readonly dispatch = (req: Request, res: Response, next: NextFunction): void => {
    const routers = (this.routers ??= this.build());
    const path = req.path.toLowerCase();
    let router: Router | undefined;
    for (let end = path.indexOf('/'); end !== -1; end = path.indexOf('/', end + 1))
      router = routers.get(path.slice(0, end + 1)) ?? router;
    if (!router) return next();
    router(req, res, (err?: unknown) => next(err === PASSED ? undefined : err));
  };
}

function passOn(_req: Request, _res: Response, next: NextFunction): void {
  next(PASSED);
}
