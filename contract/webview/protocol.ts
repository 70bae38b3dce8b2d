// Messages between the extension host and the change request webview, as discriminated unions.
// The webview never calls the service itself (its CSP has `connect-src 'none'`): it asks the
// host, which answers with a fresh snapshot and the outcome of the operation.
import type { ChangeDiff } from '../api/branching';
import type {
  ChangeComment,
  ChangeRequest,
  ChangeRequestStatus,
  Evaluation,
  MergeCheck,
  Review,
  ReviewDecision,
} from '../api/change-control';

/** A status move of the request, read from its changelog (`from` is null for its creation). */
export interface LifecycleMove {
  id: number;
  time: string;
  user: string | null;
  from: ChangeRequestStatus | null;
  to: ChangeRequestStatus;
}

/** Everything the webview shows for one change request. */
export interface ChangeRequestSnapshot {
  me: { id: number; username: string; display: string };
  changeRequest: ChangeRequest;
  /** Null when it could not be loaded (see `problems`). */
  evaluation: Evaluation | null;
  checks: MergeCheck[];
  changes: ChangeDiff[];
  comments: ChangeComment[];
  reviews: Review[];
  /** The request's status moves, oldest first; null when the caller may not read the changelog. */
  history: LifecycleMove[] | null;
  /** Parts that failed to load, in words. */
  problems: string[];
  loadedAt: string;
}

/** Buttons of the header, run by the host as the matching commands (with their confirmations). */
export const PANEL_ACTIONS = [
  'submit',
  'return_to_draft',
  'abandon',
  'reopen',
  'run_checks',
  'merge',
  'override',
  /** Sync the branch with main (its dry run first): offered where conflicts are shown. */
  'sync',
] as const;
export type PanelAction = (typeof PANEL_ACTIONS)[number];

export type HostToWebview =
  | { type: 'loading'; changeRequestId: number }
  /** A whole snapshot; `seq` numbers it for the deltas that follow. */
  | { type: 'snapshot'; snapshot: ChangeRequestSnapshot; seq?: number }
  /** What changed since snapshot `baseSeq` (see delta.ts); a panel that does not hold that one says `ready` again. */
  | { type: 'snapshotDelta'; delta: SnapshotDelta }
  | { type: 'loadFailed'; changeRequestId: number; message: string }
  /** Whether the host can post for the panel now: null when it can, else why not (offline, reconnecting…). */
  | { type: 'connection'; blocked: string | null }
  | { type: 'operationDone'; opId: string }
  | { type: 'operationFailed'; opId: string; message: string };

/** Operations that write through the host; each carries an id the answer refers to. */
export type Operation =
  | {
      type: 'addComment';
      opId: string;
      changeDiff: number;
      text: string;
      parent: number | null;
      attribute: string | null;
    }
  | { type: 'editComment'; opId: string; commentId: number; text: string }
  | { type: 'deleteComment'; opId: string; commentId: number }
  | { type: 'setResolved'; opId: string; commentId: number; resolved: boolean }
  | { type: 'submitReview'; opId: string; decision: ReviewDecision; comment: string; reviewId: number | null }
  /** Writes these comments' suggestions into the branch (outdated ones are not offered). */
  | { type: 'applySuggestions'; opId: string; commentIds: number[] }
  | { type: 'panelAction'; opId: string; action: PanelAction };

export type WebviewToHost =
  /** The panel listens (and holds no snapshot the host may send deltas against). */
  | { type: 'ready' }
  | { type: 'refresh' }
  /** The person used the page (typed, chose, pressed): a preview tab becomes a tab of its own. */
  | { type: 'interacted' }
  | { type: 'openLink'; url: string }
  /** Opens one change in VS Code's diff editor (the host runs `changeControl.openChangeDiff`). */
  | { type: 'openDiff'; changeDiff: number }
  /** Opens every change of the request in one multi-diff editor (`changeControl.openAllChanges`). */
  | { type: 'openAllChanges' }
  /** Opens one change against main as it is now (`changeControl.compareWithMain`): a conflicting object's diff. */
  | { type: 'compareWithMain'; changeDiff: number }
  | Operation;

/** What the webview keeps with `setState` (and the serializer reads back). */
export interface PersistedState {
  changeRequestId: number;
  /** Unsent text per composer key. */
  drafts: Record<string, string>;
  /** Composers shown (the review form is always shown). */
  openComposers: string[];
  /** Null until the reviewer picks one: no decision is preselected. */
  reviewDecision: ReviewDecision | null;
  /** Changes that show every attribute rather than the changed ones. */
  expandedChanges: number[];
  /** Changes folded to their title line. */
  collapsedChanges: number[];
  /** Only changes whose object type or name contains this text are listed. */
  filter: string;
}

export const OPERATION_TYPES = [
  'addComment',
  'editComment',
  'deleteComment',
  'setResolved',
  'submitReview',
  'applySuggestions',
  'panelAction',
] as const satisfies readonly Operation['type'][];

export function isOperation(message: WebviewToHost): message is Operation {
  return (OPERATION_TYPES as readonly string[]).includes(message.type);
}

// ---- Refreshes as what changed (made and applied in delta.ts) ---------------------------------

/** Parts of the snapshot sent whole when they differ. */
export const WHOLE_PARTS = [
  'me',
  'changeRequest',
  'evaluation',
  'checks',
  'reviews',
  'history',
  'problems',
  'loadedAt',
] as const;
export type WholePart = (typeof WHOLE_PARTS)[number];

/** A list as the ids of all its items, in order, and the items that are new or differ. */
export interface ListDelta<T> {
  ids: number[];
  items: T[];
}

export interface SnapshotDelta {
  changeRequestId: number;
  /** The snapshot this applies to, and the one it makes. */
  baseSeq: number;
  seq: number;
  parts: Partial<Pick<ChangeRequestSnapshot, WholePart>>;
  changes?: ListDelta<ChangeDiff>;
  comments?: ListDelta<ChangeComment>;
}

export type SnapshotMessage =
  { type: 'snapshot'; snapshot: ChangeRequestSnapshot; seq: number } | { type: 'snapshotDelta'; delta: SnapshotDelta };
