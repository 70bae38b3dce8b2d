// The webview's state and its reducer: host messages and user events in, a new state out.
// Pure (no DOM), so the whole behaviour of the panel is testable in plain Node.
import type { ReviewDecision } from '../contract/api/change-control';
import type {
  ChangeRequestSnapshot,
  HostToWebview,
  Operation,
  PanelAction,
  PersistedState,
  SnapshotDelta,
} from '../contract/webview/protocol';
import { applyDelta } from '../contract/webview/delta';
import { shareEqual } from '../contract/webview/share';

/** The panel's state: what it keeps across reloads (PersistedState, the request id aside) and what it is showing. */
export interface ViewState extends Omit<PersistedState, 'changeRequestId'> {
  changeRequestId: number | null;
  phase: 'waiting' | 'loading' | 'ready' | 'failed';
  /** A refresh is under way while the last snapshot stays shown. */
  refreshing: boolean;
  snapshot: ChangeRequestSnapshot | null;
  /** The number of the snapshot shown (deltas apply to it). */
  seq: number | null;
  loadError: string | null;
  /** How many of the latest timeline entries are shown. */
  timelineLimit: number;
  /** Operations sent and not yet answered: opId -> composer or action key. */
  pending: Record<string, string>;
  /** The last failure per composer or action key. */
  errors: Record<string, string>;
  /** Why nothing can be posted now (the host is offline), or null. Drafts stay editable meanwhile. */
  offline: string | null;
}

export type ViewAction =
  | HostToWebview
  | { type: 'restored'; state: PersistedState }
  | { type: 'draftChanged'; key: string; text: string }
  | { type: 'composerOpened'; key: string; text?: string }
  | { type: 'composerClosed'; key: string }
  | { type: 'decisionChanged'; decision: ReviewDecision }
  | { type: 'toggleAllAttributes'; changeId: number }
  | { type: 'toggleCollapsed'; changeId: number }
  | { type: 'collapseAll'; collapsed: boolean }
  | { type: 'filterChanged'; text: string }
  | { type: 'showMoreTimeline' }
  | { type: 'composerError'; key: string; message: string }
  | { type: 'operationSent'; opId: string; key: string };

// ---- composer keys ---------------------------------------------------------------------

export const REVIEW_KEY = 'review';
/** A new thread on a change, on one of its attributes when `attribute` is given. */
export const newThreadKey = (changeId: number, attribute: string | null = null) =>
  attribute ? `comment:${changeId}:${attribute}` : `comment:${changeId}`;
export const replyKey = (rootId: number) => `reply:${rootId}`;
export const editKey = (commentId: number) => `edit:${commentId}`;
export const actionKey = (action: PanelAction) => `action:${action}`;
export const deleteKey = (commentId: number) => `delete:${commentId}`;
export const resolveKey = (commentId: number) => `resolve:${commentId}`;
/** Applying one comment's suggestion, or every applicable one of the request. */
export const applyKey = (commentId: number) => `apply:${commentId}`;
export const APPLY_ALL_KEY = 'apply-all';

export type ComposerKey =
  | { kind: 'review' }
  | { kind: 'comment'; changeId: number; attribute: string | null }
  | { kind: 'reply'; rootId: number }
  | { kind: 'edit'; commentId: number };

export function parseComposerKey(key: string): ComposerKey | null {
  if (key === REVIEW_KEY) return { kind: 'review' };
  const m = /^(comment|reply|edit):(\d+)(?::(.{1,200}))?$/.exec(key);
  if (!m) return null;
  const n = Number(m[2]);
  if (m[1] === 'comment') return { kind: 'comment', changeId: n, attribute: m[3] ?? null };
  if (m[3] !== undefined) return null;
  if (m[1] === 'reply') return { kind: 'reply', rootId: n };
  return { kind: 'edit', commentId: n };
}

/** Timeline entries shown at first, and added by each "Show earlier". */
export const TIMELINE_PAGE = 30;

