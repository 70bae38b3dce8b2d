// The "Changed Objects" view: the changes of the open change request grouped by object type, each
// with its action, open threads and a "viewed" checkbox (marks per service, user, request and
// object, dropped when the change differs from the one marked); threads whose change left the
// branch listed apart. Next/Previous Change walk it in order, skipping viewed changes.
import * as vscode from 'vscode';
import type { ChangeDiff } from '../../contract/api/branching';
import { asApiError, presentError } from '../core/api-error';
import { connectionDescription } from '../core/connection-state';
import { DOCUMENT_SCHEME, objectKey } from '../core/change-documents';
import {
  adjacentChange,
  changedObjectItem,
  changedObjectsRoots,
  changeGroupItem,
  changedObjectsDescription,
  orphanThreadsItem,
  treeOrder,
  type ChangedObjectsNode,
} from '../core/changed-objects';
import { openThreadCounts } from '../core/comment-threads';
import { CONTEXT_KEYS, VIEWS } from '../core/commands';
import type { RequestDataCache } from '../core/request-data';
import { messageItem } from '../core/tree-items';
import { isViewed, markViewed, pruneViewed, type ViewedMarks } from '../core/viewed';
import type { ReviewComments } from './comments';
import type { Connection } from './connection';
import { refOf } from './change-documents';
import { DisposableBase } from './disposable';
import { toTreeItem } from './tree-view';
import type { UserState } from './user-state';

type Node = ChangedObjectsNode;

/** The request the view showed, in the workspace's state (it comes back after a reload). */
const REMEMBERED_REQUEST = 'changeControl.changedObjects.request';

export interface ChangedObjectsDeps {
  cache: RequestDataCache;
  connection: Connection;
  userState: UserState;
  comments: ReviewComments;
  log: vscode.LogOutputChannel;
  /** The workspace's state. */
  memento: vscode.Memento;
}

