// Live updates: follows the service's event stream while connected (core/live-stream.ts) and hands
// each batch of events, as a refresh plan, to the parts that show what changed; polls instead
// while the stream is unavailable.
import * as vscode from 'vscode';
import { LiveStream, planRefresh, type LiveState, type RefreshPlan } from '../core/live-stream';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

export interface LiveHandlers {
  /** Reload what a batch of events names. */
  apply(plan: RefreshPlan): void;
  /** Events were missed, or the stream is unavailable: reload everything shown. */
  reloadAll(): void;
}

export class LiveUpdates extends DisposableBase {
  private readonly stream: LiveStream;
  private identity: string | null = null;

  constructor(
    private readonly connection: Connection,
    private readonly handlers: LiveHandlers,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.stream = new LiveStream({
      open: (lastEventId, signal) => {
        const client = this.connection.client;
        if (!client) return Promise.reject(new Error('not connected'));
        return client.openStream({ lastEventId, signal });
      },
      onEvents: (events) => {
        this.log.debug(`events: ${events.map((e) => `${e.event} #${e.change_request}`).join(', ')}`);
        this.handlers.apply(planRefresh(events));
      },
      onReset: () => {
        this.log.info('event stream: events were missed; reloading');
        this.handlers.reloadAll();
      },
      onPoll: () => this.handlers.reloadAll(),
      onState: (state: LiveState, detail) => {
        this.log.debug(`event stream: ${state} (${detail})`);
        // The stream is how the connection knows the service is there: its end is a reason to ask.
        this.connection.streamChanged(state === 'open');
      },
      log: (line) => this.log.info(line),
    });
    this._register(connection.onDidChange(() => this.follow()));
    this._register({ dispose: () => this.stream.stop() });
    this.follow();
  }

  get state(): LiveState {
    return this.stream.state;
  }

  private follow(): void {
    const state = this.connection.state;
    if (state.phase !== 'connected') {
      if (this.stream.state !== 'stopped') this.stream.stop();
      return;
    }
    const identity = `${state.serviceUrl} ${state.user.id}`;
    if (identity === this.identity && this.stream.state !== 'stopped') return;
    if (identity !== this.identity) this.stream.forgetPosition();
    this.identity = identity;
    this.stream.start();
  }
}
