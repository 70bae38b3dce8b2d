import type { Generated, Selectable } from 'kysely';
import type { Bool, Id, Json } from '../../../host';

/** Tables of the change-control plugin. JSON columns hold text; booleans are 0/1. */

export interface PoliciesTable {
  id: Id;
  name: string;
  description: string;
  enabled: Bool;
  weight: number;
  object_types: Json;
  conditions: Json | null;
  condition_state: 'either' | 'before' | 'after';
  checks: Json;
  /** `active` blocks; `evaluate` is matched and evaluated but never blocks. */
  enforcement: Generated<'active' | 'evaluate'>;
  /** Per check name: `{reporter: {users, groups} | null, timeout_minutes: number | null}`. */
  check_settings: Generated<Json>;
  comments: string;
  /** NetBox's free-form `custom_fields`: a JSON object. */
  custom_fields: Generated<Json>;
  created: string;
  last_updated: string;
}

export interface PolicyRulesTable {
  id: Id;
  policy_id: number;
  name: string;
  min_reviews: number;
  groups: Json;
  users: Json;
  /** NetBox's free-form `custom_fields`: a JSON object. */
  custom_fields: Generated<Json>;
  created: string;
  last_updated: string;
}

export interface ChangeRequestsTable {
  id: Id;
  /** Null once the branch is deleted; the request is then history only. */
  branch_id: number | null;
  branch_name: string;
  branch_deleted: Bool;
  title: string;
  description: string;
  ref: string;
  status: 'draft' | 'needs-review' | 'approved' | 'rejected' | 'completed' | 'abandoned';
  priority: 'low' | 'medium' | 'high' | 'critical';
  requester_id: number | null;
  scheduled_start: string | null;
  scheduled_end: string | null;
  auto_merge: Bool;
  comments: string;
  /** Cached at the last refresh: whether the policies were satisfied. */
  approved: Bool;
  /** Cached at the last refresh: policies and every required check satisfied (not the window). */
  gates_cleared: Bool;
  /** Cached at the last refresh: the branch conflicted with main. */
  has_conflicts: Bool;
  /** Set once when someone merged the request past the gate (gate/override.ts): their reason. */
  override_reason: string | null;
  override_by_id: number | null;
  override_time: string | null;
  /** What the gate refused with when it was overridden. */
  overridden_reason: string | null;
  /** The digest of the branch's net diff, cached whenever the branch's content moves. */
  digest: string | null;
  /** The conflicts with main its merge acknowledged (JSON: `{count, conflicts}`), or null. */
  merge_acknowledged_conflicts: Json | null;
  /** NetBox's free-form `custom_fields`: a JSON object. */
  custom_fields: Generated<Json>;
  /** Cached at the last refresh: required checks whose result does not count (JSON `[{name, label, reason}]`). */
  stale_checks: Generated<Json>;
  created: string;
  last_updated: string;
}

/** Policies currently governing a change request, and the object types that matched. */
export interface ChangeRequestPoliciesTable {
  change_request_id: number;
  policy_id: number;
  matched_object_types: Json;
}

export interface ReviewsTable {
  id: Id;
  change_request_id: number;
  reviewer_id: number;
  decision: 'approve' | 'reject' | 'comment';
  comment: string;
  stale: Bool;
  /** The digest of the branch's net diff the review was given on (null: given before digests were kept). */
  digest: string | null;
  /** NetBox's free-form `custom_fields`: a JSON object. */
  custom_fields: Generated<Json>;
  created: string;
  last_updated: string;
}

export interface ChangeCommentsTable {
  id: Id;
  change_request_id: number;
  /** The branch change the thread is anchored to (kept as a number: the change row may go away). */
  change_diff_id: number | null;
  change_object_type: string;
  change_object_id: number;
  change_label: string;
  text: string;
  author_id: number;
  parent_id: number | null;
  /** The attribute (a dot path into the change's original or modified state) the thread is about; null: the whole object. */
  attribute: string | null;
  resolved: Bool;
  /** 1 once the author changed the text after posting it. */
  edited: Bool;
  /**
   * A suggested change, JSON: `{"attribute", "value", "previous"}` where `previous` is
   * `{"value": v}`, the attribute's value in the branch when it was suggested, or `{}` when the
   * attribute did not exist then; null for a plain comment.
   */
  suggestion: string | null;
  /** Who applied the suggestion (null until applied, or once that user is deleted). */
  applied_by_id: number | null;
  applied_at: string | null;
  created: string;
  last_updated: string;
}

/** A journal entry on a change request (`/api/extras/journal-entries/`). */
export interface JournalEntriesTable {
  id: Id;
  assigned_object_type: string;
  /** The change request (deleting it deletes its entries). */
  assigned_object_id: number;
  kind: string;
  comments: string;
  created_by_id: number;
  created: string;
  last_updated: string;
}

