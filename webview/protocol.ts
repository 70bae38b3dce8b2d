// Messages between the extension host and the change request webview, as discriminated unions.
// The webview never calls the service itself (its CSP has `connect-src 'none'`): it asks the
// host, which answers with a fresh snapshot and the outcome of the operation.
import type { ChangeDiff } from '../server/contract/branching';
import type { ChangeComment, ChangeRequest, Evaluation, MergeCheck, Review, ReviewDecision } from '../server/contract/change-control';

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
  /** Parts that failed to load, in words. */
  problems: string[];
  loadedAt: string;
}

/** Buttons of the header, run by the host as the matching commands (with their confirmations). */
export const PANEL_ACTIONS = ['submit', 'return_to_draft', 'abandon', 'reopen', 'run_checks', 'merge'] as const;
export type PanelAction = (typeof PANEL_ACTIONS)[number];

export type HostToWebview =
  | { type: 'loading'; changeRequestId: number }
  | { type: 'snapshot'; snapshot: ChangeRequestSnapshot }
  | { type: 'loadFailed'; changeRequestId: number; message: string }
  | { type: 'operationDone'; opId: string }
  | { type: 'operationFailed'; opId: string; message: string };

/** Operations that write through the host; each carries an id the answer refers to. */
export type Operation =
  | { type: 'addComment'; opId: string; changeDiff: number; text: string; parent: number | null }
  | { type: 'editComment'; opId: string; commentId: number; text: string }
  | { type: 'deleteComment'; opId: string; commentId: number }
  | { type: 'setResolved'; opId: string; commentId: number; resolved: boolean }
  | { type: 'submitReview'; opId: string; decision: ReviewDecision; comment: string; reviewId: number | null }
  | { type: 'panelAction'; opId: string; action: PanelAction };

export type WebviewToHost =
  | { type: 'ready' }
  | { type: 'refresh' }
  | { type: 'openLink'; url: string }
  | Operation;

/** What the webview keeps with `setState` (and the serializer reads back). */
export interface PersistedState {
  changeRequestId: number;
  drafts: Record<string, string>;
  openComposers: string[];
  reviewDecision: ReviewDecision;
  expandedChanges: number[];
}

export const OPERATION_TYPES = ['addComment', 'editComment', 'deleteComment', 'setResolved', 'submitReview', 'panelAction'] as const satisfies readonly Operation['type'][];

export function isOperation(message: WebviewToHost): message is Operation {
  return (OPERATION_TYPES as readonly string[]).includes(message.type);
}
