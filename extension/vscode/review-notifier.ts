// Reads the caller's unread notifications (on a timer, with backoff on failures, and at once when
// the event stream says a request changed) and, for change requests now waiting for the caller's
// review, shows a quiet notification with "Open". Setting: changeControl.notifications.enabled.
import * as vscode from 'vscode';
import { Backoff } from '../core/backoff';
import { moreMessage, notificationMessage, reviewNotificationsToShow } from '../core/review-notifications';
import { SETTING_KEYS } from '../core/settings';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

const MAX_DELAY_MS = 15 * 60_000;

export class ReviewNotifier extends DisposableBase {
  private timer: NodeJS.Timeout | undefined;
  private backoff: Backoff | undefined;
  private running = false;

  constructor(
    private readonly connection: Connection,
    private readonly memento: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
    private readonly onNew: () => void,
    private readonly open: (changeRequestId: number) => void,
  ) {
    super();
    this._register(connection.onDidChange(() => this.restart()));
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (
          e.affectsConfiguration(SETTING_KEYS.notificationsEnabled) ||
          e.affectsConfiguration(SETTING_KEYS.pollIntervalSeconds)
        )
          this.restart();
      }),
    );
    this._register({ dispose: () => this.stop() });
    this.restart();
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private restart(): void {
    this.stop();
    const settings = this.connection.settings().notifications;
    if (!settings.enabled || this.connection.state.phase !== 'connected' || this.isDisposed) return;
    this.backoff = new Backoff(settings.pollIntervalMs, Math.max(MAX_DELAY_MS, settings.pollIntervalMs));
    this.schedule(0);
  }

  /**
   * Reads the notifications now (the event stream saw a change a notification may follow), unless
   * a read is under way; the timer starts again from here.
   */
  checkNow(): void {
    if (this.running || !this.backoff || this.isDisposed || this.connection.state.phase !== 'connected') return;
    if (!this.connection.settings().notifications.enabled) return;
    this.schedule(0);
  }

  private schedule(delay: number): void {
    this.stop();
    this.timer = setTimeout(() => void this.poll(), delay);
  }

  private memoKey(): string | null {
    const state = this.connection.state;
    if (state.phase !== 'connected') return null;
    return `changeControl.lastNotification.${state.bundled ? 'bundled' : state.serviceUrl}.${state.user.id}`;
  }

  private async poll(): Promise<void> {
    const client = this.connection.client;
    const key = this.memoKey();
    if (!client || !key || this.running || !this.backoff) return;
    this.running = true;
    let ok = true;
    try {
      const { results } = await client.listNotifications({ unreadOnly: true, limit: 100 });
      const decision = reviewNotificationsToShow(results, this.memento.get<number>(key));
      await this.memento.update(key, decision.lastSeenId);
      if (decision.show.length) {
        this.onNew();
        for (const n of decision.show) {
          // An override: who and why, read from the request (its `override` shows to whoever may view it).
          const override =
            n.event_type === 'change_request_overridden'
              ? await client
                  .getChangeRequest(n.object_id)
                  .then((cr) =>
                    cr.override ? { user: cr.override.user?.display ?? null, reason: cr.override.reason } : null,
                  )
                  .catch(() => null)
              : null;
          void vscode.window.showInformationMessage(notificationMessage(n, override), 'Open').then(async (choice) => {
            if (choice !== 'Open') return;
            this.open(n.object_id);
            await client
              .markNotificationRead(n.id)
              .catch((e) => this.log.warn(`marking notification ${n.id} read: ${(e as Error).message}`));
          });
        }
        if (decision.more) void vscode.window.showInformationMessage(moreMessage(decision.more));
      }
    } catch (e) {
      ok = false;
      this.log.warn(`notifications: ${(e as Error).message}`);
    } finally {
      this.running = false;
    }
    if (!this.isDisposed && this.connection.state.phase === 'connected' && this.backoff)
      this.schedule(this.backoff.next(ok));
  }
}
