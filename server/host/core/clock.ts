/** A timer set with `Clock.at`: cancelled before it fires, it never fires. */
export interface ClockTimer {
  cancel(): void;
}

/** The source of time. Injected everywhere so tests control it. */
export interface Clock {
  now(): Date;
  /**
   * Calls `fn` once the clock reaches `instant` (at once when it has already): the one way the
   * service waits for a moment in time, so a test moving a manual clock moves the timers too.
   */
  at(instant: Date, fn: () => void): ClockTimer;
}

/** setTimeout's longest delay (about 24.8 days); a later instant is waited for in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => new Date(),
  at(instant, fn) {
    let timer: NodeJS.Timeout | undefined;
    let cancelled = false;
    const wait = (): void => {
      const delay = instant.getTime() - Date.now();
      if (delay <= 0) {
        fn();
        return;
      }
      timer = setTimeout(() => !cancelled && wait(), Math.min(delay, MAX_DELAY_MS));
      // A timer never keeps the process alive: the service's server does while it runs.
      timer.unref();
    };
    wait();
    return {
      cancel() {
        cancelled = true;
        if (timer) clearTimeout(timer);
      },
    };
  },
};

/** A clock that only moves when told to; its timers fire as it passes their instants, in order. */
export class ManualClock implements Clock {
  private current: number;
  private readonly timers = new Set<{ at: number; fn: () => void; seq: number }>();
  private seq = 0;
  constructor(start: Date | string = '2026-01-01T00:00:00Z') {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  at(instant: Date, fn: () => void): ClockTimer {
    const timer = { at: instant.getTime(), fn, seq: this.seq++ };
    if (timer.at <= this.current) {
      fn();
      return { cancel: () => {} };
    }
    this.timers.add(timer);
    return { cancel: () => void this.timers.delete(timer) };
  }
  /** How many timers wait (for tests that a component keeps one timer, not one per object). */
  get pendingTimers(): number {
    return this.timers.size;
  }
  /** The instants the waiting timers are set for, earliest first. */
  timerInstants(): Date[] {
    return [...this.timers].sort((a, b) => a.at - b.at || a.seq - b.seq).map((t) => new Date(t.at));
  }
  set(to: Date | string): void {
    this.current = new Date(to).getTime();
    this.fireDue();
  }
  advance(ms: number): void {
    this.current += ms;
    this.fireDue();
  }
  advanceDays(days: number): void {
    this.advance(days * 86_400_000);
  }
  private fireDue(): void {
    const due = [...this.timers].filter((t) => t.at <= this.current).sort((a, b) => a.at - b.at || a.seq - b.seq);
    for (const t of due) {
      this.timers.delete(t);
      t.fn();
    }
  }
}
