import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Decides the status answered to the `index`-th request (0-based). */
export type Responder = (request: ReceivedRequest, index: number) => number;

/**
 * A local webhook receiver on 127.0.0.1 (an ephemeral port unless one is given): it records
 * every request and answers with the status its responder picks (200 by default).
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  /** Milliseconds to wait before answering (a slow receiver). */
  delayMs = 0;
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
    public respond: Responder,
  ) {}

  static async start(respond: Responder = () => 200, port = 0): Promise<Receiver> {
    let receiver: Receiver | undefined = undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const request: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const r = receiver!;
        const status = r.respond(request, r.requests.length);
        r.requests.push(request);
        for (const wake of r.waiters.splice(0)) wake();
        setTimeout(() => {
          res.statusCode = status;
          res.end(status >= 400 ? 'receiver refuses' : 'ok');
        }, r.delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    receiver = new Receiver(server, (server.address() as AddressInfo).port, respond);
    return receiver;
  }

  /** The receiver's URL with `path`. */
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 5000): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver: expected ${count} request(s), got ${this.requests.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.requests.slice(0, count);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
