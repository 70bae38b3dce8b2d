// The status-bar items: the connection (how many change requests wait for my review while
// connected; "offline, reconnecting…" and the reason otherwise) and the pending review of the
// request the editor shows (how many comments wait for Submit Review).
import * as vscode from 'vscode';
import type { ChangeRequestStore } from '../core/change-request-store';
import { connectionStatus } from '../core/connection-state';
import { groupChangeRequests } from '../core/grouping';
import { pendingStatus } from '../core/pending-review';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';
import type { UserState } from './user-state';

export class ReviewCountStatus extends DisposableBase {
  private readonly item = this._register(
    vscode.window.createStatusBarItem('changeControl.reviewCount', vscode.StatusBarAlignment.Left, 50),
  );

  constructor(
    private readonly connection: Connection,
    private readonly store: ChangeRequestStore,
  ) {
    super();
    this.item.name = 'Change Control';
    this._register(connection.onDidChange(() => this.update()));
    this._register({ dispose: store.onDidChange(() => this.update()).dispose });
    this.update();
  }

  private update(): void {
    const state = this.connection.state;
    const status = connectionStatus(state);
    if (status) {
      this.item.text = status.text;
      this.item.tooltip = status.tooltip;
      this.item.backgroundColor = status.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
      this.item.command =
        state.phase === 'offline'
          ? 'changeControl.refresh'
          : state.phase === 'signedOut' || (state.phase === 'failed' && state.problem === 'tokenRefused')
            ? 'changeControl.signIn'
            : 'workbench.view.extension.changeControl';
      this.item.accessibilityInformation = { label: status.tooltip };
      this.item.show();
      return;
    }
    if (state.phase !== 'connected' || !this.store.state.loaded) {
      this.item.hide();
      return;
    }
    const count = groupChangeRequests(this.store.state.lists).find((g) => g.id === 'needsMyReview')!.items.length;
    this.item.text = `$(git-pull-request) ${count}`;
    this.item.backgroundColor = undefined;
    this.item.command = 'workbench.view.extension.changeControl';
    this.item.tooltip = `${count} change request${count === 1 ? '' : 's'} waiting for your review (${state.user.username})`;
    this.item.accessibilityInformation = { label: this.item.tooltip };
    this.item.show();
  }
}

/** How many comments the pending review of the active editor's request (or the only one) holds. */
export class PendingReviewStatus extends DisposableBase {
  private readonly item = this._register(
    vscode.window.createStatusBarItem('changeControl.pendingReview', vscode.StatusBarAlignment.Left, 49),
  );

  constructor(
    private readonly userState: UserState,
    private readonly activeRequest: () => number | undefined,
  ) {
    super();
    this.item.name = 'Change Control: pending review';
    this.item.command = 'changeControl.submitReview';
    this._register(userState.onDidChangePending(() => this.update()));
    this._register(vscode.window.onDidChangeActiveTextEditor(() => this.update()));
    this.update();
  }

  update(): void {
    const shown = pendingStatus(this.userState.pendingReviews(), this.activeRequest());
    if (!shown) {
      this.item.hide();
      return;
    }
    this.item.text = shown.text;
    this.item.tooltip = shown.tooltip;
    this.item.accessibilityInformation = { label: shown.tooltip };
    this.item.show();
  }
}
