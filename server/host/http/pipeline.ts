import type { Request, Response } from 'express';
import { createCtx, inTransaction, type AuthUser, type Ctx } from '../core/context';
import { AuthenticationFailed, PermissionDenied, TooManyRequests } from '../core/errors';
import type { Host } from '../host';
import { resolveBranchHeader } from '../objects/branch-access';
import { parseQueryString, requireSingle } from './body-guard';
import {
  fingerprintOf,
  IDEMPOTENT_REPLAY_HEADER,
  readIdempotencyKey,
  type Answer,
  IdempotencyKeys,
  type IdempotencyClaim,
} from './idempotency';
import { Reply, StreamReply, type RouteDef, type StreamSink } from './routes';
import { validate } from './validation';
import { parseBulkBody } from './bulk-body';

/**
 * The stages every request of a route goes through, in order:
 * 1. `authenticate`: who calls (a token), or nobody;
 * 2. `authorize`: whether the route's access lets that caller in;
 * 3. `claimIdempotencyKey`: a write sent again with the same key is answered what the first got;
 * 4. `run`: the handler, in one transaction when the route writes;
 * 5. `answer`: the JSON text or the stream.
 * A stage that refuses throws a domain error; the error middleware answers it.
 */
export class RequestPipeline {
  readonly streams = new OpenStreams();
  private readonly idempotency = new IdempotencyKeys();

  constructor(private readonly host: Host) {}

  /** The Express handler of `route`. */
  handlerOf(route: RouteDef): (req: Request, res: Response) => Promise<void> {
    const writes = route.writes ?? (route.method !== 'GET' && route.method !== 'OPTIONS');
    const singleParams = (route.query ?? []).filter((q) => !q.repeated && !q.name.startsWith('<')).map((q) => q.name);
    return async (req, res) => {
      const user = await this.authenticate(route, req);
      await this.authorize(route, writes, user);
      const call = callOf(req, res, user);
      const claim = this.claimIdempotencyKey(route, req, call);
      try {
        if (claim) {
          const stored = await this.idempotency.storedAnswer(this.host.db, claim, this.host.clock.now());
          if (stored) {
            res.setHeader(IDEMPOTENT_REPLAY_HEADER, 'true');
            send(req, res, stored);
            return;
          }
        }
        const outcome = await this.run(route, writes, singleParams, req, call, claim);
        this.answer(req, res, outcome);
      } finally {
        claim?.release();
      }
    };
  }

  /** The caller a token names; null without one, or when a public route is sent a bad one. */
  private async authenticate(route: RouteDef, req: Request): Promise<AuthUser | null> {
    if (req.headers.authorization === undefined) return null;
    const address = req.socket.remoteAddress ?? 'unknown';
    // An address that sent too many bad tokens is refused until its window passes.
    const wait = this.host.credentialThrottle.retryAfter('token', address);
    if (wait > 0) throw new TooManyRequests(wait);
    try {
      return await this.host.auth.authenticate(req.headers.authorization);
    } catch (err) {
      if (err instanceof AuthenticationFailed) this.host.credentialThrottle.fail('token', address);
      if (!('public' in route.access)) throw err;
      return null;
    }
  }

  /** Refuses a caller the route's access does not let in (a write needs a token that may write). */
  private async authorize(route: RouteDef, writes: boolean, user: AuthUser | null): Promise<void> {
    if ('public' in route.access) return;
    if (!user) throw new AuthenticationFailed('Authentication credentials were not provided.');
    if ('permission' in route.access) {
      const perms = await this.host.permissions.forUser(user);
      if (!perms.has(route.access.permission)) throw new PermissionDenied();
    }
    if (writes && !user.writeEnabled) throw new PermissionDenied('This token does not permit write operations.');
  }

  /** The request's key, claimed for its caller (a key is per caller: anonymous calls and reads never replay). */
  private claimIdempotencyKey(route: RouteDef, req: Request, call: Call): IdempotencyClaim | null {
    if (route.method === 'GET' || route.method === 'OPTIONS' || !call.user) return null;
    const key = readIdempotencyKey(req.headers['idempotency-key']);
    if (!key) return null;
    const branch = call.branchHeader;
    return this.idempotency.claim(
      call.user.id,
      key,
      fingerprintOf({
        method: req.method,
        pathAndQuery: call.url.pathname + call.url.search,
        branch: (Array.isArray(branch) ? branch[0] : branch) ?? null,
        body: req.body,
      }),
    );
  }

