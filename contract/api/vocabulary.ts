// The closed vocabularies of the change-control API: plain `as const` lists and the types read
// from them, without zod, so that a client can use them without building the API's schemas
// (the extension's activation does; the schemas in change-control.ts are built from these).
export const CHANGE_REQUEST_STATUSES = [
  'draft',
  'needs-review',
  'approved',
  'rejected',
  'completed',
  'abandoned',
] as const;
export type ChangeRequestStatus = (typeof CHANGE_REQUEST_STATUSES)[number];
export const OPEN_STATUSES = [
  'draft',
  'needs-review',
  'approved',
  'rejected',
] as const satisfies readonly ChangeRequestStatus[];

export const LIFECYCLE_ACTIONS = ['submit', 'return-to-draft', 'abandon', 'reopen'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

export const CHECK_STATUSES = ['pending', 'running', 'success', 'failure', 'error', 'skipped'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];
/** Statuses that clear the gate. */
export const PASSING_CHECK_STATUSES = ['success', 'skipped'] as const satisfies readonly CheckStatus[];

export const REVIEW_DECISIONS = ['approve', 'reject', 'comment'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

export const PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** A policy's enforcement: `active` blocks; `evaluate` is tried without blocking. */
export const POLICY_ENFORCEMENTS = ['active', 'evaluate'] as const;
export type PolicyEnforcement = (typeof POLICY_ENFORCEMENTS)[number];

export const CONDITION_STATES = ['either', 'before', 'after'] as const;
export type ConditionState = (typeof CONDITION_STATES)[number];

export const CONDITION_OPS = [
  'eq',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'contains',
  'regex',
  'changed',
  'unchanged',
] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

export const LIFECYCLE_EVENTS = [
  'change_request_submitted',
  'change_request_review_requested',
  'review_submitted',
  'change_request_approved',
  'change_request_rejected',
  'change_request_completed',
] as const;
export type LifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

/** Why an approval does not count: its reviewer changed the branch, or the branch moved on since. */
export const UNCOUNTED_APPROVAL_REASONS = ['contributor', 'stale', 'not_permitted'] as const;
export type UncountedApprovalReason = (typeof UNCOUNTED_APPROVAL_REASONS)[number];

/**
 * What the event stream (`GET /api/plugins/change-control/stream/`, Server-Sent Events) says
 * changed. The SSE `event:` field is the type, `id:` the event's id (resume with
 * `Last-Event-ID`), `data:` one `StreamEvent` as JSON. A `reset` event (data `{}`) says that
 * events were missed (the id asked for is no longer kept): the client reloads what it shows.
 */
export const STREAM_EVENTS = [
  ...LIFECYCLE_EVENTS,
  'change_request_created',
  'change_request_updated',
  'change_request_deleted',
  'changes_updated',
  'review_deleted',
  'comment_created',
  'comment_updated',
  'comment_deleted',
  'check_updated',
  'check_deleted',
  /**
   * Time moved a gate (a freeze began or ended, a change window opened or closed), or a freeze
   * was written: naming one change request, or (`change_request` null, a freeze named) every open
   * request the freeze applies to.
   */
  'gate_changed',
] as const;
export type StreamEventType = (typeof STREAM_EVENTS)[number];
export const STREAM_RESET = 'reset';

export const BUILTIN_CHECKS = ['has-changes', 'no-conflicts', 'not-stale', 'threads-resolved', 'mergeable'] as const;
export type BuiltinCheck = (typeof BUILTIN_CHECKS)[number];

/** What the caller may do next on a change request (`actions` of a change request). */
export const CALLER_ACTIONS = [
  'submit',
  'return_to_draft',
  'abandon',
  'reopen',
  'review',
  'run_checks',
  'merge',
  'override',
  'comment',
  'apply_suggestions',
  'edit',
  'sync',
] as const;
export type CallerAction = (typeof CALLER_ACTIONS)[number];
