import * as z from 'zod';
import {
  customFields,
  customFieldsWrite,
  httpUrl,
  instant,
  objectBase,
  objectTypeName,
  requiredText,
  text,
  userRef,
} from './common';
import { extrasWrite, tagRef } from './host';
import { freezeNotice } from './freezes';
import {
  BUILTIN_CHECKS,
  CALLER_ACTIONS,
  CHANGE_REQUEST_STATUSES,
  CHECK_STATUSES,
  CONDITION_STATES,
  CONDITION_OPS,
  POLICY_ENFORCEMENTS,
  PRIORITIES,
  REVIEW_DECISIONS,
  STREAM_EVENTS,
  UNCOUNTED_APPROVAL_REASONS,
  type ConditionOp,
} from './vocabulary';

// ---- Closed vocabularies: in vocabulary.ts (no zod there), re-exported --------------------

export * from './vocabulary';

// ---- Conditions --------------------------------------------------------------------------

export type ConditionLeaf = { attr: string; op?: ConditionOp; value?: unknown; negate?: boolean };
export type ConditionSet = ConditionLeaf | { and: ConditionSet[] } | { or: ConditionSet[] };

/** How many levels of `and`/`or` a condition set may nest; deeper sets are refused before parsing. */
export const MAX_CONDITION_DEPTH = 32;

/** The nesting depth of `and`/`or` lists in a value, counted without recursion (stops past the limit). */
export function conditionDepth(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    max = Math.max(max, depth);
    if (max > MAX_CONDITION_DEPTH) return max;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    for (const key of ['and', 'or']) {
      const list = (v as Record<string, unknown>)[key];
      if (Array.isArray(list)) for (const item of list) stack.push([item, depth + 1]);
    }
  }
  return max;
}

const conditionSetShape: z.ZodType<ConditionSet> = z.lazy(() =>
  z.union([
    z.strictObject({ and: z.array(conditionSetShape).min(1, { error: '"and" needs at least one condition' }) }),
    z.strictObject({ or: z.array(conditionSetShape).min(1, { error: '"or" needs at least one condition' }) }),
    z.strictObject({
      attr: z.string().min(1, { error: 'attr may not be blank' }),
      op: z.enum(CONDITION_OPS).optional(),
      value: z.unknown().optional(),
      negate: z.boolean().optional(),
    }),
  ]),
);

/** A condition set (contract 4.2); one nested deeper than MAX_CONDITION_DEPTH is refused. */
export const conditionSet: z.ZodType<ConditionSet> = z
  .unknown()
  .refine((v) => conditionDepth(v) <= MAX_CONDITION_DEPTH, {
    error: `Condition sets may nest "and"/"or" at most ${MAX_CONDITION_DEPTH} levels deep.`,
  })
  .pipe(conditionSetShape)
  .meta({
    description: 'A condition set: a leaf {attr, op, value, negate} or {and: [...]} / {or: [...]}, nested freely.',
  });

// ---- Policies and rules ------------------------------------------------------------------

/** A declared check's reporter restriction (users and groups by id) and its timeout. */
export const checkSettings = z.strictObject({
  reporter: z
    .strictObject({ users: z.array(z.number().int()).default([]), groups: z.array(z.number().int()).default([]) })
    .nullable()
    .default(null),
  timeout_minutes: z.number().int().min(1).max(525_600).nullable().default(null),
});
export type CheckSettings = z.infer<typeof checkSettings>;

export const policy = z.object({
  ...objectBase,
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  weight: z.number().int(),
  object_types: z.array(objectTypeName),
  conditions: conditionSet.nullable(),
  condition_state: z.enum(CONDITION_STATES),
  checks: z.array(z.string()),
  /** `active` (default) blocks; `evaluate`: matched and evaluated, its would-be blocking reason shown, never blocking. */
  enforcement: z.enum(POLICY_ENFORCEMENTS),
  /** Per name in `checks`: who alone may report it, and how long a required reported check may stay pending. */
  check_settings: z.record(z.string(), checkSettings),
  comments: z.string(),
  tags: z.array(tagRef).default([]),
  custom_fields: customFields.default({}),
});
export type Policy = z.infer<typeof policy>;