export class ChangedObjectsView extends DisposableBase implements vscode.TreeDataProvider<Node> {
  private readonly changed = this._register(new vscode.EventEmitter<Node | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<Node>;
  private requestId: number | undefined;
  /** The change last opened (Next/Previous start from it). */
  private currentChange: { changeRequestId: number; changeId: number } | undefined;
  private loadError: string | undefined;
  private readonly nodes = new Map<number, Node>();
  /** Open threads per change and the viewed marks, computed once per update (not once per row). */
  private rowData: { threads: Map<number, number>; marks: ViewedMarks } = { threads: new Map(), marks: {} };
  private readonly groupNodes = new Map<string, Node>();

  constructor(private readonly deps: ChangedObjectsDeps) {
    super();
    this.view = this._register(
      vscode.window.createTreeView(VIEWS.changedObjects.id, {
        treeDataProvider: this,
        showCollapseAll: true,
        manageCheckboxStateManually: true,
      }),
    );
    this._register(this.view.onDidChangeCheckboxState((e) => void this.onCheckboxes(e)));
    this._register(
      deps.cache.onDidChange((id, parts) => {
        if (id !== this.requestId) return;
        if (parts.has('changes')) void this.prune();
        this.update();
      }),
    );
    this._register(
      deps.userState.onDidChangeViewed((id) => {
        if (id === undefined || id === this.requestId) this.update();
        void this.updateActiveContext();
      }),
    );
    this._register(
      deps.userState.onDidChangePending((id) => {
        if (id === undefined || id === this.requestId) this.update();
      }),
    );
    this._register(
      deps.connection.onDidChange((state) => {
        if (state.phase === 'connected') {
          // After a reload (or being offline), the request it showed comes back.
          const remembered = this.requestId ?? deps.memento.get<number>(REMEMBERED_REQUEST);
          this.requestId = undefined;
          if (typeof remembered === 'number') this.show(remembered);
          else this.update();
        } else if (state.phase !== 'offline') this.show(undefined, { forget: false });
        else this.update();
      }),
    );
    this._register(vscode.window.onDidChangeActiveTextEditor((editor) => this.followEditor(editor)));
    this.update();
  }

  get changeRequestId(): number | undefined {
    return this.requestId;
  }

  /** Shows the changes of this request (undefined: none); remembered for the next window of this workspace. */
  show(changeRequestId: number | undefined, opts: { forget?: boolean } = {}): void {
    if (changeRequestId === this.requestId) return;
    this.requestId = changeRequestId;
    this.loadError = undefined;
    if (changeRequestId !== undefined || opts.forget !== false)
      void this.deps.memento.update(REMEMBERED_REQUEST, changeRequestId);
    this.update();
    if (changeRequestId !== undefined) void this.load(changeRequestId);
  }

  private async load(changeRequestId: number): Promise<void> {
    try {
      await this.deps.cache.ensure(changeRequestId);
      await this.prune();
    } catch (e) {
      if (changeRequestId !== this.requestId) return;
      // A request that is gone (or hidden now) is not shown again after the next reload.
      if (asApiError(e).kind === 'notFound') void this.deps.memento.update(REMEMBERED_REQUEST, undefined);
      this.loadError = presentError('Loading the changes', e).message;
    }
    this.update();
  }

  /** Drops the marks of changes that changed since they were marked. */
  private async prune(): Promise<void> {
    const id = this.requestId;
    const data = id === undefined ? undefined : this.deps.cache.get(id);
    if (id === undefined || !data || data.errors.changes) return;
    const { changed } = pruneViewed(this.deps.userState.viewedMarks(id), data.changes);
    if (changed) await this.deps.userState.updateViewed(id, (marks) => pruneViewed(marks, data.changes).marks);
  }

  /** Remembers the change the active editor shows (Next/Previous go on from there). */
  private followEditor(editor: vscode.TextEditor | undefined): void {
    // Focus in a comment widget leaves no active text editor: the change shown is still the last one.
    if (!editor) return;
    const active = this.activeChange(editor);
    void this.updateActiveContext(active);
    if (active) this.setCurrent(active.changeRequestId, active.change.id);
  }

  /** The change the active editor (or the one given) shows, if it shows one. */
  activeChange(
    editor: vscode.TextEditor | undefined = vscode.window.activeTextEditor,
  ): { changeRequestId: number; change: ChangeDiff } | undefined {
    const ref = editor && editor.document.uri.scheme === DOCUMENT_SCHEME ? refOf(editor.document.uri) : null;
    if (ref?.kind !== 'change') return undefined;
    const change = this.deps.cache
      .get(ref.changeRequestId)
      ?.byObject.get(objectKey({ object_type: ref.objectType, object_id: ref.objectId }));
    return change ? { changeRequestId: ref.changeRequestId, change } : undefined;
  }

  /** The editor title's Mark as Viewed / Not Viewed follow the active change's mark. */
  private async updateActiveContext(active = this.activeChange()): Promise<void> {
    const viewed = active ? isViewed(this.deps.userState.viewedMarks(active.changeRequestId), active.change) : false;
    await Promise.all([
      vscode.commands.executeCommand('setContext', CONTEXT_KEYS.activeChange, active !== undefined),
      vscode.commands.executeCommand('setContext', CONTEXT_KEYS.activeViewed, viewed),
    ]);
  }

  setCurrent(changeRequestId: number, changeId: number): void {
    this.currentChange = { changeRequestId, changeId };
    if (changeRequestId !== this.requestId) return;
    const node = this.nodes.get(changeId);
    if (node && this.view.visible)
      void Promise.resolve(this.view.reveal(node, { select: true, focus: false })).catch(() => undefined);
  }

  /** The change Next (+1) or Previous (-1) opens, or a reason why there is none. */
  adjacent(direction: 1 | -1): { changeRequestId: number; change: ChangeDiff } | { none: string } {
    const id = this.requestId;
    const data = id === undefined ? undefined : this.deps.cache.get(id);
    if (id === undefined || !data)
      return {
        none: "Open a change request's changes first (Open All Changes, or a change in the Changed Objects view).",
      };
    if (data.changes.length === 0) return { none: 'This change request has no changes.' };
    const marks = this.deps.userState.viewedMarks(id);
    const current = this.currentChange?.changeRequestId === id ? this.currentChange.changeId : null;
    const next = adjacentChange(
      treeOrder(data.changes),
      current,
      (c) => isViewed(marks, c),
      direction,
      this.isShown(id, current),
    );
    if (!next) return { none: 'Every other change of this request is marked as viewed.' };
    return { changeRequestId: id, change: next };
  }

  /** Whether a visible editor shows this change. */
  private isShown(changeRequestId: number, changeId: number | null): boolean {
    if (changeId === null) return false;
    return vscode.window.visibleTextEditors.some((e) => {
      const ref = refOf(e.document.uri);
      if (ref?.kind !== 'change' || ref.changeRequestId !== changeRequestId) return false;
      return (
        this.deps.cache
          .get(changeRequestId)
          ?.byObject.get(objectKey({ object_type: ref.objectType, object_id: ref.objectId }))?.id === changeId
      );
    });
  }

  /** Marks a change viewed or not (the checkbox, or a command). */
  async setViewed(changeRequestId: number, change: ChangeDiff, viewed: boolean): Promise<void> {
    await this.deps.userState.updateViewed(changeRequestId, (marks) => markViewed(marks, change, viewed));
  }

  private async onCheckboxes(e: vscode.TreeCheckboxChangeEvent<Node>): Promise<void> {
    const id = this.requestId;
    if (id === undefined) return;
    for (const [node, state] of e.items) {
      if (node.kind === 'change') await this.setViewed(id, node.change, state === vscode.TreeItemCheckboxState.Checked);
      else if (node.kind === 'group')
        for (const c of node.group.changes) await this.setViewed(id, c, state === vscode.TreeItemCheckboxState.Checked);
    }
  }

  private update(): void {
    const id = this.requestId;
    const data = id === undefined ? undefined : this.deps.cache.get(id);
    const cr = data?.changeRequest;
    const connected = this.deps.connection.state.phase === 'connected';
    const problem =
      this.loadError ??
      (data?.errors.changes ? presentError('Loading the changes', data.errors.changes).message : undefined);
    // Never a message while not connected: it would hide the welcome and its buttons.
    this.view.message = connected ? problem : undefined;
    const marks = id === undefined ? {} : this.deps.userState.viewedMarks(id);
    this.rowData = { threads: openThreadCounts(data?.comments ?? []), marks };
    const viewed = data ? data.changes.filter((c) => isViewed(marks, c)).length : 0;
    // No badge: the activity bar's badge counts only what waits for the user (reviews asked of them).
    this.view.description = connected
      ? changedObjectsDescription(cr, data?.changes.length ?? 0, viewed)
      : connectionDescription(this.deps.connection.state);
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.hasChanges, !!data && data.changes.length > 0);
    this.changed.fire(undefined);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const id = this.requestId ?? 0;
    switch (node.kind) {
      case 'group': {
        const { marks } = this.rowData;
        return toTreeItem(changeGroupItem(id, node.group, node.group.changes.filter((c) => isViewed(marks, c)).length));
      }
      case 'change': {
        const { marks, threads } = this.rowData;
        return toTreeItem(
          changedObjectItem(id, node.change, {
            threads: threads.get(node.change.id) ?? 0,
            viewed: isViewed(marks, node.change),
            now: new Date(),
          }),
        );
      }
      case 'orphans':
        return toTreeItem(orphanThreadsItem(id, node.count));
      case 'message':
        return toTreeItem(messageItem(node.id, node.label, node.icon));
    }
  }

  getChildren(node?: Node): Node[] {
    const id = this.requestId;
    if (id === undefined || this.deps.connection.state.phase !== 'connected') return [];
    const data = this.deps.cache.get(id);
    if (node?.kind === 'group') {
      return node.group.changes.map((change) => {
        const n: Node = { kind: 'change', change };
        this.nodes.set(change.id, n);
        return n;
      });
    }
    if (node) return [];
    const roots = changedObjectsRoots(
      data && { changes: data.changes, branchDeleted: data.changeRequest.branch_deleted },
      !!this.loadError,
      data?.changes.length ? this.deps.comments.orphans(id).length : 0,
    );
    this.nodes.clear();
    this.groupNodes.clear();
    for (const n of roots) if (n.kind === 'group') this.groupNodes.set(n.group.objectType, n);
    return roots;
  }

  getParent(node: Node): Node | undefined {
    if (node.kind !== 'change') return undefined;
    return this.groupNodes.get(node.change.object_type);
  }
}
