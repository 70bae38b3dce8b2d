import { request, type IncomingMessage } from 'node:http';

/** One Server-Sent Event as received. */
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
  /** `data` parsed as JSON. */
  json: any;
}

export interface OpenStreamOptions {
  token?: string | null;
  /** Query string, e.g. `?change_request=3`. */
  query?: string;
  lastEventId?: string;
  headers?: Record<string, string>;
}

/**
 * A real HTTP client of an event stream: it reads the answer as it arrives and parses the
 * Server-Sent Events in it. `open` resolves once the service has registered the stream (its
 * first comment arrived), so anything committed afterwards reaches it.
 */
export class SseStream {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  ended = false;
  private read = 0;
  private buffer = '';
  private waiters: Array<() => void> = [];

  private constructor(
    readonly status: number,
    readonly headers: IncomingMessage['headers'],
    private readonly response: IncomingMessage,
  ) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.take(chunk));
    response.on('end', () => this.finish());
    response.on('close', () => this.finish());
    response.on('error', () => this.finish());
  }

  /** Opens `GET url` and resolves with the stream (status 200) or with the refusal (`body` parsed). */
  static open(url: string, options: OpenStreamOptions = {}): Promise<SseStream & { body?: any }> {
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...(options.headers ?? {}) };
    if (options.token) headers.Authorization = `Token ${options.token}`;
    if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
    return new Promise((resolve, reject) => {
      const req = request(`${url}${options.query ?? ''}`, { headers }, (res) => {
        const stream = new SseStream(res.statusCode ?? 0, res.headers, res);
        if (stream.status !== 200) {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(Object.assign(stream, { body: text ? JSON.parse(text) : undefined })));
          return;
        }
        stream.until(() => stream.comments.length > 0).then(() => resolve(stream), reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** The next event not yet taken (waits for it). */
  async next(): Promise<SseEvent> {
    await this.until(() => this.events.length > this.read || this.ended);
    if (this.events.length <= this.read)
      throw new Error(`the stream ended; events so far: ${JSON.stringify(this.events.map((e) => e.event))}`);
    return this.events[this.read++]!;
  }

  /** Takes events until one matches; returns those taken, the matching one last. */
  async nextUntil(match: (e: SseEvent) => boolean): Promise<SseEvent[]> {
    const taken: SseEvent[] = [];
    for (;;) {
      const e = await this.next();
      taken.push(e);
      if (match(e)) return taken;
    }
  }

  /** Resolves once the condition holds (checked after each chunk), or the stream ended. */
  until(condition: () => boolean): Promise<void> {
    if (condition() || this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (condition() || this.ended) resolve();
        else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  /** Resolves when the service ends the stream. */
  closedByServer(): Promise<void> {
    return this.until(() => false);
  }

  close(): void {
    this.response.destroy();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      this.parse(block);
    }
    this.notify();
  }

  private parse(block: string): void {
    let id: string | null = null;
    let event = 'message';
    const data: string[] = [];
    let fields = 0;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      fields++;
      if (name === 'id') id = value;
      else if (name === 'event') event = value;
      else if (name === 'data') data.push(value);
    }
    if (fields === 0) return;
    const text = data.join('\n');
    this.events.push({ id, event, data: text, json: text ? JSON.parse(text) : undefined });
  }

  private finish(): void {
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    const waiting = this.waiters.splice(0);
    for (const check of waiting) check();
  }
}