export const policyWrite = z.strictObject({
  name: requiredText('This field may not be blank.', 100),
  description: text().optional(),
  enabled: z.boolean().optional(),
  weight: z.number().int().min(0).max(32767).optional(),
  object_types: z.array(objectTypeName).optional(),
  conditions: conditionSet.nullable().optional(),
  condition_state: z.enum(CONDITION_STATES).optional(),
  checks: z.array(z.string().trim().min(1).max(100)).optional(),
  enforcement: z.enum(POLICY_ENFORCEMENTS).optional(),
  check_settings: z.record(z.string().max(100), checkSettings).optional(),
  comments: text().optional(),
  ...extrasWrite,
});

export const policyRule = z.object({
  ...objectBase,
  policy: z.number().int(),
  name: z.string(),
  min_reviews: z.number().int(),
  groups: z.array(z.number().int()),
  users: z.array(z.number().int()),
  tags: z.array(tagRef).default([]),
  custom_fields: customFields.default({}),
});
export type PolicyRule = z.infer<typeof policyRule>;

export const policyRuleWrite = z.strictObject({
  policy: z.number().int(),
  name: requiredText('This field may not be blank.', 100),
  min_reviews: z.number().int().min(0).max(1000).optional(),
  groups: z.array(z.number().int()).optional(),
  users: z.array(z.number().int()).optional(),
  ...extrasWrite,
});

// ---- Change requests ---------------------------------------------------------------------

/** Whether the caller may take an action next, and why not. */
export const actionAvailability = z.object({ allowed: z.boolean(), reason: z.string().nullable() });
export type ActionAvailability = z.infer<typeof actionAvailability>;

/** An accountable override, as recorded on the change request. */
export const changeRequestOverrideRecord = z.object({
  reason: z.string(),
  user: userRef.nullable(),
  time: instant,
  /** The merge-blocked reason the override set aside. */
  overridden_reason: z.string(),
});
export type ChangeRequestOverrideRecord = z.infer<typeof changeRequestOverrideRecord>;

/** POST `change-requests/{id}/override/`: merge past the gate, saying why. */
export const changeRequestOverride = z.strictObject({
  reason: requiredText('An override needs a reason.', 2000),
  acknowledge_conflicts: z
    .boolean()
    .optional()
    .describe("true: merge although the branch conflicts with main (the branch's values win); recorded."),
});

/**
 * The conflicts with main a merge of the request was told to set aside (`acknowledge_conflicts`):
 * how many, and each by its change, object and attributes (at most 1,000).
 */
export const acknowledgedConflicts = z.object({
  count: z.number().int(),
  conflicts: z.array(
    z.object({
      change: z.number().int(),
      object_type: z.string(),
      object_id: z.number().int(),
      attributes: z.array(z.string()),
    }),
  ),
});

export const changeRequest = z.object({
  ...objectBase,
  title: z.string(),
  description: z.string(),
  ref: z.string(),
  status: z.enum(CHANGE_REQUEST_STATUSES),
  priority: z.enum(PRIORITIES),
  requester: userRef.nullable(),
  branch: z.number().int().nullable(),
  branch_name: z.string(),
  branch_deleted: z.boolean(),
  approved: z.boolean(),
  ready_to_merge: z.boolean(),
  merge_blocked_reason: z.string(),
  /**
   * When only time holds the merge (a change window not yet open, freezes in force): the instant
   * it may merge, machine-readable beside the reason's words; null when something else blocks
   * (approvals, checks, conflicts), nothing does, or the window closes first.
   */
  blocked_until: instant.nullable().default(null),
  /**
   * Required checks that block because their result does not count: `outdated` (reported on an
   * earlier version of the branch, or by someone other than its declared reporter) or `timed_out`
   * (never reported within `timeout_minutes`). Live on the detail, cached at the last refresh in lists.
   */
  stale_checks: z
    .array(z.object({ name: z.string(), label: z.string(), reason: z.enum(['outdated', 'timed_out']) }))
    .default([]),
  has_conflicts: z.boolean(),
  gates_cleared: z.boolean(),
  scheduled_start: instant.nullable(),
  scheduled_end: instant.nullable(),
  /** "Window too short": the window is shorter than the automatic-merge interval (null otherwise). */
  window_warning: z.string().nullable().default(null),
  tags: z.array(tagRef).default([]),
  custom_fields: customFields.default({}),
  auto_merge: z.boolean(),
  comments: z.string(),
  policies: z.array(
    z.object({
      id: z.number().int(),
      name: z.string(),
      matched_object_types: z.array(z.string()),
      enforcement: z.enum(POLICY_ENFORCEMENTS),
    }),
  ),
  /** The digest of the branch's net diff now (read-only; `docs/digest-and-override.md` gives the algorithm). */
  digest: z.string().nullable(),
  /** Set when someone merged the request past its gate: their reason, who, when, and what the gate refused with. */
  override: changeRequestOverrideRecord.nullable(),
  /** The conflicts with main its merge acknowledged (read-only; null: it merged without any, or has not merged). */
  merge_acknowledged_conflicts: acknowledgedConflicts.nullable().default(null),
  /** What the caller may do next; clients map this to their menus and never re-derive the rules. */
  actions: z.record(z.enum(CALLER_ACTIONS), actionAvailability),
  /** Its place in the merge queue (1: merging now or next), or null when it is not queued. */
  queue_position: z.number().int().nullable().default(null),
  /** Freezes that apply to it, in force now (they block merging) or starting within 7 days. */
  freezes: z.array(freezeNotice).default([]),
});
export type ChangeRequest = z.infer<typeof changeRequest>;

const isoDateTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }).refine(
  (v) => {
    const year = new Date(v).getUTCFullYear();
    return year >= 1 && year <= 9999;
  },
  { error: 'must fall between the years 1 and 9999 (UTC)' },
);

export const changeRequestCreate = z.strictObject({
  branch: z.number().int(),
  title: z.string().trim().max(200).optional(),
  description: text().optional(),
  ref: z.string().max(100).optional(),
  priority: z.enum(PRIORITIES).optional(),
  scheduled_start: isoDateTime.nullable().optional(),
  scheduled_end: isoDateTime.nullable().optional(),
  auto_merge: z.boolean().optional(),
  comments: text().optional(),
  ...extrasWrite,
});
export const changeRequestUpdate = changeRequestCreate.omit({ branch: true }).partial();
/** PUT: a full write; a field left out takes its default (the title: the branch name). */
export const changeRequestReplace = changeRequestCreate.omit({ branch: true }).extend({
  title: z.string().trim().max(200).default(''),
  description: text().default(''),
  ref: z.string().max(100).default(''),
  priority: z.enum(PRIORITIES).default('medium'),
  scheduled_start: isoDateTime.nullable().default(null),
  scheduled_end: isoDateTime.nullable().default(null),
  auto_merge: z.boolean().default(false),
  comments: text().default(''),
  custom_fields: customFieldsWrite.default({}),
});

// ---- Reviews -----------------------------------------------------------------------------

export const review = z.object({
  ...objectBase,
  change_request: z.number().int(),
  decision: z.enum(REVIEW_DECISIONS),
  comment: z.string(),
  comment_html: z.string(),
  reviewer: userRef,
  stale: z.boolean(),
  /** The digest of the branch's net diff the review was given on (null for reviews older than digests). */
  digest: z.string().nullable(),
  /**
   * Read-only: only a policy on trial (`enforcement: "evaluate"`) names its reviewer, so it counts
   * for no decision (the trial's evaluation shows what it would do).
   */
  advisory: z.boolean().default(false),
  tags: z.array(tagRef).default([]),
  custom_fields: customFields.default({}),
});
export type Review = z.infer<typeof review>;

export const reviewCreate = z.looseObject({
  change_request: z.number().int(),
  decision: z.enum(REVIEW_DECISIONS),
  comment: text().optional(),
  ...extrasWrite,
});
export const reviewUpdate = z.looseObject({
  decision: z.enum(REVIEW_DECISIONS).optional(),
  comment: text().optional(),
  ...extrasWrite,
});

// ---- Comments ----------------------------------------------------------------------------

/**
 * A suggested change carried by a comment: the value proposed for one attribute of the changed
 * object (a dot path into the branch's state), shown as `previous` → `value`.
 */
export const commentSuggestion = z.object({
  attribute: z.string(),
  value: z.unknown(),
  /** The attribute's value in the branch when the suggestion was made; null when it did not exist then. */
  previous: z.unknown(),
  /** The attribute did not exist in the branch when the suggestion was made (`previous` is then null). */
  previous_absent: z.boolean(),
  /**
   * The attribute's value in the branch is no longer `previous` (or the change is gone, or the
   * object deleted): applying it would overwrite what changed since, so it is refused unless forced.
   * False once applied.
   */
  outdated: z.boolean(),
  /** Who applied it (null until applied, or once that user is gone) and when. */
  applied_by: userRef.nullable(),
  applied_at: instant.nullable(),
});
export type CommentSuggestion = z.infer<typeof commentSuggestion>;

/** A suggestion as written: the attribute (a dot path) and the proposed value (any JSON, null included). */
export const commentSuggestionWrite = z.strictObject({
  attribute: z.string().trim().min(1, { error: 'This field may not be blank.' }).max(200),
  value: z.json(),
});

