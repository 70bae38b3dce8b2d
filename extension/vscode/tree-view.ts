// Plain tree item data (core/tree-items.ts) as vscode.TreeItems, and a provider over nodes.
import * as vscode from 'vscode';
import { DOCUMENT_SCHEME } from '../core/change-documents';
import { nodeItem, type TreeItemData, type TreeNode } from '../core/tree-items';

const COLLAPSIBLE = {
  none: vscode.TreeItemCollapsibleState.None,
  collapsed: vscode.TreeItemCollapsibleState.Collapsed,
  expanded: vscode.TreeItemCollapsibleState.Expanded,
} as const;

export function toTreeItem(data: TreeItemData): vscode.TreeItem {
  const item = new vscode.TreeItem(data.label, COLLAPSIBLE[data.collapsible]);
  item.id = data.id;
  item.description = data.description;
  if (data.tooltip) {
    const md = new vscode.MarkdownString(data.tooltip);
    md.isTrusted = false;
    md.supportHtml = false;
    item.tooltip = md;
  }
  if (data.icon)
    item.iconPath = new vscode.ThemeIcon(
      data.icon.id,
      data.icon.color ? new vscode.ThemeColor(data.icon.color) : undefined,
    );
  item.contextValue = data.contextValue;
  if (data.checkbox) {
    item.checkboxState = {
      state: data.checkbox.checked ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked,
      tooltip: data.checkbox.tooltip,
    };
  }
  if (data.resource) item.resourceUri = vscode.Uri.from({ scheme: DOCUMENT_SCHEME, ...data.resource });
  if (data.command)
    item.command = { command: data.command.id, title: data.command.title, arguments: data.command.args };
  return item;
}

/** A tree whose nodes come from `roots()` and `children()`; `refresh()` re-reads them. */
export class NodeTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly source: { roots(): TreeNode[]; children(node: TreeNode): TreeNode[] }) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    return toTreeItem(nodeItem(node));
  }

  getChildren(node?: TreeNode): TreeNode[] {
    return node ? this.source.children(node) : this.source.roots();
  }

  dispose(): void {
    this.changed.dispose();
  }
}
