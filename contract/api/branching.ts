import * as z from 'zod';
import { briefFields, instant, objectBase, objectTypeName, requiredText } from './common';

export const BRANCH_STATUSES = ['ready', 'merged', 'archived', 'failed', 'syncing', 'merging', 'reverting'] as const;
export type BranchStatus = (typeof BRANCH_STATUSES)[number];

export const CHANGE_ACTIONS = ['create', 'update', 'delete'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

export const branch = z.object({
  ...objectBase,
  name: z.string(),
  description: z.string(),
  status: z.enum(BRANCH_STATUSES),
  schema_id: z.string(),
  owner: z.number().int().nullable(),
  last_sync: instant.nullable(),
  merged_time: instant.nullable(),
  merged_by: z.number().int().nullable(),
});
export type Branch = z.infer<typeof branch>;

const attrs = z.record(z.string(), z.unknown());

/** One row per object the branch touches: its net effect. */
export const changeDiff = z.object({
  ...briefFields,
  branch: z.number().int(),
  object_type: objectTypeName,
  object_id: z.number().int(),
  object_repr: z.string(),
  action: z.enum(CHANGE_ACTIONS),
  original: attrs.nullable(),
  modified: attrs.nullable(),
  current: attrs.nullable(),
  conflicts: z.array(z.string()).nullable(),
  last_updated: instant,
});
export type ChangeDiff = z.infer<typeof changeDiff>;

export const branchCreate = z.strictObject({
  name: requiredText('This field may not be blank.', 100),
  description: z.string().max(65_536).optional(),
});
export const branchUpdate = branchCreate.partial();
export const branchAction = z.strictObject({ commit: z.boolean().optional() });
/** `merge/`: a branch that conflicts with main merges only when the merger acknowledges the conflicts. */
export const branchMerge = z.strictObject({
  commit: z.boolean().optional(),
  acknowledge_conflicts: z
    .boolean()
    .optional()
    .describe("true: merge although the branch conflicts with main (the branch's values win); recorded."),
});

/**
 * One object whose change conflicts with main: the attributes both changed, main's value now and
 * the branch's (null where the object is gone on that side).
 */
export const mergeConflict = z.object({
  change: z.number().int().describe('The change (branching/changes/) that conflicts.'),
  object_type: objectTypeName,
  object_id: z.number().int(),
  object_repr: z.string(),
  attributes: z.array(z.string()),
  main: attrs.describe("Main's current value of each conflicting attribute."),
  branch: attrs.describe("The branch's value of each conflicting attribute."),
});
export type MergeConflict = z.infer<typeof mergeConflict>;

/** What a branch action (sync, merge, revert) did, or would do in a dry run, to one change. */
export const BRANCH_ACTION_EFFECTS = [
  'created',
  'updated',
  'deleted',
  'rebased',
  'dropped',
  'conflict',
  'unchanged',
] as const;
export const branchActionChange = z.object({
  id: z.number().int(),
  object_type: objectTypeName,
  object_id: z.number().int(),
  object_repr: z.string(),
  action: z.enum(CHANGE_ACTIONS),
  effect: z.enum(BRANCH_ACTION_EFFECTS),
  conflicts: z.array(z.string()).nullable(),
});

/** The answer of `sync/`, `merge/` and `revert/`: the branch afterwards (unchanged in a dry run) and the per-change summary. */
export const branchActionResult = z.object({
  branch,
  commit: z.boolean(),
  changes: z.array(branchActionChange),
  conflicts: z
    .array(mergeConflict)
    .optional()
    .describe('merge/: the conflicts with main the caller may see (a dry run reports them without refusing).'),
});
export type BranchActionResult = z.infer<typeof branchActionResult>;

/**
 * A merge refused (409) because it would overwrite main's changes the caller has not
 * acknowledged: sent again with `"acknowledge_conflicts": true` once the caller has.
 */
export const mergeConflictRefusal = z.object({
  detail: z.string(),
  conflicts: z.array(mergeConflict),
});

/**
 * The answer of `changes/{id}/revert/`: the branch's change of one object undone, so that the
 * object in the branch is main's now.
 */
export const changeRevertResult = z.object({
  /** The change that was undone (it no longer exists). */
  change: z.number().int(),
  object_type: objectTypeName,
  object_id: z.number().int(),
  /**
   * The write the revert amounted to in the branch: `update`, `delete` (the object left the
   * branch: a create undone), `create` (it came back: a delete undone), or null when what the
   * branch shows did not change.
   */
  action: z.enum(CHANGE_ACTIONS).nullable(),
  /** The object as the branch shows it now (main's state), or null when it is absent. */
  object: z.looseObject({ ...objectBase }).nullable(),
});
export type ChangeRevertResult = z.infer<typeof changeRevertResult>;

/** What the caller's object permissions grant on one source-of-truth type (true: for some objects at least; constraints decide each). */
export const branchObjectTypeAccess = z.object({
  object_type: objectTypeName,
  display: z.string(),
  /** The type's list endpoint. */
  url: z.string(),
  view: z.boolean(),
  add: z.boolean(),
  change: z.boolean(),
  delete: z.boolean(),
});
export type BranchObjectTypeAccess = z.infer<typeof branchObjectTypeAccess>;

/** `branches/{id}/access/`: what the caller may do in one branch, for clients that edit its objects. */
export const branchAccess = z.object({
  branch: z.number().int(),
  /** The branch is ready and the caller may write in it (its owner, or a holder of branching.change_branch for it). */
  write: z.boolean(),
  /** Why not, in words; null when `write` is true. */
  reason: z.string().nullable(),
  object_types: z.array(branchObjectTypeAccess),
});
export type BranchAccess = z.infer<typeof branchAccess>;
