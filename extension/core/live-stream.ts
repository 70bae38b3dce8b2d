// Following the service's event stream (`stream/`, Server-Sent Events): one connection, resumed
// with Last-Event-ID after a drop, reconnecting with backoff; events arriving together handed on
// as one batch; a `reset` (events were missed) handed on as such. While the stream is not open
// (the service has none, or it dropped), `onPoll` runs at an interval instead. And what each
// event means for what the extension shows. No VS Code here.
import type { StreamEvent } from '../../contract/api/change-control';
import { LIFECYCLE_EVENTS, type StreamEventType } from '../../contract/api/vocabulary';
import { asApiError } from './api-error';
import { Backoff } from './backoff';

// Loaded when the stream first opens (after connecting): its events are checked with the contract's schema.
const sse = () => require('./sse') as typeof import('./sse');

export const LIVE_STATES = ['stopped', 'connecting', 'open', 'polling'] as const;
export type LiveState = (typeof LIVE_STATES)[number];

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface LiveStreamOptions {
  /** Opens the stream (ApiClient.openStream); throws an ApiError when the service answers otherwise. */
  open(lastEventId: string | null, signal: AbortSignal): Promise<{ body: ReadableStream<Uint8Array> | null }>;
  onEvents(events: StreamEvent[]): void;
  /** Events were missed: reload everything shown. */
  onReset(): void;
  /** While the stream is not open: refresh what is shown. */
  onPoll(): void;
  onState?(state: LiveState, detail: string): void;
  log?(line: string): void;
  /** Reconnect delays: doubling from `baseMs` up to `maxMs` (defaults 1 s and 30 s). */
  baseMs?: number;
  maxMs?: number;
  /** Polling interval while the stream is not open (default 30 s). */
  pollMs?: number;
  /** A stream silent this long (no event, no keep-alive) is dropped and reopened (default 45 s). */
  idleMs?: number;
  /** When the service has no stream (404), how long until asking again (default 5 min). */
  unavailableRetryMs?: number;
  /** Events arriving within this window are handed on together (default 100 ms). */
  batchMs?: number;
  timers?: Timers;
}

export class LiveStream {
  private readonly timers: Timers;
  private readonly backoff: Backoff;
  private current: LiveState = 'stopped';
  private generation = 0;
  private abort: AbortController | null = null;
  private lastEventId: string | null = null;
  private serverRetryMs: number | null = null;
  private pollTimer: unknown = null;
  private batch: StreamEvent[] = [];
  private batchTimer: unknown = null;
  private wake: (() => void) | null = null;
  private wakeTimer: unknown = null;

  constructor(private readonly opts: LiveStreamOptions) {
    this.timers = opts.timers ?? realTimers;
    this.backoff = new Backoff(opts.baseMs ?? 1000, opts.maxMs ?? 30_000);
  }

  get state(): LiveState {
    return this.current;
  }

  /** The id to resume from (the last event received). */
  get resumeId(): string | null {
    return this.lastEventId;
  }

  /** Starts following (again, from the last event seen); a running loop is replaced. */
  start(): void {
    this.stop();
    const generation = ++this.generation;
    void this.loop(generation);
  }

  stop(): void {
    this.generation += 1;
    this.abort?.abort();
    this.abort = null;
    this.stopPolling();
    this.flush();
    if (this.wakeTimer !== null) this.timers.clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
    this.wake?.();
    this.wake = null;
    this.setState('stopped', 'stopped');
  }

  /** Forgets the position (another service or user: start from now). */
  forgetPosition(): void {
    this.lastEventId = null;
  }

  private setState(state: LiveState, detail: string): void {
    if (state === this.current) return;
    this.current = state;
    this.opts.onState?.(state, detail);
    if (state === 'open' || state === 'stopped') this.stopPolling();
    else if (state === 'polling') this.startPolling();
  }

  private startPolling(): void {
    if (this.pollTimer !== null) return;
    const tick = () => {
      this.pollTimer = this.timers.setTimeout(tick, this.opts.pollMs ?? 30_000);
      this.opts.onPoll();
    };
    this.pollTimer = this.timers.setTimeout(tick, this.opts.pollMs ?? 30_000);
  }

  private stopPolling(): void {
    if (this.pollTimer !== null) this.timers.clearTimeout(this.pollTimer);
    this.pollTimer = null;
  }

