// The webview's state and its reducer: host messages and user events in, a new state out.
// Pure (no DOM), so the whole behaviour of the panel is testable in plain Node.
import type { ChangeComment, ReviewDecision } from '../server/contract/change-control';
import type { ChangeRequestSnapshot, HostToWebview, Operation, PanelAction, PersistedState } from './protocol';

export interface ViewState {
  changeRequestId: number | null;
  phase: 'waiting' | 'loading' | 'ready' | 'failed';
  /** A refresh is under way while the last snapshot stays shown. */
  refreshing: boolean;
  snapshot: ChangeRequestSnapshot | null;
  loadError: string | null;
  /** Unsent text per composer key (see composer keys below). */
  drafts: Record<string, string>;
  /** Composers shown (the review form is always shown). */
  openComposers: string[];
  reviewDecision: ReviewDecision;
  /** Changes that show every attribute rather than the changed ones. */
  expandedChanges: number[];
  /** Operations sent and not yet answered: opId -> composer or action key. */
  pending: Record<string, string>;
  /** The last failure per composer or action key. */
  errors: Record<string, string>;
}

export type ViewAction =
  | HostToWebview
  | { type: 'restored'; state: PersistedState }
  | { type: 'draftChanged'; key: string; text: string }
  | { type: 'composerOpened'; key: string; text?: string }
  | { type: 'composerClosed'; key: string }
  | { type: 'decisionChanged'; decision: ReviewDecision }
  | { type: 'toggleAllAttributes'; changeId: number }
  | { type: 'operationSent'; opId: string; key: string };

// ---- composer keys ---------------------------------------------------------------------

export const REVIEW_KEY = 'review';
export const newThreadKey = (changeId: number) => `comment:${changeId}`;
export const replyKey = (rootId: number) => `reply:${rootId}`;
export const editKey = (commentId: number) => `edit:${commentId}`;
export const actionKey = (action: PanelAction) => `action:${action}`;
export const deleteKey = (commentId: number) => `delete:${commentId}`;
export const resolveKey = (commentId: number) => `resolve:${commentId}`;

export type ComposerKey =
  | { kind: 'review' }
  | { kind: 'comment'; changeId: number }
  | { kind: 'reply'; rootId: number }
  | { kind: 'edit'; commentId: number };

export function parseComposerKey(key: string): ComposerKey | null {
  if (key === REVIEW_KEY) return { kind: 'review' };
  const m = /^(comment|reply|edit):(\d+)$/.exec(key);
  if (!m) return null;
  const n = Number(m[2]);
  if (m[1] === 'comment') return { kind: 'comment', changeId: n };
  if (m[1] === 'reply') return { kind: 'reply', rootId: n };
  return { kind: 'edit', commentId: n };
}

export const initialState: ViewState = {
  changeRequestId: null,
  phase: 'waiting',
  refreshing: false,
  snapshot: null,
  loadError: null,
  drafts: {},
  openComposers: [],
  reviewDecision: 'approve',
  expandedChanges: [],
  pending: {},
  errors: {},
};

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const { [key]: _dropped, ...rest } = record;
  return rest;
}

/** Composers whose comment no longer exists are closed when a snapshot arrives. */
function liveComposers(keys: string[], snapshot: ChangeRequestSnapshot): string[] {
  const comments = new Set(snapshot.comments.map((c) => c.id));
  const changes = new Set(snapshot.changes.map((c) => c.id));
  return keys.filter((key) => {
    const k = parseComposerKey(key);
    if (!k) return false;
    if (k.kind === 'reply') return comments.has(k.rootId);
    if (k.kind === 'edit') return comments.has(k.commentId);
    if (k.kind === 'comment') return changes.has(k.changeId);
    return true;
  });
}

