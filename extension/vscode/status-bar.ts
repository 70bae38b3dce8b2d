// The status-bar item: how many change requests wait for my review (shown while connected).
import * as vscode from 'vscode';
import type { ChangeRequestStore } from '../core/change-request-store';
import { groupChangeRequests } from '../core/grouping';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

export class ReviewCountStatus extends DisposableBase {
  private readonly item = this._register(
    vscode.window.createStatusBarItem('changeControl.reviewCount', vscode.StatusBarAlignment.Left, 50),
  );

  constructor(
    private readonly connection: Connection,
    private readonly store: ChangeRequestStore,
  ) {
    super();
    this.item.name = 'Change Control: waiting for my review';
    this.item.command = 'workbench.view.extension.changeControl';
    this._register(connection.onDidChange(() => this.update()));
    this._register({ dispose: store.onDidChange(() => this.update()).dispose });
    this.update();
  }

  private update(): void {
    const state = this.connection.state;
    if (state.phase !== 'connected' || !this.store.state.loaded) {
      this.item.hide();
      return;
    }
    const count = groupChangeRequests(this.store.state.lists).find((g) => g.id === 'needsMyReview')!.items.length;
    this.item.text = `$(git-pull-request) ${count}`;
    this.item.tooltip = `${count} change request${count === 1 ? '' : 's'} waiting for your review (${state.user.username})`;
    this.item.accessibilityInformation = { label: this.item.tooltip };
    this.item.show();
  }
}
