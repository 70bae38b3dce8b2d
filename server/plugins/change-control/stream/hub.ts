import { STREAM_RESET, type StreamEvent, type StreamEventType } from '../../../../contract/api/change-control';
import { type CommitSignal, createCtx, type AuthUser, type Ctx, type Host, type StreamSink } from '../../../host';
import { ccDb } from '../db/database';
import type { StreamEventRow } from '../db/tables';
import { eventsAfter, FREEZE_SCOPE } from './stream-repository';
import { visibleRequestIds } from '../change-requests/visibility-repository';
import { mayReceive, SubjectCache } from './visibility';

/** A comment line this often keeps proxies and clients from timing the stream out. */
export const KEEP_ALIVE_MS = 15_000;
/** Events read per query while a stream catches up. */
const BATCH = 500;
/** Open streams one user may have at once (each holds a connection and reads on every commit). */
export const MAX_STREAMS_PER_USER = 10;
/** What a refused stream is told to wait (seconds): a client that lost its stream usually finds it closed by then. */
export const STREAM_RETRY_AFTER_S = 15;
/** A place reserved for a stream that never opened (the service stopping) is given back after this. */
const UNOPENED_SLOT_MS = 10_000;

/** A place among a user's open streams, taken when the stream is asked for and given back when it closes. */
export interface StreamSlot {
  release(): void;
  /** The stream opened: the place is given back when it closes, not before. */
  opened(): void;
}

