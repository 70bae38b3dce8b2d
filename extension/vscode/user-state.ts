// What the extension keeps for the signed-in user in VS Code's global state, per service and
// user: pending reviews (drafts survive a reload) and "viewed" marks of changed objects.
import * as vscode from 'vscode';
import { pendingStorageKey, readPendingReviews, type PendingReview, type PendingReviews } from '../core/pending-review';
import { viewedStorageKey, type ViewedMarks } from '../core/viewed';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

export class UserState extends DisposableBase {
  private readonly pendingChanged = this._register(new vscode.EventEmitter<number | undefined>());
  /** A request's pending review changed (undefined: all may have, e.g. another user). */
  readonly onDidChangePending = this.pendingChanged.event;
  private readonly viewedChanged = this._register(new vscode.EventEmitter<number | undefined>());
  readonly onDidChangeViewed = this.viewedChanged.event;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly connection: Connection,
    private readonly memento: vscode.Memento,
  ) {
    super();
    this._register(
      connection.onDidChange(() => {
        this.pendingChanged.fire(undefined);
        this.viewedChanged.fire(undefined);
      }),
    );
  }

  /** The service (the bundled one is one service whatever its port) and the user, when connected or offline after it. */
  private identity(): { service: string; userId: number } | null {
    const state = this.connection.state;
    if (state.phase === 'connected')
      return { service: state.bundled ? 'bundled' : state.serviceUrl, userId: state.user.id };
    // Offline, drafts stay readable and writable: they are kept here until Submit Review.
    if (state.phase === 'offline' && state.user && (state.bundled || state.serviceUrl))
      return { service: state.bundled ? 'bundled' : state.serviceUrl!, userId: state.user.id };
    return null;
  }

  pendingReviews(): PendingReviews {
    const who = this.identity();
    return who ? readPendingReviews(this.memento.get(pendingStorageKey(who.service, who.userId))) : {};
  }

  pendingReview(changeRequestId: number): PendingReview | undefined {
    return this.pendingReviews()[changeRequestId];
  }

  /** Changes the pending reviews; writes are serialised so that none is lost. */
  updatePending(changeRequestId: number, fn: (all: PendingReviews) => PendingReviews): Promise<void> {
    const who = this.identity();
    if (!who) return Promise.reject(new Error('Not connected to the Change Control service.'));
    const key = pendingStorageKey(who.service, who.userId);
    const write = this.writes.then(async () => {
      await this.memento.update(key, fn(readPendingReviews(this.memento.get(key))));
      this.pendingChanged.fire(changeRequestId);
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  viewedMarks(changeRequestId: number): ViewedMarks {
    const who = this.identity();
    if (!who) return {};
    const all = this.memento.get<Record<string, ViewedMarks>>(viewedStorageKey(who.service, who.userId)) ?? {};
    return all[changeRequestId] ?? {};
  }

  updateViewed(changeRequestId: number, fn: (marks: ViewedMarks) => ViewedMarks): Promise<void> {
    const who = this.identity();
    if (!who) return Promise.resolve();
    const key = viewedStorageKey(who.service, who.userId);
    const write = this.writes.then(async () => {
      const all = { ...(this.memento.get<Record<string, ViewedMarks>>(key) ?? {}) };
      const next = fn(all[changeRequestId] ?? {});
      if (Object.keys(next).length) all[changeRequestId] = next;
      else delete all[changeRequestId];
      await this.memento.update(key, all);
      this.viewedChanged.fire(changeRequestId);
    });
    this.writes = write.catch(() => undefined);
    return write;
  }
}