export const changeComment = z.object({
  ...objectBase,
  change_request: z.number().int(),
  change_diff: z.number().int().nullable(),
  change_label: z.string(),
  text: z.string(),
  text_html: z.string(),
  author: userRef,
  parent: z.number().int().nullable(),
  resolved: z.boolean(),
  /** The attribute of the anchored change the thread is about (a dot path), or null for the whole object. Replies carry their root's. */
  attribute: z.string().nullable().default(null),
  /** True when the thread names an attribute that no longer differs between its change's original and modified state, or its change is gone. */
  outdated: z.boolean().default(false),
  /** True once its author changed the text after posting it (resolving or reopening a thread is no edit, though it moves last_updated). */
  edited: z.boolean().default(false),
  /** A suggested change, or null for a plain comment. */
  suggestion: commentSuggestion.nullable().default(null),
});
export type ChangeComment = z.infer<typeof changeComment>;

export const changeCommentCreate = z.looseObject({
  change_request: z.number().int(),
  change_diff: z.number().int(),
  text: requiredText(),
  parent: z.number().int().nullable().optional(),
  /** A dot path that exists in the anchored change's original or modified state. A reply takes its root's. */
  attribute: z.string().trim().min(1).max(200).nullable().optional(),
  /**
   * A suggested change: a value for an attribute of the branch's state of the object (one that
   * exists, or one that can be set: a new key of an existing mapping). It lies at or under the
   * thread's attribute; a thread root naming none takes the suggestion's when the change has it.
   */
  suggestion: commentSuggestionWrite.nullable().optional(),
});

/** `change-requests/{id}/apply-suggestions/`: the comments whose suggestions to write into the branch, at once. */
export const applySuggestions = z.strictObject({
  comments: z
    .array(z.number().int())
    .min(1, { error: 'Name at least one comment.' })
    .max(1000, { error: 'At most 1000 comments at once.' }),
  /** Apply outdated suggestions too (their value overwrites what changed since). Default false: an outdated one is a 409. */
  force: z.boolean().optional(),
});

/** What applying suggestions wrote: the request afterwards, the comments (applied, their threads resolved) and the objects written. */
export const applySuggestionsResult = z.object({
  comments: z.array(z.number().int()),
  objects: z.array(z.object({ object_type: objectTypeName, object_id: z.number().int() })),
});
export type ApplySuggestionsResult = z.infer<typeof applySuggestionsResult>;
export const changeCommentUpdate = z.looseObject({
  text: requiredText().optional(),
  resolved: z.boolean().optional(),
});

// ---- Merge checks ------------------------------------------------------------------------

/** An object a check result names, and what is wrong with it. */
export const checkObject = z.object({
  object_type: z.string(),
  object_id: z.number().int(),
  object_repr: z.string(),
  problem: z.string(),
});
export type CheckObject = z.infer<typeof checkObject>;

export const mergeCheck = z.object({
  ...objectBase,
  change_request: z.number().int(),
  name: z.string(),
  label: z.string(),
  status: z.enum(CHECK_STATUSES),
  summary: z.string(),
  details_url: z.string(),
  /** The objects the result names: for `mergeable`, those that would conflict or fail to apply. */
  objects: z.array(checkObject).default([]),
  required: z.boolean(),
  blocks_merge: z.boolean(),
  completed: instant.nullable(),
  /** The digest of the branch's net diff the result ran on (reported checks; null for registered checks and before any report). */
  digest: z.string().nullable(),
  /**
   * The result does not clear the gate: it is for an older digest than the branch's now, or it
   * came from someone other than the reporter the check declares (declared or changed since).
   */
  outdated: z.boolean(),
  /** Who reported the result (for an event rule's report, the rule's creator); null: never reported, or computed. */
  reported_by: z.number().int().nullable().default(null),
  /** Where a reported result came from besides its reporter: `{"event_rule": id}` for an event rule's report. */
  source: z.object({ event_rule: z.number().int() }).nullable().default(null),
  /** A pending check with a timeout (`timeout_minutes`): when it fails as never reported; null otherwise. */
  deadline: instant.nullable().default(null),
  /** Its result is the timeout's failure (it never reported in time), not a report. */
  timed_out: z.boolean().default(false),
  /**
   * Who alone may report it, by name (users and groups its declarations name; each declaration
   * must admit the reporter); null: anyone holding `change_control.change_mergecheck`.
   */
  reporter: z
    .object({ users: z.array(z.string()), groups: z.array(z.string()) })
    .nullable()
    .default(null),
});
export type MergeCheck = z.infer<typeof mergeCheck>;