export interface MergeChecksTable {
  id: Id;
  change_request_id: number;
  name: string;
  label: string;
  status: 'pending' | 'running' | 'success' | 'failure' | 'error' | 'skipped';
  /** Who writes the result: a registered check (refreshes run it) or a reporter (refreshes never touch it). */
  kind: 'registered' | 'reported';
  summary: string;
  details_url: string;
  /** The objects the result names (JSON: `{object_type, object_id, object_repr, problem}[]`). */
  objects: Generated<Json>;
  completed: string | null;
  /** The digest of the branch's net diff a reported result ran on (null: never reported, or registered). */
  digest: string | null;
  /** Who reported the result (an event rule's creator for a rule's report; null: never reported, or registered). */
  reported_by: number | null;
  /** Where a reported result came from besides its reporter (JSON: `{"event_rule": id}`), or null. */
  source: Json | null;
  /** A pending check with a timeout: when it fails as never reported (null: no deadline). */
  deadline: string | null;
  /** Its result is the timeout's, not a report (1 until the next result). */
  timed_out: Generated<Bool>;
  created: string;
  last_updated: string;
}

/** Eligible reviewers of unsatisfied rules who have not reviewed, as of the last refresh ("waiting for my review"). */
export interface OutstandingReviewersTable {
  change_request_id: number;
  user_id: number;
}

/** Reviewers only a policy on trial names, per request; `waiting`: they owe it a decision. */
export interface TrialReviewersTable {
  change_request_id: number;
  user_id: number;
  waiting: Bool;
}

/** Automatic merges: at most one pending, scheduled or running job per branch. */
export interface MergeJobsTable {
  id: Id;
  change_request_id: number;
  branch_id: number;
  state: 'pending' | 'scheduled' | 'running' | 'completed' | 'failed';
  detail: string;
  created: string;
  last_updated: string;
}

/** A named freeze period: one-off (`start_at`..`end_at`) or recurring (weekdays, a daily time range in `time_zone`). */
export interface FreezesTable {
  id: Id;
  name: string;
  description: string;
  enabled: Bool;
  kind: 'once' | 'recurring';
  start_at: string | null;
  end_at: string | null;
  /** JSON: ISO weekdays, 1 is Monday. */
  weekdays: Json;
  start_time: string | null;
  end_time: string | null;
  time_zone: string;
  /** Null: a global freeze. */
  policy_id: number | null;
  created: string;
  last_updated: string;
}

/** The merge queue's head claim: one row; the instance holding it runs the queue until `expires`. */
export interface MergeQueueClaimTable {
  id: number;
  holder: string | null;
  expires: string | null;
}

/** The gate's clock: the time-driven changes of gates were announced up to `announced_through`. */
export interface GateClockTable {
  id: number;
  announced_through: string | null;
}

/** One event of the stream (`stream/`): what changed, on which change request. */
export interface StreamEventsTable {
  id: Id;
  time: string;
  event: string;
  change_request_id: number;
  object_type: string;
  object_id: number;
  /** For a deletion: the removed object's stored fields (JSON), which permission constraints are checked against. */
  subject: string | null;
}

/** How far the stream's window was pruned: a client resuming from an older id missed events. */
export interface StreamStateTable {
  id: number;
  pruned_through: number;
}

/**
 * Per branch, policy and object type: how many of the branch's changes of that type satisfy the
 * policy's condition set (rows at zero are deleted). Kept by the branch state keeper
 * `change-control:policy-matches` as the branch's changes are written.
 */
export interface BranchPolicyMatchesTable {
  branch_id: number;
  policy_id: number;
  object_type: string;
  matches: number;
}

/** The matching definition (object types, conditions, condition state) each policy's counts were computed with. */
export interface PolicyMatchDefinitionsTable {
  policy_id: number;
  definition: string;
}

export interface ChangeControlTables {
  cc_policies: PoliciesTable;
  cc_policy_rules: PolicyRulesTable;
  cc_change_requests: ChangeRequestsTable;
  cc_change_request_policies: ChangeRequestPoliciesTable;
  cc_reviews: ReviewsTable;
  cc_change_comments: ChangeCommentsTable;
  cc_journal_entries: JournalEntriesTable;
  cc_merge_checks: MergeChecksTable;
  cc_merge_jobs: MergeJobsTable;
  cc_outstanding_reviewers: OutstandingReviewersTable;
  cc_trial_reviewers: TrialReviewersTable;
  cc_stream_events: StreamEventsTable;
  cc_stream_state: StreamStateTable;
  cc_freezes: FreezesTable;
  cc_merge_queue_claim: MergeQueueClaimTable;
  cc_gate_clock: GateClockTable;
  cc_branch_policy_matches: BranchPolicyMatchesTable;
  cc_policy_match_definitions: PolicyMatchDefinitionsTable;
}

export type PolicyRow = Selectable<PoliciesTable>;
export type PolicyRuleRow = Selectable<PolicyRulesTable>;
export type ChangeRequestRow = Selectable<ChangeRequestsTable>;
export type ReviewRow = Selectable<ReviewsTable>;
export type ChangeCommentRow = Selectable<ChangeCommentsTable>;
export type JournalEntryRow = Selectable<JournalEntriesTable>;
export type MergeCheckRow = Selectable<MergeChecksTable>;
export type MergeJobRow = Selectable<MergeJobsTable>;
export type FreezeRow = Selectable<FreezesTable>;
export type StreamEventRow = Selectable<StreamEventsTable>;
