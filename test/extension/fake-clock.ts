// A manual clock for the extension's timers (core/live-stream.ts `Timers`): time moves only when a
// test says so, and the promises that a timer's work starts settle before `advance` returns.
import type { Timers } from '../../extension/core/live-stream';

interface Pending {
  id: number;
  at: number;
  fn: () => void;
}

/** Lets promise chains (and the I/O-free work they start) run to their end. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise<void>((r) => setImmediate(r));
}

export class FakeClock implements Timers {
  now = 0;
  private next = 1;
  private pending: Pending[] = [];

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.push({ id, at: this.now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((p) => p.id !== handle);
  }

  /** The delays of the timers waiting now, from now. */
  get waiting(): number[] {
    return this.pending.map((p) => p.at - this.now).sort((a, b) => a - b);
  }

  /** Moves time on by `ms`, running each timer that falls due in order (and what it starts). */
  async advance(ms: number): Promise<void> {
    const end = this.now + ms;
    await settle();
    for (;;) {
      const due = this.pending.filter((p) => p.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.pending = this.pending.filter((p) => p !== due);
      this.now = due.at;
      due.fn();
      await settle();
    }
    this.now = end;
  }
}
