// Polling delays: the base interval while things work, doubling on each failure up to a ceiling.
export class Backoff {
  private failures = 0;

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  /** The delay before the next attempt, after an attempt that succeeded or failed. */
  next(succeeded: boolean): number {
    this.failures = succeeded ? 0 : this.failures + 1;
    return Math.min(this.maxMs, this.baseMs * 2 ** this.failures);
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  reset(): void {
    this.failures = 0;
  }
}