  private sleep(ms: number, generation: number): Promise<void> {
    if (generation !== this.generation) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.wakeTimer = this.timers.setTimeout(() => {
        this.wakeTimer = null;
        this.wake = null;
        resolve();
      }, ms);
    });
  }

  private async loop(generation: number): Promise<void> {
    let opened = false;
    while (generation === this.generation) {
      if (this.current !== 'polling') this.setState('connecting', 'connecting');
      const abort = new AbortController();
      this.abort = abort;
      let delay: number;
      try {
        const res = await this.opts.open(this.lastEventId, abort.signal);
        if (generation !== this.generation) {
          void res.body?.cancel().catch(() => undefined);
          return;
        }
        this.backoff.reset();
        this.setState('open', 'open');
        this.opts.log?.(`event stream open${this.lastEventId ? ` (resuming after event ${this.lastEventId})` : ''}`);
        // Reconnected with nothing to resume from: what happened meanwhile is unknown.
        if (opened && !this.lastEventId) this.reset();
        opened = true;
        await this.read(res.body, abort, generation);
        if (generation !== this.generation) return;
        this.opts.log?.('event stream ended; reconnecting');
        delay = Math.max(this.serverRetryMs ?? 0, this.backoff.next(true));
        this.setState('polling', 'the stream ended');
      } catch (e) {
        if (generation !== this.generation) return;
        const error = asApiError(e);
        if (error.kind === 'notFound' || error.status === 405 || error.status === 501) {
          delay = this.opts.unavailableRetryMs ?? 5 * 60_000;
          this.opts.log?.(`the service offers no event stream (${error.message}); polling instead`);
        } else {
          delay = Math.max(this.serverRetryMs ?? 0, this.backoff.next(false));
          this.opts.log?.(
            `event stream unavailable (${error.kind}: ${error.message}); retrying in ${Math.round(delay / 1000)} s, polling meanwhile`,
          );
        }
        this.setState('polling', error.message);
      } finally {
        if (this.abort === abort) this.abort = null;
      }
      await this.sleep(delay, generation);
    }
  }

  private async read(
    body: ReadableStream<Uint8Array> | null,
    abort: AbortController,
    generation: number,
  ): Promise<void> {
    if (!body) return;
    const { readStreamMessage, SseParser } = sse();
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    let idle: unknown = null;
    let silent = false;
    const idleMs = this.opts.idleMs ?? 45_000;
    const arm = () => {
      if (idle !== null) this.timers.clearTimeout(idle);
      idle = this.timers.setTimeout(() => {
        silent = true;
        abort.abort();
      }, idleMs);
    };
    arm();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || generation !== this.generation) break;
        arm();
        for (const message of parser.push(decoder.decode(value, { stream: true }))) {
          if (message.retry !== undefined) this.serverRetryMs = message.retry;
          if (message.lastEventId) this.lastEventId = message.lastEventId;
          const read = readStreamMessage(message);
          if (read.kind === 'event') this.enqueue(read.event);
          else if (read.kind === 'reset') this.reset();
          else this.opts.log?.(`event stream: ignored a message (${read.why})`);
        }
      }
    } catch (e) {
      if (generation !== this.generation) return;
      if (silent) {
        this.opts.log?.(`event stream silent for ${Math.round(idleMs / 1000)} s; reconnecting`);
        return;
      }
      throw e;
    } finally {
      if (idle !== null) this.timers.clearTimeout(idle);
      reader.cancel().catch(() => undefined);
    }
  }

  private enqueue(event: StreamEvent): void {
    this.batch.push(event);
    if (this.batchTimer === null)
      this.batchTimer = this.timers.setTimeout(() => this.flush(), this.opts.batchMs ?? 100);
  }

  private flush(): void {
    if (this.batchTimer !== null) this.timers.clearTimeout(this.batchTimer);
    this.batchTimer = null;
    const events = this.batch;
    this.batch = [];
    if (events.length) this.opts.onEvents(events);
  }

  private reset(): void {
    if (this.batchTimer !== null) this.timers.clearTimeout(this.batchTimer);
    this.batchTimer = null;
    this.batch = [];
    this.opts.onReset();
  }
}

// ---- what to refresh ---------------------------------------------------------------------

/** The parts of one change request the extension shows. */
export const REQUEST_PARTS = ['request', 'changes', 'comments', 'checks', 'reviews'] as const;
export type RequestPart = (typeof REQUEST_PARTS)[number];

export interface RefreshPlan {
  /** Every request shown: a freeze moved the gates of all the requests it applies to (`gate_changed` naming no request). */
  everything: boolean;
  /** The Change Requests and My Reviews lists. */
  lists: boolean;
  /** Per change request, the parts to reload. */
  requests: Map<number, Set<RequestPart>>;
}

const PARTS_OF_EVENT = {
  change_request_submitted: ['request', 'checks'],
  change_request_review_requested: ['request'],
  review_submitted: ['request', 'reviews'],
  change_request_approved: ['request', 'checks'],
  change_request_rejected: ['request'],
  change_request_completed: ['request', 'changes', 'checks'],
  change_request_created: ['request', 'checks'],
  change_request_updated: ['request'],
  change_request_deleted: ['request'],
  changes_updated: ['request', 'changes', 'comments', 'checks'],
  review_deleted: ['request', 'reviews'],
  comment_created: ['comments'],
  comment_updated: ['comments'],
  comment_deleted: ['comments'],
  check_updated: ['checks'],
  check_deleted: ['checks'],
  gate_changed: ['request', 'checks'],
} as const satisfies Record<StreamEventType, readonly RequestPart[]>;

/** Events that can move a request between the lists (status, gates, review waiting, merge state). */
const LIST_EVENTS: ReadonlySet<StreamEventType> = new Set<StreamEventType>([
  ...LIFECYCLE_EVENTS,
  'change_request_created',
  'change_request_updated',
  'change_request_deleted',
  'changes_updated',
  'review_deleted',
  'check_updated',
  'check_deleted',
  'gate_changed',
]);

/** What a batch of events asks to reload. */
export function planRefresh(events: readonly Pick<StreamEvent, 'event' | 'change_request'>[]): RefreshPlan {
  const plan: RefreshPlan = { everything: false, lists: false, requests: new Map() };
  for (const e of events) {
    if (LIST_EVENTS.has(e.event)) plan.lists = true;
    if (e.change_request === null) {
      plan.everything = true;
      continue;
    }
    const parts = plan.requests.get(e.change_request) ?? new Set<RequestPart>();
    for (const p of PARTS_OF_EVENT[e.event]) parts.add(p);
    plan.requests.set(e.change_request, parts);
  }
  return plan;
}
