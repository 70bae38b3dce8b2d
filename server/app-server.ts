import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Express } from 'express';

/**
 * The HTTP server that serves `app`, whose requests and responses are made as Express's own
 * from the start (their prototypes `app.request` and `app.response`).
 *
 * Express otherwise gives every request and response Node made its own prototype when it
 * handles them (`Object.setPrototypeOf`). V8 then keeps each such object, and what it refers
 * to, alive through the young generation's collections until the next full collection: with
 * keep-alive connections every request's and response's objects were promoted to the old
 * generation (about 40 kB per write-then-read pair of the detail read, 300 kB at each young
 * collection), which is what filled it and brought the full collections of a steady load
 * (docs/performance.md, "Requests made as Express's"). Made with the right prototype, Express's
 * own `setPrototypeOf` finds it already in place and changes nothing.
 */
export function serverFor(app: Express): Server {
  return createServer({ IncomingMessage: madeAs<typeof IncomingMessage>(IncomingMessage, app.request), ServerResponse: madeAs<typeof ServerResponse>(ServerResponse, app.response) }, app);
}

/** A constructor that builds what `base` builds, with `prototype` as the made object's prototype. */
function madeAs<C extends abstract new (...args: never[]) => object>(base: C, prototype: object): C {
  function Made(...args: unknown[]): object {
    return Reflect.construct(base, args, Made);
  }
  Made.prototype = prototype;
  return Made as unknown as C;
}
