// The "Branch Objects" view: the object types of one branch, under each the branch's changes of
// that type and then every object the branch shows (main's included), read a page at a time
// (core/branch-objects.ts), each opening its document; what the branch did to an object is its
// decoration. A write here, in a document or through the event stream reloads what it touched.
import * as vscode from 'vscode';
import type { BranchObjectTypeAccess, ChangeDiff } from '../../contract/api/branching';
import { presentError } from '../core/api-error';
import { objectDocument, objectFileName } from '../core/branch-documents';
import type { ApiObject, BranchContext } from '../core/branch-objects-client';
import {
  changeRow,
  changesGroupRow,
  listedFileNames,
  moreRow,
  objectChangeOf,
  objectRow,
  PagedList,
  problemRow,
  typeRow,
  type ListedObject,
  type ObjectChange,
  type RowView,
} from '../core/branch-objects';
import { CONTEXT_KEYS, VIEWS } from '../core/commands';
import { branchUri, type BranchDocuments } from './branch-documents';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

export type BranchObjectsNode =
  | { kind: 'type'; type: BranchObjectTypeAccess }
  | { kind: 'changes'; type: BranchObjectTypeAccess }
  | { kind: 'row'; key: string; type: BranchObjectTypeAccess; row: RowView; objectId: number }
  | { kind: 'more'; type: BranchObjectTypeAccess; group: 'changes' | 'objects' }
  | { kind: 'problem'; key: string; message: string };

/** What the view has read of one type. */
interface TypeState {
  objects: PagedList<ApiObject>;
  changes: PagedList<ChangeDiff>;
  /** What the branch did to each listed object. */
  objectChanges: Map<number, ObjectChange>;
  /** File names of the changes' objects whose names were checked for uniqueness. */
  changeNames: Map<number, string>;
  error?: string;
}

const COLLAPSIBLE = {
  none: vscode.TreeItemCollapsibleState.None,
  collapsed: vscode.TreeItemCollapsibleState.Collapsed,
  expanded: vscode.TreeItemCollapsibleState.Expanded,
} as const;

export interface BranchObjectsDeps {
  connection: Connection;
  documents: BranchDocuments;
  log: vscode.LogOutputChannel;
}

export class BranchObjectsView extends DisposableBase implements vscode.TreeDataProvider<BranchObjectsNode> {
  private readonly changed = this._register(new vscode.EventEmitter<BranchObjectsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<BranchObjectsNode>;
  private branchName: string | undefined;
  private ctx: BranchContext | undefined;
  private loadError: string | undefined;
  private counts = new Map<string, number | null>();
  private readonly types = new Map<string, TypeState>();
  private readonly typeNodes = new Map<string, BranchObjectsNode>();
  private readonly changeNodes = new Map<string, BranchObjectsNode>();

  constructor(private readonly deps: BranchObjectsDeps) {
    super();
    this.view = this._register(
      vscode.window.createTreeView(VIEWS.branchObjects.id, { treeDataProvider: this, showCollapseAll: true }),
    );
    this._register(
      deps.documents.onDidWrite(({ branch, objectType }) => {
        if (branch === this.branchName) void this.reloadType(objectType);
      }),
    );
    this._register(
      deps.connection.onDidChange((state) => {
        if (state.phase !== 'connected') this.forgetData();
        this.changed.fire(undefined);
      }),
    );
  }

  /** The branch the view shows. */
  get branch(): string | undefined {
    return this.branchName;
  }

  get context(): BranchContext | undefined {
    return this.ctx;
  }

  /** Shows a branch's objects. */
  async show(branch: string): Promise<void> {
    this.branchName = branch;
    this.forgetData();
    this.view.description = branch;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.branchObjects, true);
    this.changed.fire(undefined);
    await vscode.commands.executeCommand(`${VIEWS.branchObjects.id}.focus`);
  }

  /** Reads everything shown again (Refresh, or the branch changed elsewhere). */
  reload(): void {
    if (!this.branchName) return;
    this.deps.documents.forgetContext(this.branchName);
    this.forgetData();
    this.changed.fire(undefined);
  }

  private forgetData(): void {
    this.ctx = undefined;
    this.loadError = undefined;
    this.counts = new Map();
    this.types.clear();
    this.typeNodes.clear();
    this.changeNodes.clear();
  }

  private async reloadType(objectType: string): Promise<void> {
    this.types.delete(objectType);
    this.counts.delete(objectType);
    this.deps.documents.forgetContext(this.branchName);
    this.changed.fire(undefined);
  }

  // ------------------------------------------------------------------ the tree