/** One event as Server-Sent Events lines. */
export function eventFrame(row: StreamEventRow): string {
  const data: StreamEvent = {
    id: row.id,
    event: row.event as StreamEventType,
    time: row.time,
    change_request: row.change_request_id === FREEZE_SCOPE ? null : row.change_request_id,
    object_type: row.object_type,
    object_id: row.object_id,
  };
  return `id: ${row.id}\nevent: ${row.event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The event telling a client it missed events (reload everything); its id is where the stream goes on from. */
export function resetFrame(position: number): string {
  return `id: ${position}\nevent: ${STREAM_RESET}\ndata: {}\n\n`;
}

export interface StreamRequest {
  /** The caller's `Authorization` header: the stream checks it again as it goes (a revoked token ends it). */
  authorization: string;
  user: AuthUser;
  baseUrl: string;
  requestId: string;
  /** Send the events after this id. */
  after: number;
  /** The id asked for is no longer kept: say `reset` first. */
  reset: boolean;
  /** Only events of these change requests (null: all the caller may see). */
  changeRequests: number[] | null;
  /** The place the stream holds among its user's (`StreamHub.reserve`). */
  slot?: StreamSlot;
}

/**
 * The open streams of one service instance. Each stream reads the stored events from its own
 * position (a few queries to catch up after a resume, one per commit signal afterwards),
 * decides per event whether its caller may see it, and writes it; a slow client is waited for,
 * never buffered without bound. The commit signal only wakes streams: where the events come
 * from is the table, so another signal (PostgreSQL LISTEN/NOTIFY) changes nothing here. The hub
 * listens to it while a stream is open (on PostgreSQL an instance without streams is not woken
 * by every commit of every instance).
 */
export class StreamHub {
  keepAliveMs = KEEP_ALIVE_MS;
  private readonly streams = new Set<OpenStream>();
  private cache = new SubjectCache();
  private unsubscribe: (() => void) | null = null;
  /** Streams per user, open or about to open. */
  private readonly perUser = new Map<number, number>();

  constructor(
    readonly host: Host,
    private readonly signal: CommitSignal,
  ) {}

  /** How many streams are open. */
  get size(): number {
    return this.streams.size;
  }

  /** New events committed: every stream reads on (objects are judged afresh from here on). */
  wake(): void {
    this.cache = new SubjectCache();
    for (const stream of this.streams) void this.host.unawaited.run(stream.pump());
  }

  subjects(): SubjectCache {
    return this.cache;
  }

  /**
   * Takes a place for one more stream of this user, or null when they hold MAX_STREAMS_PER_USER
   * already. Taken when the stream is asked for (so requests arriving together cannot all pass),
   * given back when it closes, or after UNOPENED_SLOT_MS if it never opened.
   */
  reserve(userId: number): StreamSlot | null {
    const held = this.perUser.get(userId) ?? 0;
    if (held >= MAX_STREAMS_PER_USER) return null;
    this.perUser.set(userId, held + 1);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      const left = (this.perUser.get(userId) ?? 1) - 1;
      if (left > 0) this.perUser.set(userId, left);
      else this.perUser.delete(userId);
    };
    const timer = setTimeout(release, UNOPENED_SLOT_MS);
    timer.unref();
    return { release, opened: () => clearTimeout(timer) };
  }

  open(request: StreamRequest, sink: StreamSink): void {
    request.slot?.opened();
    sink.onClose(() => request.slot?.release());
    const stream = new OpenStream(this, request, sink);
    if (!this.unsubscribe) {
      // Commits were not heard while no stream was open: what the cache holds may be stale.
      this.cache = new SubjectCache();
      this.unsubscribe = this.signal.subscribe(() => this.wake());
    }
    this.streams.add(stream);
    sink.onClose(() => {
      this.streams.delete(stream);
      stream.stop();
      if (this.streams.size === 0 && this.unsubscribe) {
        this.unsubscribe();
        this.unsubscribe = null;
      }
    });
    stream.start();
  }
}

class OpenStream {
  private cursor: number;
  private pumping = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly ctx: Ctx;

  constructor(
    private readonly hub: StreamHub,
    private readonly request: StreamRequest,
    private readonly sink: StreamSink,
  ) {
    this.cursor = request.after;
    this.ctx = this.ctxOf(request.user);
  }

  private ctxOf(user: AuthUser): Ctx {
    return createCtx({ host: this.hub.host, user, requestId: this.request.requestId, baseUrl: this.request.baseUrl });
  }

  start(): void {
    this.sink.write(': connected\n\n');
    if (this.request.reset) this.sink.write(resetFrame(this.request.after));
    this.timer = setInterval(() => void this.hub.host.unawaited.run(this.keepAlive()), this.hub.keepAliveMs);
    this.timer.unref();
    void this.hub.host.unawaited.run(this.pump());
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async keepAlive(): Promise<void> {
    if (await this.caller()) this.sink.write(': keep-alive\n\n');
  }

  /** The caller as the token says now; a token no longer valid (revoked, expired, user disabled) ends the stream. */
  private async caller(): Promise<AuthUser | null> {
    let user: AuthUser | null;
    try {
      user = await this.hub.host.auth.authenticate(this.request.authorization);
    } catch {
      user = null;
    }
    if (!user) this.sink.end();
    return user;
  }

  /** Sends what was committed since the cursor; a wake-up while sending makes it read again. */
  async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        await this.sendPending();
      } while (this.again && !this.sink.closed);
    } catch (err) {
      this.hub.host.log.error(`event stream: ${(err as Error).stack ?? String(err)}`);
      this.sink.end();
    } finally {
      this.pumping = false;
    }
  }

  private async sendPending(): Promise<void> {
    for (;;) {
      if (this.sink.closed) return;
      // The caller as the token says now (a revoked token ends the stream), whose permissions decide.
      const user = await this.caller();
      if (!user) return;
      const ctx = user === this.request.user ? this.ctx : this.ctxOf(user);
      // Events of requests the caller may not view are skipped by the database, however many.
      const rows = await eventsAfter(
        ccDb(ctx),
        this.cursor,
        BATCH,
        this.request.changeRequests,
        await visibleRequestIds(ctx),
      );
      if (rows.length === 0) return;
      const perms = await this.hub.host.permissions.forUser(user);
      const cache = this.hub.subjects();
      for (const row of rows) {
        if (this.sink.closed) return;
        if (await mayReceive(ctx, perms, user, row, cache, this.request.changeRequests)) {
          if (!this.sink.write(eventFrame(row))) await this.sink.drained();
        }
        this.cursor = row.id;
      }
      if (rows.length < BATCH) return;
    }
  }
}
