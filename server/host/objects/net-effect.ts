import { sameAttributes, type Attributes } from './attributes';

export type ChangeAction = 'create' | 'update' | 'delete';

/** What a branch holds for one object: its net effect against the baseline. */
export interface NetChange {
  action: ChangeAction;
  /** Main's state at the branch's baseline; null for a create. */
  original: Attributes | null;
  /** The branch's state; null for a delete. */
  modified: Attributes | null;
}

/** A write inside a branch. `before` is the object's state in the branch before the write. */
export type BranchWrite =
  | { op: 'create'; attrs: Attributes }
  | { op: 'update'; before: Attributes; attrs: Attributes }
  | { op: 'delete'; before: Attributes };

/** The branch's change row after a write: unchanged, removed, or set to a new net effect. */
export type NetEffect = { kind: 'unchanged' } | { kind: 'remove' } | { kind: 'set'; change: NetChange };

/**
 * The net effect of a write on what the branch already holds for the object:
 * create then update stays a create; create then delete leaves nothing; update then update
 * keeps the first baseline; updating back to the baseline leaves nothing; update then delete
 * is a delete from the first baseline.
 */
export function nextNetEffect(existing: NetChange | null, write: BranchWrite): NetEffect {
  if (existing === null) {
    switch (write.op) {
      case 'create':
        return { kind: 'set', change: { action: 'create', original: null, modified: write.attrs } };
      case 'update':
        if (sameAttributes(write.before, write.attrs)) return { kind: 'unchanged' };
        return { kind: 'set', change: { action: 'update', original: write.before, modified: write.attrs } };
      case 'delete':
        return { kind: 'set', change: { action: 'delete', original: write.before, modified: null } };
    }
  }
  if (existing.action === 'delete' || write.op === 'create') {
    throw new Error(`cannot ${write.op} an object the branch holds as ${existing.action}`);
  }
  if (existing.action === 'create') {
    if (write.op === 'delete') return { kind: 'remove' };
    if (sameAttributes(existing.modified, write.attrs)) return { kind: 'unchanged' };
    return { kind: 'set', change: { action: 'create', original: null, modified: write.attrs } };
  }
  if (write.op === 'delete')
    return { kind: 'set', change: { action: 'delete', original: existing.original, modified: null } };
  if (sameAttributes(existing.original, write.attrs)) return { kind: 'remove' };
  if (sameAttributes(existing.modified, write.attrs)) return { kind: 'unchanged' };
  return { kind: 'set', change: { action: 'update', original: existing.original, modified: write.attrs } };
}
