// The three views of the "Change Control" container: Change Requests (grouped), Checks (of the
// selected request) and My Reviews, fed by the store and the connection.
import * as vscode from 'vscode';
import type { ChangeRequest, MergeCheck } from '../../contract/api/change-control';
import { asApiError, presentError, type ApiError } from '../core/api-error';
import type { ChangeRequestStore } from '../core/change-request-store';
import { CONTEXT_KEYS, VIEWS } from '../core/commands';
import { connectionDescription } from '../core/connection-state';
import { groupChangeRequests, isEmpty } from '../core/grouping';
import type { TreeNode } from '../core/tree-items';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';
import { NodeTreeProvider } from './tree-view';

export class ChangeControlViews extends DisposableBase {
  readonly changeRequests: vscode.TreeView<TreeNode>;
  readonly checks: vscode.TreeView<TreeNode>;
  readonly myReviews: vscode.TreeView<TreeNode>;
  private readonly changeRequestsTree: NodeTreeProvider;
  private readonly checksTree: NodeTreeProvider;
  private readonly myReviewsTree: NodeTreeProvider;

  private selected: ChangeRequest | undefined;
  private readonly selectedEmitter = this._register(new vscode.EventEmitter<ChangeRequest>());
  /** A request was selected (in a tree or by focusing its panel or its changes). */
  readonly onDidSelect = this.selectedEmitter.event;
  private checkList: MergeCheck[] = [];
  private checksError: ApiError | null = null;
  private checksGeneration = 0;

  constructor(
    private readonly connection: Connection,
    private readonly store: ChangeRequestStore,
  ) {
    super();
    this.changeRequestsTree = this._register(new NodeTreeProvider({ roots: () => this.changeRequestRoots(), children: (n) => this.childrenOf(n) }));
    this.checksTree = this._register(new NodeTreeProvider({ roots: () => this.checkRoots(), children: () => [] }));
    this.myReviewsTree = this._register(new NodeTreeProvider({ roots: () => this.myReviewRoots(), children: (n) => this.childrenOf(n) }));
    this.changeRequests = this._register(vscode.window.createTreeView(VIEWS.changeRequests.id, { treeDataProvider: this.changeRequestsTree, showCollapseAll: true }));
    this.checks = this._register(vscode.window.createTreeView(VIEWS.checks.id, { treeDataProvider: this.checksTree }));
    this.myReviews = this._register(vscode.window.createTreeView(VIEWS.myReviews.id, { treeDataProvider: this.myReviewsTree }));

    const onSelect = (e: vscode.TreeViewSelectionChangeEvent<TreeNode>) => {
      const node = e.selection[0];
      if (node?.kind === 'changeRequest') this.select(node.cr);
      else if (node?.kind === 'review' && node.cr) this.select(node.cr);
    };
    this._register(this.changeRequests.onDidChangeSelection(onSelect));
    this._register(this.myReviews.onDidChangeSelection(onSelect));
    this._register(connection.onDidChange(() => this.update()));
    this._register({ dispose: store.onDidChange(() => this.update()).dispose });
    this.update();
  }

  /** Shows the checks of this request (selected in a tree or focused in a panel). */
  select(cr: ChangeRequest): void {
    const changed = this.selected?.id !== cr.id;
    this.selected = cr;
    this.checks.description = cr.title || cr.branch_name;
    if (changed) {
      this.checkList = [];
      this.checksError = null;
      this.selectedEmitter.fire(cr);
    }
    void this.loadChecks();
  }

  selectedChangeRequest(): ChangeRequest | undefined {
    return this.selected;
  }

  async loadChecks(): Promise<void> {
    const client = this.connection.client;
    const cr = this.selected;
    if (!client || !cr) return;
    const generation = ++this.checksGeneration;
    try {
      const checks = await client.listChecks(cr.id);
      if (generation !== this.checksGeneration) return;
      this.checkList = checks;
      this.checksError = null;
    } catch (e) {
      if (generation !== this.checksGeneration) return;
      this.checksError = asApiError(e);
    }
    this.checks.message = this.checksError ? presentError('Loading the checks', this.checksError).message : undefined;
    this.checksTree.refresh();
  }

  private update(): void {
    const state = this.connection.state;
    const s = this.store.state;
    const connected = state.phase === 'connected';
    this.changeRequests.description = connectionDescription(state);
    this.changeRequests.message =
      state.phase === 'failed' ? state.message : connected && s.error ? presentError('Loading change requests', s.error).message : undefined;
    const waiting = connected ? groupChangeRequests(s.lists).find((g) => g.id === 'needsMyReview')!.items.length : 0;
    this.changeRequests.badge = waiting ? { value: waiting, tooltip: `${waiting} change request${waiting === 1 ? '' : 's'} waiting for your review` } : undefined;
    this.myReviews.message = connected && s.reviewsError ? presentError('Loading your reviews', s.reviewsError).message : undefined;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.empty, connected && s.loaded && !s.error && isEmpty(s.lists));
    if (!connected) {
      this.selected = undefined;
      this.checkList = [];
      this.checks.description = undefined;
      this.checks.message = undefined;
    } else if (this.selected) {
      const fresh = this.store.byId(this.selected.id);
      if (fresh) this.selected = fresh;
      void this.loadChecks();
    }
    this.changeRequestsTree.refresh();
    this.checksTree.refresh();
    this.myReviewsTree.refresh();
  }

  private changeRequestRoots(): TreeNode[] {
    if (this.connection.state.phase !== 'connected') return [];
    const s = this.store.state;
    if (!s.loaded) {
      if (s.error) return [{ kind: 'message', id: 'load-failed', label: 'Retry loading change requests', icon: { id: 'refresh' }, command: { id: 'changeControl.refresh', title: 'Refresh', args: [] } }];
      return [{ kind: 'message', id: 'loading', label: 'Loading change requests…', icon: { id: 'loading~spin' } }];
    }
    if (isEmpty(s.lists)) return [];
    return groupChangeRequests(s.lists).map((group) => ({ kind: 'group', group }));
  }

  private childrenOf(node: TreeNode): TreeNode[] {
    if (node.kind === 'group') return node.group.items.map((cr) => ({ kind: 'changeRequest', cr, scope: node.group.id }));
    if (node.kind === 'reviewSection') return node.children;
    return [];
  }

  private checkRoots(): TreeNode[] {
    if (this.connection.state.phase !== 'connected' || !this.selected) return [];
    if (this.checkList.length === 0) {
      return this.checksError ? [] : [{ kind: 'message', id: 'no-checks', label: 'No checks on this change request' }];
    }
    return this.checkList.map((check) => ({ kind: 'check', check }));
  }

  private myReviewRoots(): TreeNode[] {
    if (this.connection.state.phase !== 'connected') return [];
    const s = this.store.state;
    if (!s.loaded) return [];
    const waiting = groupChangeRequests(s.lists).find((g) => g.id === 'needsMyReview')!.items;
    const reviewed = [...s.myReviews].sort((a, b) => b.last_updated.localeCompare(a.last_updated));
    return [
      { kind: 'reviewSection', id: 'waiting', label: 'Waiting for my review', children: waiting.map((cr) => ({ kind: 'changeRequest', cr, scope: 'my-waiting' })) },
      { kind: 'reviewSection', id: 'reviewed', label: 'Reviewed by me', children: reviewed.map((review) => ({ kind: 'review', review, cr: this.store.byId(review.change_request) })) },
    ];
  }
}
