// The views of the "Change Control" container: Change Requests (grouped), Checks (of the selected
// request), My Reviews and the Merge Queue, fed by the store and the connection.
import * as vscode from 'vscode';
import type { ChangeRequest, MergeCheck } from '../../contract/api/change-control';
import { asApiError, presentError, type ApiError } from '../core/api-error';
import type { ChangeRequestStore } from '../core/change-request-store';
import { CONTEXT_KEYS, VIEWS } from '../core/commands';
import { connectionDescription } from '../core/connection-state';
import { isEmpty } from '../core/grouping';
import {
  changeRequestRoots,
  checkRoots,
  childNodes,
  mergeQueueRoots,
  myReviewRoots,
  reviewBadge,
  waitingForMe,
  type TreeNode,
} from '../core/tree-items';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';
import { NodeTreeProvider } from './tree-view';

export class ChangeControlViews extends DisposableBase {
  readonly changeRequests: vscode.TreeView<TreeNode>;
  readonly checks: vscode.TreeView<TreeNode>;
  readonly myReviews: vscode.TreeView<TreeNode>;
  readonly mergeQueue: vscode.TreeView<TreeNode>;
  private readonly mergeQueueTree: NodeTreeProvider;
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
  private wasEmpty = false;

  constructor(
    private readonly connection: Connection,
    private readonly store: ChangeRequestStore,
  ) {
    super();
    const connected = () => connection.state.phase === 'connected';
    this.changeRequestsTree = this._register(
      new NodeTreeProvider({ roots: () => (connected() ? changeRequestRoots(store.state) : []), children: childNodes }),
    );
    this.checksTree = this._register(
      new NodeTreeProvider({
        roots: () => (connected() && this.selected ? checkRoots(this.checkList, !!this.checksError) : []),
        children: childNodes,
      }),
    );
    this.myReviewsTree = this._register(
      new NodeTreeProvider({
        roots: () => (connected() ? myReviewRoots(store.state, (id) => store.byId(id)) : []),
        children: childNodes,
      }),
    );
    this.mergeQueueTree = this._register(
      new NodeTreeProvider({
        roots: () => (connected() ? mergeQueueRoots(store.state, (id) => store.byId(id)) : []),
        children: childNodes,
      }),
    );
    this.mergeQueue = this._register(
      vscode.window.createTreeView(VIEWS.mergeQueue.id, { treeDataProvider: this.mergeQueueTree }),
    );
    this.changeRequests = this._register(
      vscode.window.createTreeView(VIEWS.changeRequests.id, {
        treeDataProvider: this.changeRequestsTree,
        showCollapseAll: true,
      }),
    );
    this.checks = this._register(vscode.window.createTreeView(VIEWS.checks.id, { treeDataProvider: this.checksTree }));
    this.myReviews = this._register(
      vscode.window.createTreeView(VIEWS.myReviews.id, { treeDataProvider: this.myReviewsTree }),
    );

    const onSelect = (e: vscode.TreeViewSelectionChangeEvent<TreeNode>) => {
      const node = e.selection[0];
      if (node?.kind === 'changeRequest') this.select(node.cr);
      else if (node?.kind === 'review' && node.cr) this.select(node.cr);
    };
    this._register(this.changeRequests.onDidChangeSelection(onSelect));
    this._register(this.myReviews.onDidChangeSelection(onSelect));
    this._register(
      this.mergeQueue.onDidChangeSelection((e) => {
        const node = e.selection[0];
        if (node?.kind === 'queueEntry' && node.cr) this.select(node.cr);
      }),
    );
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

  /** With no change request at all, whether there is a branch to open one for (else the welcome offers Create Branch). */
  private async lookForBranches(empty: boolean): Promise<void> {
    const client = this.connection.client;
    let none = false;
    if (empty && client) {
      try {
        none = !(await client.listBranches()).some((b) => b.status !== 'merged' && b.status !== 'archived');
      } catch {
        none = false;
      }
    }
    await vscode.commands.executeCommand('setContext', CONTEXT_KEYS.noBranches, none);
  }

  /** Creating a branch ends "no branches" (the list of requests stays empty until one is opened). */
  branchesChanged(): void {
    this.wasEmpty = false;
    this.update();
  }

  private update(): void {
    const state = this.connection.state;
    const s = this.store.state;
    const connected = state.phase === 'connected';
    this.changeRequests.description = connectionDescription(state);
    // Never a message while not connected: VS Code hides a view's welcome (and its buttons) under it.
    this.changeRequests.message =
      connected && s.error && s.loaded ? presentError('Loading change requests', s.error).message : undefined;
    this.changeRequests.badge = reviewBadge(connected ? waitingForMe(s.lists).length : 0);
    this.myReviews.message =
      connected && s.reviewsError && s.loaded
        ? presentError('Loading your reviews', s.reviewsError).message
        : undefined;
    this.mergeQueue.message =
      connected && s.queueError && s.loaded ? presentError('Loading the merge queue', s.queueError).message : undefined;
    this.mergeQueue.description = connected && s.queue.length ? String(s.queue.length) : undefined;
    this.myReviews.description = connected ? undefined : connectionDescription(state);
    this.checks.description = !connected
      ? connectionDescription(state)
      : this.selected
        ? this.selected.title || this.selected.branch_name
        : undefined;
    const empty = connected && s.loaded && !s.error && isEmpty(s.lists);
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.empty, empty);
    if (empty !== this.wasEmpty) {
      this.wasEmpty = empty;
      void this.lookForBranches(empty);
    }
    if (!connected) {
      // Offline, the selection is kept: what was shown comes back once the service answers.
      if (state.phase !== 'offline') this.selected = undefined;
      this.checkList = [];
      this.checks.message = undefined;
    } else if (this.selected) {
      const fresh = this.store.byId(this.selected.id);
      if (fresh) this.selected = fresh;
      void this.loadChecks();
    }
    this.changeRequestsTree.refresh();
    this.checksTree.refresh();
    this.myReviewsTree.refresh();
    this.mergeQueueTree.refresh();
  }
}