  getTreeItem(node: BranchObjectsNode): vscode.TreeItem {
    const row = this.rowOf(node);
    const item = new vscode.TreeItem(row.label, COLLAPSIBLE[row.collapsible]);
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = row.contextValue;
    if (row.icon) item.iconPath = new vscode.ThemeIcon(row.icon);
    if (node.kind === 'type') item.id = `type:${node.type.object_type}`;
    if (node.kind === 'changes') item.id = `changes:${node.type.object_type}`;
    if (node.kind === 'row') item.id = node.key;
    if (row.address) {
      const uri = branchUri(row.address);
      item.resourceUri = uri;
      item.command = { command: 'vscode.open', title: 'Open', arguments: [uri] };
    }
    if (node.kind === 'more')
      item.command = { command: 'changeControl.loadMoreObjects', title: 'Load more', arguments: [node] };
    return item;
  }

  private rowOf(node: BranchObjectsNode): RowView {
    switch (node.kind) {
      case 'type':
        return typeRow(node.type, this.counts.get(node.type.object_type) ?? null);
      case 'changes':
        return changesGroupRow(this.counts.get(node.type.object_type) ?? 0);
      case 'row':
        return node.row;
      case 'more': {
        const state = this.types.get(node.type.object_type);
        const list = node.group === 'objects' ? state?.objects : state?.changes;
        return moreRow(list?.items.length ?? 0, list?.total ?? null, node.group === 'objects' ? 'objects' : 'changes');
      }
      case 'problem':
        return problemRow(node.message);
    }
  }

  async getChildren(node?: BranchObjectsNode): Promise<BranchObjectsNode[]> {
    if (!this.branchName || !this.deps.connection.client) return [];
    try {
      if (!node) return await this.roots();
      if (node.kind === 'type') return await this.typeChildren(node.type);
      if (node.kind === 'changes') return this.changeChildren(node.type);
      return [];
    } catch (e) {
      const message = presentError('Reading the branch', e, { retryable: false }).message;
      this.deps.log.warn(message);
      return [{ kind: 'problem', key: `problem:${node?.kind ?? 'root'}`, message }];
    }
  }

  private async roots(): Promise<BranchObjectsNode[]> {
    if (!this.ctx) {
      const ctx = await this.deps.documents.context(this.branchName!);
      if (!ctx) {
        this.loadError = `There is no branch "${this.branchName}" (or you may not see it).`;
        return [{ kind: 'problem', key: 'problem:root', message: this.loadError }];
      }
      this.ctx = ctx;
      void this.countChanges(ctx);
    }
    const ctx = this.ctx;
    const nodes: BranchObjectsNode[] = [];
    if (!ctx.access.write && ctx.access.reason)
      nodes.push({ kind: 'problem', key: 'problem:read-only', message: `Read-only: ${ctx.access.reason}` });
    for (const type of ctx.access.object_types.filter((t) => t.view)) {
      let n = this.typeNodes.get(type.object_type);
      if (!n) this.typeNodes.set(type.object_type, (n = { kind: 'type', type }));
      nodes.push(n);
    }
    return nodes;
  }

  /** How many changes of each type the branch has: one small request per type, in parallel. */
  private async countChanges(ctx: BranchContext): Promise<void> {
    const objects = await this.deps.documents.objectsClient();
    await Promise.all(
      ctx.access.object_types
        .filter((t) => t.view)
        .map(async (t) => {
          try {
            const page = await objects.changes(ctx.branch.id, t.object_type, { limit: 1 });
            this.counts.set(t.object_type, page.count);
          } catch {
            this.counts.set(t.object_type, null);
          }
          const node = this.typeNodes.get(t.object_type);
          if (node && this.ctx === ctx) this.changed.fire(node);
        }),
    );
  }

  private stateOf(type: BranchObjectTypeAccess): TypeState {
    let state = this.types.get(type.object_type);
    if (state) return state;
    const ctx = this.ctx!;
    const client = () => this.deps.documents.objectsClient();
    state = {
      objects: new PagedList(async (offset, limit) =>
        (await client()).listObjects(ctx, type, { ordering: 'name', offset, limit }),
      ),
      changes: new PagedList(async (offset, limit) =>
        (await client()).changes(ctx.branch.id, type.object_type, { offset, limit }),
      ),
      objectChanges: new Map(),
      changeNames: new Map(),
    };
    this.types.set(type.object_type, state);
    return state;
  }

