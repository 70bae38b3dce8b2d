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
  /** Called after a commit that wrote new rows (never inside the transaction). */
  notify(): void;
  /** Calls `listener` on every notification; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

export class LocalCommitSignal implements CommitSignal {
  private readonly listeners = new Set<() => void>();

  notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