  /** The handler, with its input checked, inside one transaction when the route writes. */
  private async run(
    route: RouteDef,
    writes: boolean,
    singleParams: readonly string[],
    req: Request,
    call: Call,
    claim: IdempotencyClaim | null,
  ): Promise<Outcome> {
    const { host } = this;
    const { user, requestId, baseUrl, url, branchHeader } = call;
    const branch =
      branchHeader === undefined
        ? null
        : await resolveBranchHeader(createCtx({ host, user, requestId, baseUrl }), branchHeader);
    const query = parseQueryString(url.search);
    requireSingle(query, singleParams);
    const body =
      route.bulk && (route.bulk.kind !== 'create' || Array.isArray(req.body))
        ? parseBulkBody(route.bulk, req.body)
        : route.body
          ? validate(route.body, req.body ?? {})
          : req.body;
    const ctx = createCtx({ host, user, requestId, baseUrl, branch });
    const header = (name: string): string | undefined => {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    const input = { params: req.params as Record<string, string>, query, body, url, address: call.address, header };
    const respond = async (tx: Ctx): Promise<Outcome> => {
      if (claim && tx.inTransaction) {
        // Asked again inside the write's transaction: the same request sent to another
        // instance may have committed while this one waited for its turn to write.
        const stored = await this.idempotency.storedAnswer(tx.db, claim, host.clock.now());
        if (stored) return { answer: stored, replayed: true };
      }
      const result = await route.handler({ ...input, ctx: tx });
      if (result instanceof StreamReply) return result;
      const answer = answerOf(route, result);
      // Kept in the write's own transaction: remembered exactly when the write commits.
      if (claim && answer.status < 400) await this.idempotency.remember(tx.db, claim, answer, host.clock.now());
      return { answer, replayed: false };
    };
    return writes && route.transaction !== false ? inTransaction(ctx, respond) : respond(ctx);
  }

  /** Sends what the handler answered: its JSON text, or the stream it opened. */
  private answer(req: Request, res: Response, outcome: Outcome): void {
    if (outcome instanceof StreamReply) {
      this.streams.open(req, res, outcome);
      return;
    }
    if (outcome.replayed) res.setHeader(IDEMPOTENT_REPLAY_HEADER, 'true');
    send(req, res, outcome.answer);
  }
}

/** What the stages know of one call besides the route. */
interface Call {
  user: AuthUser | null;
  address: string;
  url: URL;
  baseUrl: string;
  requestId: string;
  branchHeader: string | string[] | undefined;
}

type Outcome = StreamReply | { answer: Answer; replayed: boolean };

function callOf(req: Request, res: Response, user: AuthUser | null): Call {
  const url = new URL(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
  return {
    user,
    address: req.socket.remoteAddress ?? 'unknown',
    url,
    baseUrl: `${url.protocol}//${url.host}`,
    requestId: res.locals.requestId as string,
    branchHeader: req.headers['x-netbox-branch'],
  };
}

/** A handler's result as it is sent: the status and the JSON text (null: no body). */
function answerOf(route: RouteDef, result: unknown): Answer {
  if (result instanceof Reply)
    return {
      status: result.status,
      text: result.body === undefined ? null : JSON.stringify(result.body),
      ...(result.headers ? { headers: result.headers } : {}),
    };
  return { status: route.status ?? 200, text: result === undefined ? null : JSON.stringify(result) };
}

/**
 * Sends an answer: its JSON text with the headers Express's `res.send` gives a JSON string
 * (Content-Type with its charset, Content-Length; no ETag but the handler's), written directly. A conditional
 * request (If-None-Match, If-Modified-Since) and a status without a body go through `res.send`,
 * which answers them as it always did.
 */
function send(req: Request, res: Response, answer: Answer): void {
  res.statusCode = answer.status;
  // An ETag of the handler's is the one a conditional request (If-None-Match) is judged by.
  for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
  if (answer.text === null) {
    res.end();
    return;
  }
  const headers = req.headers;
  if (
    headers['if-none-match'] !== undefined ||
    headers['if-modified-since'] !== undefined ||
    answer.status === 204 ||
    answer.status === 304
  ) {
    res.type('application/json').send(answer.text);
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(answer.text, 'utf8'));
  if (req.method === 'HEAD') res.end();
  else res.end(answer.text, 'utf8');
}

/** Open streams of one app, ended together when the service stops. */
export class OpenStreams {
  private readonly sinks = new Set<StreamSink>();
  private stopping = false;

  open(req: Request, res: Response, reply: StreamReply): void {
    res.status(200);
    res.setHeader('Content-Type', reply.contentType);
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    // Proxies must pass events through as they come.
    res.setHeader('X-Accel-Buffering', 'no');
    // The connection ends with the stream (a stop never waits on an idle kept-alive socket).
    res.setHeader('Connection', 'close');
    res.flushHeaders();
    req.socket.setNoDelay(true);
    let closed = false;
    const listeners: Array<() => void> = [];
    // Waiters for the next drain: one 'drain' listener for the stream's life, none added per wait.
    let waiting: Array<() => void> = [];
    const wake = (): void => {
      for (const resolve of waiting.splice(0)) resolve();
    };
    res.on('drain', wake);
    const sink: StreamSink = {
      write: (chunk) => (closed ? false : res.write(chunk)),
      drained: () =>
        new Promise<void>((resolve) => {
          if (closed || !res.writableNeedDrain) resolve();
          else waiting.push(resolve);
        }),
      get closed() {
        return closed;
      },
      onClose: (listener) => {
        if (closed) listener();
        else listeners.push(listener);
      },
      end: () => {
        if (!closed) res.end();
      },
    };
    res.once('close', () => {
      closed = true;
      res.off('drain', wake);
      wake();
      waiting = [];
      this.sinks.delete(sink);
      for (const listener of listeners.splice(0)) listener();
    });
    this.sinks.add(sink);
    if (this.stopping) {
      sink.end();
      return;
    }
    reply.start(sink);
  }

  endAll(): void {
    this.stopping = true;
    for (const sink of [...this.sinks]) sink.end();
  }
}