export function reduce(state: ViewState, action: ViewAction): ViewState {
  switch (action.type) {
    case 'restored':
      return {
        ...state,
        changeRequestId: action.state.changeRequestId,
        drafts: { ...action.state.drafts },
        openComposers: [...action.state.openComposers],
        reviewDecision: action.state.reviewDecision,
        expandedChanges: [...action.state.expandedChanges],
      };
    case 'loading': {
      const same = state.changeRequestId === action.changeRequestId && state.snapshot !== null;
      if (same) return { ...state, refreshing: true };
      return { ...state, changeRequestId: action.changeRequestId, phase: 'loading', refreshing: false, snapshot: null, loadError: null };
    }
    case 'snapshot': {
      const snapshot = action.snapshot;
      const sameRequest = state.changeRequestId === snapshot.changeRequest.id;
      return {
        ...state,
        changeRequestId: snapshot.changeRequest.id,
        phase: 'ready',
        refreshing: false,
        snapshot,
        loadError: null,
        drafts: sameRequest ? state.drafts : {},
        openComposers: liveComposers(sameRequest ? state.openComposers : [], snapshot),
        expandedChanges: sameRequest ? state.expandedChanges : [],
        errors: sameRequest ? state.errors : {},
      };
    }
    case 'loadFailed':
      if (state.snapshot && state.changeRequestId === action.changeRequestId) {
        return { ...state, refreshing: false, loadError: action.message };
      }
      return { ...state, changeRequestId: action.changeRequestId, phase: 'failed', refreshing: false, snapshot: null, loadError: action.message };
    case 'draftChanged':
      return { ...state, drafts: { ...state.drafts, [action.key]: action.text } };
    case 'composerOpened': {
      const drafts = action.text !== undefined && !state.drafts[action.key] ? { ...state.drafts, [action.key]: action.text } : state.drafts;
      const open = state.openComposers.includes(action.key) ? state.openComposers : [...state.openComposers, action.key];
      return { ...state, drafts, openComposers: open, errors: without(state.errors, action.key) };
    }
    case 'composerClosed':
      return {
        ...state,
        drafts: without(state.drafts, action.key),
        openComposers: state.openComposers.filter((k) => k !== action.key),
        errors: without(state.errors, action.key),
      };
    case 'decisionChanged':
      return { ...state, reviewDecision: action.decision, errors: without(state.errors, REVIEW_KEY) };
    case 'toggleAllAttributes': {
      const has = state.expandedChanges.includes(action.changeId);
      return { ...state, expandedChanges: has ? state.expandedChanges.filter((id) => id !== action.changeId) : [...state.expandedChanges, action.changeId] };
    }
    case 'operationSent':
      return { ...state, pending: { ...state.pending, [action.opId]: action.key }, errors: without(state.errors, action.key) };
    case 'operationDone': {
      const key = state.pending[action.opId];
      if (key === undefined) return state;
      const pending = without(state.pending, action.opId);
      if (parseComposerKey(key) === null) return { ...state, pending };
      return {
        ...state,
        pending,
        drafts: without(state.drafts, key),
        openComposers: key === REVIEW_KEY ? state.openComposers : state.openComposers.filter((k) => k !== key),
        errors: without(state.errors, key),
      };
    }
    case 'operationFailed': {
      const key = state.pending[action.opId];
      if (key === undefined) return state;
      return { ...state, pending: without(state.pending, action.opId), errors: { ...state.errors, [key]: action.message } };
    }
  }
}

/** True while an operation for this key is in flight (its buttons are disabled). */
export function isPending(state: ViewState, key: string): boolean {
  return Object.values(state.pending).includes(key);
}

export function toPersisted(state: ViewState): PersistedState | null {
  if (state.changeRequestId === null) return null;
  return {
    changeRequestId: state.changeRequestId,
    drafts: state.drafts,
    openComposers: state.openComposers,
    reviewDecision: state.reviewDecision,
    expandedChanges: state.expandedChanges,
  };
}

/** Root comments with their replies, per change (threads are one level deep). */
export interface Thread {
  root: ChangeComment;
  replies: ChangeComment[];
}

export function threadsByChange(comments: readonly ChangeComment[]): Map<number | null, Thread[]> {
  const byId = new Map(comments.map((c) => [c.id, c]));
  const threads = new Map<number, Thread>();
  const ordered = [...comments].sort((a, b) => a.created.localeCompare(b.created) || a.id - b.id);
  for (const c of ordered) {
    if (c.parent === null || !byId.has(c.parent)) threads.set(c.id, { root: c, replies: [] });
  }
  for (const c of ordered) {
    if (c.parent === null || !byId.has(c.parent)) continue;
    // A reply to a reply is flattened into the root's thread.
    let root = byId.get(c.parent)!;
    while (root.parent !== null && byId.has(root.parent)) root = byId.get(root.parent)!;
    threads.get(root.id)?.replies.push(c);
  }
  const out = new Map<number | null, Thread[]>();
  for (const t of threads.values()) {
    const list = out.get(t.root.change_diff) ?? [];
    list.push(t);
    out.set(t.root.change_diff, list);
  }
  return out;
}

/** The operation a composer's Send button stands for, or null when it cannot be sent. */
export function operationFor(state: ViewState, key: string, opId: string): Operation | null {
  const k = parseComposerKey(key);
  const snapshot = state.snapshot;
  if (!k || !snapshot) return null;
  const text = state.drafts[key] ?? '';
  switch (k.kind) {
    case 'review': {
      const mine = snapshot.reviews.find((r) => r.reviewer.id === snapshot.me.id);
      return { type: 'submitReview', opId, decision: state.reviewDecision, comment: text, reviewId: mine ? mine.id : null };
    }
    case 'comment':
      return { type: 'addComment', opId, changeDiff: k.changeId, text, parent: null };
    case 'reply': {
      const root = snapshot.comments.find((c) => c.id === k.rootId);
      if (!root || root.change_diff === null) return null;
      return { type: 'addComment', opId, changeDiff: root.change_diff, text, parent: root.id };
    }
    case 'edit':
      return { type: 'editComment', opId, commentId: k.commentId, text };
  }
}