  private async typeChildren(type: BranchObjectTypeAccess): Promise<BranchObjectsNode[]> {
    const state = this.stateOf(type);
    if (state.objects.total === null) await this.moreObjects(type, state);
    if (state.changes.total === null) await this.moreChanges(type, state);
    this.counts.set(type.object_type, state.changes.total);
    const nodes: BranchObjectsNode[] = [];
    if ((state.changes.total ?? 0) > 0) {
      let group = this.changeNodes.get(type.object_type);
      if (!group) this.changeNodes.set(type.object_type, (group = { kind: 'changes', type }));
      nodes.push(group);
    }
    const names = listedFileNames(state.objects as PagedList<ListedObject>);
    state.objects.items.forEach((o, i) => {
      const row = objectRow(
        this.branchName!,
        this.ctx!.access,
        type,
        o,
        names[i]!,
        state.objectChanges.get(o.id) ?? null,
      );
      this.deps.documents.remember(branchUri(row.address!), o.id);
      nodes.push({ kind: 'row', key: `object:${type.object_type}:${o.id}`, type, row, objectId: o.id });
    });
    if (!state.objects.complete) nodes.push({ kind: 'more', type, group: 'objects' });
    return nodes;
  }

  private changeChildren(type: BranchObjectTypeAccess): BranchObjectsNode[] {
    const state = this.stateOf(type);
    const nodes: BranchObjectsNode[] = state.changes.items.map((c) => ({
      kind: 'row',
      key: `change:${c.id}`,
      type,
      row: changeRow(this.branchName!, this.ctx!.access, type, c, state.changeNames.get(c.id)),
      objectId: c.object_id,
    }));
    for (const n of nodes)
      if (n.kind === 'row' && n.row.address) this.deps.documents.remember(branchUri(n.row.address), n.objectId);
    if (!state.changes.complete) nodes.push({ kind: 'more', type, group: 'changes' });
    return nodes;
  }

  /** The next page of objects, and what the branch did to each of them (one request for the page). */
  private async moreObjects(type: BranchObjectTypeAccess, state: TypeState): Promise<void> {
    const added = await state.objects.more();
    if (added.length === 0) return;
    const objects = await this.deps.documents.objectsClient();
    const page = await objects.changes(this.ctx!.branch.id, type.object_type, {
      objectIds: added.map((o) => o.id),
      limit: added.length,
    });
    for (const c of page.results) state.objectChanges.set(c.object_id, objectChangeOf(c));
    const names = listedFileNames(state.objects as PagedList<ListedObject>);
    this.deps.documents.marks.set(
      state.objects.items.map((o, i) => [
        branchUri(objectDocument(this.branchName!, type.object_type, names[i]!)),
        state.objectChanges.get(o.id) ?? null,
      ]),
    );
  }

  /**
   * The next page of changes, with their objects' file names: one request asks which of their
   * names other objects share (a deleted object opens main's version, named with its id).
   */
  private async moreChanges(type: BranchObjectTypeAccess, state: TypeState): Promise<void> {
    const added = await state.changes.more();
    const named = added.filter((c) => c.action !== 'delete' && typeof c.modified?.name === 'string' && c.modified.name);
    if (named.length > 0) {
      const objects = await this.deps.documents.objectsClient();
      const names = [...new Set(named.map((c) => c.modified!.name as string))];
      const page = await objects.listObjects(this.ctx!, type, { name: names, limit: 1000 });
      const seen = new Map<string, number>();
      for (const o of page.results) if (typeof o.name === 'string') seen.set(o.name, (seen.get(o.name) ?? 0) + 1);
      for (const c of named) {
        const name = c.modified!.name as string;
        state.changeNames.set(c.id, objectFileName({ id: c.object_id, name }, (seen.get(name) ?? 0) !== 1));
      }
    }
    this.deps.documents.marks.set(
      added.map((c) => [
        branchUri(changeRow(this.branchName!, this.ctx!.access, type, c, state.changeNames.get(c.id)).address!),
        objectChangeOf(c),
      ]),
    );
  }

  /** Load more… of a group. */
  async loadMore(node: BranchObjectsNode): Promise<void> {
    if (node.kind !== 'more' || !this.ctx) return;
    const state = this.stateOf(node.type);
    try {
      if (node.group === 'objects') await this.moreObjects(node.type, state);
      else await this.moreChanges(node.type, state);
    } catch (e) {
      void vscode.window.showWarningMessage(presentError('Loading more objects', e, { retryable: false }).message);
    }
    this.changed.fire(
      node.group === 'objects'
        ? this.typeNodes.get(node.type.object_type)
        : this.changeNodes.get(node.type.object_type),
    );
  }
}
