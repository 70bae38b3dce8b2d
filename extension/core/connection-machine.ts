// The connection's decisions, as a state machine over injected work and timers (no VS Code here):
// when to connect, what an attempt's outcome makes the state, when to try again (with backoff,
// from any state the service can heal from: unreachable, failing, the bundled service not
// started or stopped), and how a connected service is watched (its event stream; a cheap probe
// of `GET /api/status/` when the stream is not open or a call failed as if it were gone).
//
// Times: a service that goes away is told within `probeIntervalMs` (+ the probe's own timeout)
// when nothing else says so, at once when the stream or a call drops; a service that comes back
// is reconnected within `retryMaxMs` (+ the attempt).
import type { CurrentUser } from '../../contract/api/host';
import type { ApiError } from './api-error';
import { Backoff } from './backoff';
import type { ConnectionState, FailedProblem, OfflineProblem } from './connection-state';
import type { Timers } from './live-stream';

/** What one attempt to connect came to. */
export type AttemptOutcome =
  | { kind: 'connected'; serviceUrl: string; bundled: boolean; user: CurrentUser }
  | { kind: 'signedOut'; serviceUrl: string | null; bundled: boolean }
  | { kind: 'failed'; problem: FailedProblem; serviceUrl: string | null; bundled: boolean; message: string }
  | { kind: 'offline'; problem: OfflineProblem; serviceUrl: string | null; bundled: boolean; message: string };

/** What the probe found: the service answers, or why not. */
export type ProbeResult = { ok: true } | { ok: false; problem: OfflineProblem; message: string };

export interface ConnectionMachineOptions {
  /**
   * Connects once (start the bundled service if needed, read the token, ask who the user is).
   * `progress` tells what it is doing; the machine shows it only on a first attempt (a retry
   * keeps showing the connection as offline).
   */
  attempt(
    progress: (state: Extract<ConnectionState, { phase: 'starting' | 'connecting' }>) => void,
  ): Promise<AttemptOutcome>;
  /** Asks the connected service whether it still answers (cheap, bounded in time). */
  probe(serviceUrl: string): Promise<ProbeResult>;
  onState(state: ConnectionState): void;
  log?(line: string): void;
  timers?: Timers;
  /** Delay of the first retry, doubling up to `retryMaxMs` (defaults 1 s and 3 s). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** While connected and the event stream is not open: a probe this often (default 3 s). */
  probeIntervalMs?: number;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** How a failed call to the service reads for the connection: offline (it heals by itself), failed (the user must act), or neither (an answer about the call itself). */
export function problemOfError(error: Pick<ApiError, 'kind'>): OfflineProblem | FailedProblem | null {
  switch (error.kind) {
    case 'unreachable':
      return 'unreachable';
    case 'server':
    case 'badResponse':
      return 'serverError';
    case 'badCredentials':
    case 'signedOut':
      return 'tokenRefused';
    default:
      return null;
  }
}

/** Whether a failed call suggests the service went away (worth a probe at once). */
export function suggestsGone(error: Pick<ApiError, 'kind'>): boolean {
  return error.kind === 'unreachable' || error.kind === 'server';
}

export class ConnectionMachine {
  private current: ConnectionState = { phase: 'signedOut', serviceUrl: null, bundled: false };
  private readonly timers: Timers;
  private readonly backoff: Backoff;
  private generation = 0;
  private running: Promise<void> | null = null;
  private retryTimer: unknown = null;
  private probeTimer: unknown = null;
  private probing = false;
  private streamOpen = false;
  private disposed = false;