export const initialState: ViewState = {
  changeRequestId: null,
  phase: 'waiting',
  refreshing: false,
  snapshot: null,
  seq: null,
  loadError: null,
  drafts: {},
  openComposers: [],
  reviewDecision: null,
  expandedChanges: [],
  collapsedChanges: [],
  filter: '',
  timelineLimit: TIMELINE_PAGE,
  pending: {},
  errors: {},
  offline: null,
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
        collapsedChanges: [...action.state.collapsedChanges],
        filter: action.state.filter,
      };
    case 'loading': {
      const same = state.changeRequestId === action.changeRequestId && state.snapshot !== null;
      if (same) return { ...state, refreshing: true };
      // Another request in this panel (a preview tab reused): nothing of the previous one is kept.
      const other = state.changeRequestId !== null && state.changeRequestId !== action.changeRequestId;
      return {
        ...state,
        changeRequestId: action.changeRequestId,
        phase: 'loading',
        refreshing: false,
        snapshot: null,
        loadError: null,
        ...(other
          ? {
              drafts: {},
              openComposers: [],
              reviewDecision: null,
              expandedChanges: [],
              collapsedChanges: [],
              filter: '',
              errors: {},
              timelineLimit: TIMELINE_PAGE,
            }
          : {}),
      };
    }
    case 'snapshot': {
      const sameRequest = state.changeRequestId === action.snapshot.changeRequest.id;
      // What did not change keeps its identity: the view re-renders only what differs.
      const snapshot = sameRequest && state.snapshot ? shareEqual(state.snapshot, action.snapshot) : action.snapshot;
      return {
        ...state,
        changeRequestId: snapshot.changeRequest.id,
        phase: 'ready',
        refreshing: false,
        snapshot,
        seq: action.seq ?? null,
        loadError: null,
        drafts: sameRequest ? state.drafts : {},
        openComposers: liveComposers(sameRequest ? state.openComposers : [], snapshot),
        expandedChanges: sameRequest ? state.expandedChanges : [],
        collapsedChanges: sameRequest ? state.collapsedChanges : [],
        filter: sameRequest ? state.filter : '',
        reviewDecision: sameRequest ? state.reviewDecision : null,
        timelineLimit: sameRequest ? state.timelineLimit : TIMELINE_PAGE,
        errors: sameRequest ? state.errors : {},
      };
    }
    case 'snapshotDelta': {
      const next = fitsDelta(state, action.delta) ? applyDelta(state.snapshot!, action.delta) : null;
      if (!next) return state;
      return reduce(state, { type: 'snapshot', snapshot: next, seq: action.delta.seq });
    }
    case 'loadFailed':
      if (state.snapshot && state.changeRequestId === action.changeRequestId) {
        return { ...state, refreshing: false, loadError: action.message };
      }
      return {
        ...state,
        changeRequestId: action.changeRequestId,
        phase: 'failed',
        refreshing: false,
        snapshot: null,
        loadError: action.message,
      };
    case 'draftChanged':
      return { ...state, drafts: { ...state.drafts, [action.key]: action.text } };
    case 'composerOpened': {
      const drafts =
        action.text !== undefined && !state.drafts[action.key]
          ? { ...state.drafts, [action.key]: action.text }
          : state.drafts;
      const open = state.openComposers.includes(action.key)
        ? state.openComposers
        : [...state.openComposers, action.key];
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
      return {
        ...state,
        expandedChanges: has
          ? state.expandedChanges.filter((id) => id !== action.changeId)
          : [...state.expandedChanges, action.changeId],
      };
    }
    case 'toggleCollapsed': {
      const has = state.collapsedChanges.includes(action.changeId);
      return {
        ...state,
        collapsedChanges: has
          ? state.collapsedChanges.filter((id) => id !== action.changeId)
          : [...state.collapsedChanges, action.changeId],
      };
    }
    case 'collapseAll':
      return {
        ...state,
        collapsedChanges: action.collapsed && state.snapshot ? state.snapshot.changes.map((c) => c.id) : [],
      };
    case 'filterChanged':
      return { ...state, filter: action.text };
    case 'showMoreTimeline':
      return { ...state, timelineLimit: state.timelineLimit + TIMELINE_PAGE };
    case 'composerError':
      return { ...state, errors: { ...state.errors, [action.key]: action.message } };
    case 'connection':
      return { ...state, offline: action.blocked };
    case 'operationSent':
      return {
        ...state,
        pending: { ...state.pending, [action.opId]: action.key },
        errors: without(state.errors, action.key),
      };
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
      return {
        ...state,
        pending: without(state.pending, action.opId),
        errors: { ...state.errors, [key]: action.message },
      };
    }
  }
}

/** A delta applies to the snapshot shown only if it was made against it. */
export function fitsDelta(state: ViewState, delta: SnapshotDelta): boolean {
  return (
    state.snapshot !== null && state.seq === delta.baseSeq && state.snapshot.changeRequest.id === delta.changeRequestId
  );
}

/** The acts that post to the service: blocked (and shown disabled, with the reason) while offline. */
export const POSTING_ACTS = ['send', 'panel-action', 'delete-comment', 'resolve'] as const;

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
    collapsedChanges: state.collapsedChanges,
    filter: state.filter,
  };
}

/** Why the review cannot be sent as it stands, or null. */
export function reviewProblem(state: ViewState): string | null {
  if (state.reviewDecision === null) return 'Choose a decision first: Approve, Request changes or Comment.';
  if (state.reviewDecision === 'reject' && !(state.drafts[REVIEW_KEY] ?? '').trim())
    return 'Requesting changes needs a comment saying what to change.';
  return null;
}

/** The operation a composer's Send button stands for, or null when it cannot be sent. */
export function operationFor(state: ViewState, key: string, opId: string): Operation | null {
  const k = parseComposerKey(key);
  const snapshot = state.snapshot;
  if (!k || !snapshot) return null;
  const text = state.drafts[key] ?? '';
  switch (k.kind) {
    case 'review': {
      if (state.reviewDecision === null) return null;
      const mine = snapshot.reviews.find((r) => r.reviewer.id === snapshot.me.id);
      return {
        type: 'submitReview',
        opId,
        decision: state.reviewDecision,
        comment: text,
        reviewId: mine ? mine.id : null,
      };
    }
    case 'comment':
      return { type: 'addComment', opId, changeDiff: k.changeId, text, parent: null, attribute: k.attribute };
    case 'reply': {
      const root = snapshot.comments.find((c) => c.id === k.rootId);
      if (!root || root.change_diff === null) return null;
      return {
        type: 'addComment',
        opId,
        changeDiff: root.change_diff,
        text,
        parent: root.id,
        attribute: root.attribute,
      };
    }
    case 'edit':
      return { type: 'editComment', opId, commentId: k.commentId, text };
  }
}