/** What Re-run Checks did with one check: it ran (a registered check, computed now), or why it did not. */
export const checkRunEntry = z.object({
  name: z.string(),
  label: z.string(),
  ran: z.boolean(),
  /** The check's result after the run; null when the request carries no row of it. */
  status: z.enum(CHECK_STATUSES).nullable(),
  /** Why the service did not run it, in the service's words; null when it ran. */
  reason: z.string().nullable(),
});
export type CheckRunEntry = z.infer<typeof checkRunEntry>;

/**
 * The answer of `change-requests/{id}/run-checks/`: the change request, and `check_run`, one
 * entry per check the request carries (and per registered check that only a policy could apply).
 */
export const runChecksResult = changeRequest.extend({ check_run: z.array(checkRunEntry).default([]) });
export type RunChecksResult = z.infer<typeof runChecksResult>;

/** A reporter's write. `required` and `change_request` are read-only and ignored when sent. */
/** A digest as the service writes it: 64 lowercase hex digits. */
export const digestValue = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: "must be 64 lowercase hexadecimal digits (the change request's digest)" });

export const mergeCheckReport = z.looseObject({
  status: z.enum(CHECK_STATUSES).optional(),
  /** The digest the result ran on; taken at report time when not sent. */
  digest: digestValue.optional(),
  summary: text(4000).optional(),
  details_url: z.union([z.literal(''), httpUrl(2000)]).optional(),
});

/** Declares a reported check on one change request by hand (it is advisory unless a policy or the configuration declares it). */
export const mergeCheckCreate = z.looseObject({
  change_request: z.number().int(),
  name: requiredText('This field may not be blank.', 100),
  label: z.string().trim().max(200).optional(),
  status: z.enum(CHECK_STATUSES).optional(),
  summary: text(4000).optional(),
  details_url: z.union([z.literal(''), httpUrl(2000)]).optional(),
});

// ---- The approval panel as data -----------------------------------------------------------

export const evaluationRule = z.object({
  id: z.number().int(),
  name: z.string(),
  min_reviews: z.number().int(),
  approvals: z.number().int(),
  satisfied: z.boolean(),
  approvers: z.array(userRef),
  eligible_users: z.array(userRef),
  eligible_groups: z.array(z.object({ id: z.number().int(), name: z.string(), empty: z.boolean() })),
  empty_groups: z.array(z.string()),
  outstanding_reviewers: z.array(userRef),
  /** Approvals from eligible reviewers that do not count towards this rule, and why. */
  uncounted_approvals: z
    .array(
      z.object({
        review: z.number().int(),
        reviewer: userRef,
        reason: z.enum(UNCOUNTED_APPROVAL_REASONS),
        detail: z.string(),
      }),
    )
    .default([]),
});
export type EvaluationRule = z.infer<typeof evaluationRule>;

export const evaluationPolicy = z.object({
  id: z.number().int(),
  name: z.string(),
  matched_object_types: z.array(z.string()),
  checks: z.array(z.string()),
  enforcement: z.enum(POLICY_ENFORCEMENTS),
  rules: z.array(evaluationRule),
  /**
   * What this policy has against the request now: its unsatisfied rules, empty groups and
   * failing checks; for a policy in `evaluate` enforcement, what it would block on (it never does).
   */
  blocking_reasons: z.array(z.string()),
});
export type EvaluationPolicy = z.infer<typeof evaluationPolicy>;

export const evaluation = z.object({
  change_request: z.number().int(),
  status: z.enum(CHANGE_REQUEST_STATUSES),
  approved: z.boolean(),
  policies: z.array(evaluationPolicy),
  stale_reviews: z.array(z.object({ id: z.number().int(), reviewer: userRef, decision: z.enum(REVIEW_DECISIONS) })),
  rejections: z.array(
    z.object({ id: z.number().int(), reviewer: userRef, comment: z.string(), comment_html: z.string() }),
  ),
  reasons: z.array(z.string()),
});
export type Evaluation = z.infer<typeof evaluation>;

// ---- Plugin settings ----------------------------------------------------------------------

export const BRANCH_PAGE_PLACEMENTS = ['right_page', 'alerts', 'both'] as const;
export type BranchPagePlacement = (typeof BRANCH_PAGE_PLACEMENTS)[number];

