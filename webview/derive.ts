// Values the renderers compute from the state, each kept while its inputs keep their identity
// (snapshots share what did not change, see share.ts): a refresh that changed one comment does
// not regroup the threads of 2,000 changes twice, and a scroll recomputes nothing.
import type { ChangeDiff } from '../contract/api/branching';
import type { ChangeComment } from '../contract/api/change-control';
import { parseComposerKey, type ViewState } from './state';
import type { Thread } from '../contract/threads';
import { threadComments, threadsByChange } from './threads';

function memo<A, R>(fn: (a: A) => R): (a: A) => R {
  let last: { a: A; r: R } | null = null;
  return (a) => {
    if (last && Object.is(last.a, a)) return last.r;
    const r = fn(a);
    last = { a, r };
    return r;
  };
}

function memo2<A, B, R>(fn: (a: A, b: B) => R): (a: A, b: B) => R {
  let last: { a: A; b: B; r: R } | null = null;
  return (a, b) => {
    if (last && Object.is(last.a, a) && Object.is(last.b, b)) return last.r;
    const r = fn(a, b);
    last = { a, b, r };
    return r;
  };
}

export interface CommentIndex {
  /** Threads per change id (null: anchored to no change). */
  threads: Map<number | null, Thread[]>;
  /** The change each comment is anchored to. */
  changeOf: Map<number, number | null>;
  /** Every comment of each change's threads, in order (compared item by item to tell whether they changed). */
  flat: Map<number | null, ChangeComment[]>;
}

/** Only changes whose object type, name or action contains the filter text (case-insensitive). */
export function filterChanges(changes: readonly ChangeDiff[], filter: string): readonly ChangeDiff[] {
  const f = filter.trim().toLowerCase();
  if (!f) return changes;
  return changes.filter(
    (c) => c.object_repr.toLowerCase().includes(f) || c.object_type.toLowerCase().includes(f) || c.action.includes(f),
  );
}

export class Derived {
  readonly comments = memo((comments: readonly ChangeComment[]): CommentIndex => {
    const threads = threadsByChange(comments);
    const changeOf = new Map(comments.map((c) => [c.id, c.change_diff]));
    const flat = new Map<number | null, ChangeComment[]>();
    for (const [id, list] of threads) flat.set(id, threadComments(list));
    return { threads, changeOf, flat };
  });

  readonly visible = memo2(filterChanges);

  readonly knownChanges = memo((changes: readonly ChangeDiff[]) => new Set(changes.map((c) => c.id)));

  /** Threads anchored to no change of the branch (the change is gone, or none was named). */
  readonly orphans = memo2((index: CommentIndex, known: Set<number>): Thread[] =>
    [...index.threads.entries()].filter(([id]) => id === null || !known.has(id)).flatMap(([, list]) => list),
  );

  /**
   * What of the panel's own state touches one change: its open composers, operations in flight
   * and errors, as one string (equal strings: nothing to redraw).
   */
  uiOf(state: ViewState, changeId: number, index: CommentIndex): string {
    const mine = (key: string): boolean => {
      const k = parseComposerKey(key);
      if (k) {
        if (k.kind === 'comment') return k.changeId === changeId;
        if (k.kind === 'reply') return index.changeOf.get(k.rootId) === changeId;
        if (k.kind === 'edit') return index.changeOf.get(k.commentId) === changeId;
        return false;
      }
      const m = /^(delete|resolve|apply):(\d+)$/.exec(key);
      return !!m && index.changeOf.get(Number(m[2])) === changeId;
    };
    const open = state.openComposers.filter(mine);
    const pending = Object.values(state.pending).filter(mine);
    const errors = Object.entries(state.errors)
      .filter(([k]) => mine(k))
      .map(([k, v]) => `${k}=${v}`);
    if (!open.length && !pending.length && !errors.length) return '';
    return `${open.join(',')}|${pending.join(',')}|${errors.join('\u0000')}`;
  }
}
