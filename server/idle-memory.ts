import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * How long the service must have begun no request, after serving some, before it returns
 * memory to the system: between one and two of these after the last request.
 */
export const IDLE_MEMORY_MS = 10_000;

/**
 * Gives memory back once the service has gone idle after serving requests (docs/performance.md,
 * "Memory given back when idle"). Under load the JavaScript heap holds the garbage of the last
 * requests and the pages V8 committed for it (20 to 40 MB over what the service keeps), and V8
 * does not collect it while nothing allocates: left alone, a service idle after a burst keeps
 * its peak for good. Once no request has begun for `idleMs` since the last look, and requests
 * were served since the last time, `reclaim` runs once (one full collection: 63 ms measured on the
 * service's heap after a burst); then it waits for requests again. A service that keeps serving never runs it.
 *
 * Counting is one increment per request (`noteRequest`, from the HTTP server's `request` event);
 * event streams held open count once, when they begin.
 */
export class IdleMemory {
  private begun = 0;
  private begunAtLastLook = 0;
  private begunAtLastReclaim = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly reclaim: () => void,
    private readonly idleMs: number = IDLE_MEMORY_MS,
  ) {}

  /** A request has begun. */
  noteRequest(): void {
    this.begun++;
  }

  /**
   * One look (the timer's, every `idleMs`): reclaims when requests were served since the last
   * reclaim and none has begun since the last look. Returns whether it reclaimed.
   */
  look(): boolean {
    const begun = this.begun;
    const quiet = begun === this.begunAtLastLook;
    this.begunAtLastLook = begun;
    if (!quiet || begun === this.begunAtLastReclaim) return false;
    this.begunAtLastReclaim = begun;
    this.reclaim();
    return true;
  }

  start(): void {
    this.timer ??= setInterval(() => this.look(), this.idleMs);
    // Never what keeps the process alive.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * V8's full garbage collection, for this module alone: `--expose-gc` is turned on just long
 * enough to create one context that has the `gc` function, then off again, so the service's
 * global object and every later context stay without it. A forced full collection also
 * compacts and releases the pages it emptied. `null` where the engine does not offer it (the
 * reclaim is then skipped). When the service was started with `--expose-gc`, that `gc` is used.
 */
export function fullCollection(): (() => void) | null {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return () => (exposed as () => void)();
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? () => (gc as () => void)() : null;
  } catch {
    return null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