  constructor(private readonly opts: ConnectionMachineOptions) {
    this.timers = opts.timers ?? realTimers;
    this.backoff = new Backoff(opts.retryBaseMs ?? 1000, opts.retryMaxMs ?? 3000);
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** The attempt under way, if any (resolves when it has ended, whatever its outcome). */
  get attempt(): Promise<void> | null {
    return this.running;
  }

  /** Connects afresh (start, settings changed, signed in, Retry): any waiting retry is dropped. */
  connect(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.cancelRetry();
    this.backoff.reset();
    return this.run(this.current.phase !== 'offline');
  }

  /** Signed out: nothing is retried or watched until the next connect(). */
  signedOut(serviceUrl: string | null, bundled: boolean): void {
    this.generation += 1;
    this.running = null;
    this.cancelRetry();
    this.stopWatching();
    this.set({ phase: 'signedOut', serviceUrl, bundled });
  }

  /** The event stream opened or closed (closed while connected: the service is asked at once). */
  streamChanged(open: boolean): void {
    const was = this.streamOpen;
    this.streamOpen = open;
    if (this.current.phase !== 'connected') return;
    if (open) {
      this.cancelProbe();
      return;
    }
    if (was) void this.probeNow();
    else if (this.probeTimer === null && !this.probing) this.scheduleProbe();
  }

  /** A call to the service failed: when it looks as if the service went away, ask it at once. */
  callFailed(error: Pick<ApiError, 'kind'>): void {
    if (this.current.phase === 'connected' && suggestsGone(error)) void this.probeNow();
  }

  /** The bundled service stopped by itself: offline, and it is started again with backoff. */
  serviceStopped(message: string): void {
    this.generation += 1;
    this.running = null;
    this.goOffline({ kind: 'offline', problem: 'serviceFailed', serviceUrl: null, bundled: true, message });
  }

  dispose(): void {
    this.disposed = true;
    this.generation += 1;
    this.cancelRetry();
    this.stopWatching();
  }

  // ---------------------------------------------------------------- attempts

  private run(showProgress: boolean): Promise<void> {
    const generation = ++this.generation;
    const work = (async () => {
      let outcome: AttemptOutcome;
      try {
        outcome = await this.opts.attempt((state) => {
          if (showProgress && generation === this.generation) this.set(state);
        });
      } catch (e) {
        outcome = {
          kind: 'offline',
          problem: 'serverError',
          serviceUrl: null,
          bundled: false,
          message: (e as Error).message,
        };
      }
      if (generation !== this.generation || this.disposed) return;
      this.apply(outcome);
    })();
    const tracked = work.finally(() => {
      if (this.running === tracked) this.running = null;
    });
    this.running = tracked;
    return tracked;
  }

  private apply(outcome: AttemptOutcome): void {
    switch (outcome.kind) {
      case 'connected':
        this.backoff.reset();
        this.set({ phase: 'connected', serviceUrl: outcome.serviceUrl, bundled: outcome.bundled, user: outcome.user });
        this.startWatching();
        return;
      case 'signedOut':
        this.stopWatching();
        this.set({ phase: 'signedOut', serviceUrl: outcome.serviceUrl, bundled: outcome.bundled });
        return;
      case 'failed':
        this.stopWatching();
        this.set({
          phase: 'failed',
          serviceUrl: outcome.serviceUrl,
          bundled: outcome.bundled,
          problem: outcome.problem,
          message: outcome.message,
        });
        return;
      case 'offline':
        this.goOffline(outcome);
        return;
    }
  }

  private goOffline(outcome: Extract<AttemptOutcome, { kind: 'offline' }>): void {
    this.stopWatching();
    const before = this.current;
    const user = before.phase === 'connected' ? before.user : before.phase === 'offline' ? before.user : null;
    this.set({
      phase: 'offline',
      serviceUrl: outcome.serviceUrl,
      bundled: outcome.bundled,
      problem: outcome.problem,
      message: outcome.message,
      user,
    });
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    this.cancelRetry();
    if (this.disposed) return;
    const delay = this.backoff.next(false);
    this.opts.log?.(`reconnecting in ${(delay / 1000).toFixed(1)} s`);
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = null;
      void this.run(false);
    }, delay);
  }

  private cancelRetry(): void {
    if (this.retryTimer !== null) this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  // ---------------------------------------------------------------- watching a connected service

  private startWatching(): void {
    this.cancelProbe();
    if (!this.streamOpen) this.scheduleProbe();
  }

  private stopWatching(): void {
    this.cancelProbe();
  }

  private scheduleProbe(): void {
    this.cancelProbe();
    if (this.disposed || this.current.phase !== 'connected') return;
    this.probeTimer = this.timers.setTimeout(() => {
      this.probeTimer = null;
      void this.probeNow();
    }, this.opts.probeIntervalMs ?? 3000);
  }

  private cancelProbe(): void {
    if (this.probeTimer !== null) this.timers.clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  private async probeNow(): Promise<void> {
    const state = this.current;
    if (state.phase !== 'connected' || this.probing) return;
    this.cancelProbe();
    this.probing = true;
    const generation = this.generation;
    let result: ProbeResult;
    try {
      result = await this.opts.probe(state.serviceUrl);
    } catch (e) {
      result = { ok: false, problem: 'unreachable', message: (e as Error).message };
    } finally {
      this.probing = false;
    }
    if (generation !== this.generation || this.current !== state || this.disposed) return;
    if (result.ok) {
      if (!this.streamOpen) this.scheduleProbe();
      return;
    }
    this.opts.log?.(`the service does not answer (${result.message})`);
    this.goOffline({
      kind: 'offline',
      problem: result.problem,
      serviceUrl: state.serviceUrl,
      bundled: state.bundled,
      message: result.message,
    });
  }

  private set(state: ConnectionState): void {
    if (sameState(this.current, state)) return;
    this.current = state;
    this.opts.onState(state);
  }
}

/** Whether two states show the same (a retry that fails as the last one did changes nothing). */
export function sameState(a: ConnectionState, b: ConnectionState): boolean {
  if (a.phase !== b.phase) return false;
  const ua = 'user' in a ? (a.user?.id ?? null) : null;
  const ub = 'user' in b ? (b.user?.id ?? null) : null;
  return (
    ua === ub &&
    ('serviceUrl' in a ? a.serviceUrl : null) === ('serviceUrl' in b ? b.serviceUrl : null) &&
    ('problem' in a ? a.problem : null) === ('problem' in b ? b.problem : null) &&
    ('message' in a ? a.message : null) === ('message' in b ? b.message : null)
  );
}
