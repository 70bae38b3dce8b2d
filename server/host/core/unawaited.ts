/**
 * Work the service sets off without awaiting it: what a background task starts (a timer's
 * round, a delivery), what a commit wakes (the gate's clock, the outbox, the event streams).
 * Every such launch goes through `run`, so a stop can drain it and a test can wait until
 * nothing runs before it counts what a request does.
 */
export class UnawaitedWork {
  private readonly running = new Set<Promise<unknown>>();

  /** Starts `work` (its failure is the caller's to handle: a rejection is kept, not thrown here). */
  run<T>(work: Promise<T>): Promise<T> {
    const tracked = work.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
    // Settled by `settled()` or the caller; never an unhandled rejection of its own.
    tracked.catch(() => undefined);
    return tracked;
  }

  /** How many pieces of work are running. */
  get size(): number {
    return this.running.size;
  }

  /** Resolves once nothing runs, work set off meanwhile by running work included. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
