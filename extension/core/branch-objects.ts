// The Branch Objects view as data: a branch's object types, under each the branch's changes of
// that type and then every object the branch shows (main's included), a page at a time, each
// object marked with what the branch did to it. No VS Code here.
import type { BranchAccess, BranchObjectTypeAccess, ChangeAction, ChangeDiff } from '../../contract/api/branching';
import { CHANGE_ACTION_LABEL } from '../../contract/labels';
import {
  objectDocument,
  pageFileNames,
  objectFileName,
  type DocumentAddress,
  type NamedObject,
} from './branch-documents';
import { changeKind, type ChangeKind } from './change-documents';

/** Objects and changes read per page: what a tree shows at once, never a whole branch. */
export const PAGE_SIZE = 100;

export interface Page<T> {
  count: number;
  results: T[];
}

/**
 * A list read a page at a time, in the service's order. Each page asks for one item more than it
 * keeps (`peek`), so that a name the next page shares is known (file names stay unique).
 */
export class PagedList<T> {
  items: T[] = [];
  total: number | null = null;
  peek: T | undefined;

  constructor(
    private readonly fetch: (offset: number, limit: number) => Promise<Page<T>>,
    readonly pageSize = PAGE_SIZE,
  ) {}

  get complete(): boolean {
    return this.total !== null && this.items.length >= this.total;
  }

  /** Reads the next page; returns what it added. */
  async more(): Promise<T[]> {
    if (this.complete) return [];
    const page = await this.fetch(this.items.length, this.pageSize + 1);
    this.total = page.count;
    const added = page.results.slice(0, this.pageSize);
    this.peek = page.results[this.pageSize];
    this.items.push(...added);
    return added;
  }
}

/** What the branch did to an object, as a row and a document decoration show it. */
export interface ObjectChange {
  id: number;
  action: ChangeAction;
  conflicts: string[] | null;
}

export function objectChangeOf(c: Pick<ChangeDiff, 'id' | 'action' | 'conflicts'>): ObjectChange {
  return { id: c.id, action: c.action, conflicts: c.conflicts };
}

/** An object as a listing shows it. */
export interface ListedObject extends NamedObject {
  display: string;
}

/** File names of the objects listed so far (name order), unique with the next one known. */
export function listedFileNames(list: PagedList<ListedObject>): string[] {
  return pageFileNames(list.items, { after: list.peek });
}

/** One row of the view, as plain data. */
export interface RowView {
  label: string;
  description?: string;
  tooltip: string;
  /** `branchType;`, `branchObject;` then `changed;`, `deleted;`, `revertable;`, `deletable;`; `more;`. */
  contextValue: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
  /** The document a click opens (and decorations are found by). */
  address?: DocumentAddress;
  icon?: string;
}

const ACTION_WORD: Record<ChangeKind, string> = {
  added: 'added in the branch',
  modified: 'modified in the branch',
  deleted: 'deleted in the branch',
  conflicted: 'conflicts with main',
};

export function typeRow(type: BranchObjectTypeAccess, changed: number | null): RowView {
  return {
    label: type.display,
    description: changed === null ? type.object_type : `${type.object_type}${changed ? ` · ${changed} changed` : ''}`,
    tooltip: `${type.display} objects in the branch (main's included)${changed ? `; the branch changes ${changed}` : ''}`,
    contextValue: `branchType;${type.add ? 'addable;' : ''}`,
    collapsible: 'collapsed',
    icon: 'symbol-class',
  };
}

export function changesGroupRow(count: number): RowView {
  return {
    label: `Changed in this branch (${count})`,
    tooltip: "The branch's changes of this type: created, modified and deleted objects.",
    contextValue: 'branchChanges;',
    collapsible: 'expanded',
    icon: 'diff',
  };
}

/** Whether the user may act on an object of a type in this branch: delete it, revert the branch's change of it. */
function objectContext(access: BranchAccess, type: BranchObjectTypeAccess, change: ObjectChange | null): string {
  const flags = ['branchObject'];
  if (change) flags.push('changed');
  if (change?.action === 'delete') flags.push('deleted');
  if (change && access.write) flags.push('revertable');
  if (access.write && type.delete && change?.action !== 'delete') flags.push('deletable');
  return `${flags.join(';')};`;
}

/** An object the branch shows: its name, what the branch did to it, its document. */
export function objectRow(
  branch: string,
  access: BranchAccess,
  type: BranchObjectTypeAccess,
  object: ListedObject,
  fileName: string,
  change: ObjectChange | null,
): RowView {
  const kind = change ? changeKind(change) : null;
  return {
    label: object.display,
    description: kind ? CHANGE_ACTION_LABEL[change!.action] + (kind === 'conflicted' ? ' · conflicts' : '') : undefined,
    tooltip: `${type.display} ${object.id}${kind ? `, ${ACTION_WORD[kind]}` : ''} — ${fileName}`,
    contextValue: objectContext(access, type, change),
    collapsible: 'none',
    address: objectDocument(branch, type.object_type, fileName),
  };
}

/**
 * A change of the branch, in the changes group: its object's document (main's version for a
 * deleted object, which the branch no longer shows; the id in the name, since a change does not
 * say whether the name is unique: `fileName` when the caller knows better).
 */
export function changeRow(
  branch: string,
  access: BranchAccess,
  type: BranchObjectTypeAccess,
  change: Pick<ChangeDiff, 'id' | 'object_id' | 'object_repr' | 'action' | 'conflicts' | 'modified' | 'original'>,
  fileName?: string,
): RowView {
  const kind = changeKind(change);
  const state = change.modified ?? change.original ?? {};
  const name = fileName ?? objectFileName({ id: change.object_id, name: state.name }, true);
  return {
    label: change.object_repr,
    description: CHANGE_ACTION_LABEL[change.action] + (kind === 'conflicted' ? ' · conflicts' : ''),
    tooltip: `${type.display} ${change.object_id}, ${ACTION_WORD[kind]}${change.action === 'delete' ? ' (opens main’s version)' : ''}`,
    contextValue: objectContext(access, type, objectChangeOf(change)),
    collapsible: 'none',
    address: objectDocument(branch, type.object_type, name, change.action === 'delete' ? 'main' : 'branch'),
  };
}

export function moreRow(shown: number, total: number | null, what: string): RowView {
  return {
    label: 'Load more…',
    description: total === null ? undefined : `${shown} of ${total} ${what}`,
    tooltip: `Shows the next ${PAGE_SIZE} ${what}.`,
    contextValue: 'more;',
    collapsible: 'none',
    icon: 'ellipsis',
  };
}

/** The row shown when a list cannot be read, in words. */
export function problemRow(message: string): RowView {
  return { label: message, tooltip: message, contextValue: 'problem;', collapsible: 'none', icon: 'warning' };
}
