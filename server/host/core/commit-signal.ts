import type { Queryable } from '../db/database';
/**
 * "New rows were committed to a shared table": what a writer says after its transaction
 * commits, and what readers of that table (event streams) wait for. Readers never trust the
 * signal for content: they read the table from their own position, so a lost or doubled
 * signal costs a query, never an event.
 *
 * One service instance: `LocalCommitSignal`, an in-memory fan-out. Several instances sharing
 * one PostgreSQL database: `commitSignal` (`db/commit-signals.ts`) sends `NOTIFY <channel>`
 * after the commit and keeps one `LISTEN <channel>` connection per instance calling the local
 * listeners; nothing else changes.
 */
export interface CommitSignal {
  /**
   * Called after a commit that wrote new rows (never inside the transaction); resolves once
   * other instances are told (the writer answers after that, so nothing it set off outlives it).
   */
  notify(): Promise<void>;
  /**
   * Called inside the transaction that writes new rows, instead of `notify` after it: the signal
   * goes out once the transaction has committed, and not at all when it does not.
   */
  notifyOnCommit(trx: Queryable, afterCommit: (task: () => Promise<void>) => void): Promise<void>;
  /**
   * Calls `listener` on every notification; returns the unsubscribe function. On PostgreSQL the
   * instance listens (`LISTEN`) while it has listeners, and calls them once when it starts to
   * (they may have missed a commit before).
   */
  subscribe(listener: () => void): () => void;
}

export class LocalCommitSignal implements CommitSignal {
  private readonly listeners = new Set<() => void>();

  async notify(): Promise<void> {
    this.wakeListeners();
  }

  /** Calls every listener now. */
  wakeListeners(): void {
    for (const listener of [...this.listeners]) listener();
  }

  async notifyOnCommit(_trx: Queryable, afterCommit: (task: () => Promise<void>) => void): Promise<void> {
    afterCommit(() => this.notify());
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** How many listeners are subscribed. */
  get size(): number {
    return this.listeners.size;
  }
}