/**
 * The effective plugin settings (GET `settings/`, any signed-in user): the configuration as the
 * service applies it. `enable_builtin_checks` lists the built-ins available (unknown names
 * dropped), `required_external_checks` is `{name, label}` pairs, and `branch_page_placement`
 * is always a list (a single string in the configuration becomes a list of one; empty: the
 * panel shows nowhere on the branch page).
 */
export const pluginSettings = z.object({
  enable_builtin_checks: z.array(z.enum(BUILTIN_CHECKS)),
  required_external_checks: z.array(z.object({ name: z.string(), label: z.string() })),
  branch_page_placement: z.array(z.enum(BRANCH_PAGE_PLACEMENTS)),
  protect_main: z.boolean(),
  protect_main_scope: z.array(z.string()),
  enforce_merge_gate: z.boolean(),
  notify_reviewers: z.boolean(),
  enable_auto_merge: z.boolean(),
  auto_merge_interval: z.number().int(),
  /** Whether a user who changed objects on a branch may approve its change request (default false). */
  contributors_can_approve: z.boolean().default(false),
});
export type PluginSettings = z.infer<typeof pluginSettings>;

// ---- The event stream (`stream/`) ---------------------------------------------------------

/**
 * One event of the stream: what changed, on which change request. Clients reload what it names.
 * `change_request` is null only for `gate_changed` naming a freeze (`object_type`
 * `change_control.freeze`): every open request the freeze applies to moved; reload them all.
 */
export const streamEvent = z.object({
  id: z.number().int(),
  event: z.enum(STREAM_EVENTS),
  time: instant,
  change_request: z.number().int().nullable(),
  object_type: objectTypeName,
  object_id: z.number().int(),
});
export type StreamEvent = z.infer<typeof streamEvent>;

// ---- Preview: what would govern a branch, before a change request exists ------------------

export const previewCheck = z.object({
  name: z.string(),
  label: z.string(),
  required: z.boolean(),
  /** Computed by the service (true) or reported from outside (false). */
  registered: z.boolean(),
  /** Only a declared reporter may report it. */
  reporter_restricted: z.boolean(),
  timeout_minutes: z.number().int().nullable(),
});

/** GET `preview/?branch_id=N`: the policies and rules that would govern the branch, the checks it would need, what would block it. */
export const preview = z.object({
  branch: z.object({ id: z.number().int(), name: z.string(), status: z.string() }),
  digest: z.string(),
  policies: z.array(evaluationPolicy),
  checks: z.array(previewCheck),
  /** What would block a request for this branch as it stands, before any review or check result. */
  reasons: z.array(z.string()),
  /**
   * The freezes that would apply to it (global ones and those of the active policies that would
   * govern it), each with the period in force or the next one (`active` says which), rule included.
   */
  freezes: z.array(freezeNotice).default([]),
});
export type Preview = z.infer<typeof preview>;

/** The kinds of a journal entry (NetBox's). */
export const JOURNAL_KINDS = ['info', 'success', 'warning', 'danger'] as const;
/** The only object type journal entries are kept on here. */
export const JOURNAL_OBJECT_TYPE = 'change_control.changerequest';

/** `/api/extras/journal-entries/`: a note on a change request (NetBox's journal entry). */
export const journalEntry = z.object({
  ...objectBase,
  assigned_object_type: z.string(),
  assigned_object_id: z.number().int(),
  kind: z.enum(JOURNAL_KINDS),
  /** Markdown, as written; `comments_html` is it rendered safely (as change comments are). */
  comments: z.string(),
  comments_html: z.string(),
  /** Always whoever wrote the entry (read-only). */
  created_by: userRef,
});
export type JournalEntry = z.infer<typeof journalEntry>;

export const journalEntryCreate = z.looseObject({
  assigned_object_type: z.literal(JOURNAL_OBJECT_TYPE, {
    error: `Journal entries are kept on change requests only ("${JOURNAL_OBJECT_TYPE}").`,
  }),
  assigned_object_id: z.number().int(),
  kind: z.enum(JOURNAL_KINDS).default('info'),
  comments: requiredText(),
});

export const journalEntryUpdate = z.looseObject({
  assigned_object_type: z
    .literal(JOURNAL_OBJECT_TYPE, {
      error: `Journal entries are kept on change requests only ("${JOURNAL_OBJECT_TYPE}").`,
    })
    .optional(),
  assigned_object_id: z.number().int().optional(),
  kind: z.enum(JOURNAL_KINDS).optional(),
  comments: requiredText().optional(),
});
