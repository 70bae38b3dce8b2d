/**
 * Turns to write, for one process: at most `size` write transactions of the process do their
 * work at once; the others wait, in the order they asked, before they begin.
 *
 * On PostgreSQL every write transaction of every instance takes one lock (`db/database.ts`), so
 * the writes of a process run one after the other however many begin together. Without turns,
 * each began at once, sent its first statement and waited for the lock on a connection of its
 * own, holding what it had made so far; under a load of writes a transaction waited there for
 * most of its time, long enough for the young generation's collections to copy what it held and
 * promote it to the old generation. With two turns, one transaction writes and the next waits
 * for the lock with its first statement sent, so the lock passes on as soon as it is released;
 * the rest wait before they have made anything (docs/performance.md, "PostgreSQL: the write lock passed on before the flush, turns to write…").
 *
 * A turn ends when its transaction has done its work (what is left is the COMMIT or ROLLBACK,
 * sent at once), so that the next one begins while the database commits. Background work
 * (timers, deliveries) takes turns as requests do.
 */
export class WriteTurns {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`write turns must be a positive integer, not ${size}`);
    this.#free = size;
  }

  /** How many transactions wait for a turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Waits for a turn; answers the function that ends it (its later calls do nothing). */
  async take(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}
