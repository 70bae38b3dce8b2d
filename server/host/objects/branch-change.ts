import type { BranchChangeRow } from '../db/tables';
import { parseAttributes, type Attributes } from './attributes';
import type { NetChange } from './net-effect';

/** A branch's change row with its JSON parsed. */
export interface BranchChange extends NetChange {
  id: number;
  branchId: number;
  objectType: string;
  objectId: number;
  premerge: PremergeState | null;
  created: string;
  lastUpdated: string;
  /** Moved by every write of the change (`versions.ts`). */
  version: number;
}

/** Main's state of the object just before a merge applied the change (null: it did not exist). */
export interface PremergeState {
  object: { attrs: Attributes; created: string; lastUpdated: string } | null;
}

export function parseChangeRow(row: BranchChangeRow): BranchChange {
  return {
    id: row.id,
    branchId: row.branch_id,
    objectType: row.object_type,
    objectId: row.object_id,
    action: row.action,
    original: parseAttributes(row.original),
    modified: parseAttributes(row.modified),
    premerge: row.premerge === null ? null : (JSON.parse(row.premerge) as PremergeState),
    created: row.created,
    lastUpdated: row.last_updated,
    version: row.version,
  };
}
