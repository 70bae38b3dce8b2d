/**
 * The host's public module: everything of the host's domain a plugin may use (its context and
 * errors, the changelog and events, permissions, users, objects and branches, the database
 * handle). Plugins import the host only from here and, for their routes, from `http/index.ts`;
 * `.dependency-cruiser.cjs` holds them to it.
 */
export { briefObject, fieldsOf, givenFields, objectUrl } from './core/api-object';
export type { ApiObject } from './core/api-object';
export { LocalCommitSignal } from './core/commit-signal';
export type { CommitSignal } from './core/commit-signal';
export { conditionRegExp, conditionSetProblem, sameJson, testOp } from './core/conditions';
export type { ConditionSet } from './core/conditions';
export type { Clock, ClockTimer } from './core/clock';
export type { Config } from './core/config';
export { createCtx, deriveCtx, inTransaction } from './core/context';
export type { BackgroundTask, Ctx, HostServices } from './core/context';
export { Conflict, NotFound, PermissionDenied, TooManyRequests, ValidationError } from './core/errors';
export type { AuthUser } from './core/identity';
export type { Logger } from './core/logger';
export type { SearchHit } from './core/search';
export type { StreamSink } from './core/stream-sink';
export { HOST_VERSION, inRange } from './core/version';
export type { VersionRange } from './core/version';
export { databaseKind, withTables } from './db/database';
export { compiledSelect } from './db/compiled-select';
export { clearedWith, keyedTable, objectRef, ownedBy, pairTable, stamps } from './db/migrations/schema';
export { constraintViolation } from './db/constraint-errors';
export { isClaimed, withClaim } from './db/claims';
export { commitSignal } from './db/commit-signals';
export type { DatabaseKind } from './db/database';
export {
  foldedLike,
  jsonArrayHasAny as jsonArrayHasAnyIn,
  jsonArrayHasColumn as jsonArrayHasColumnIn,
  jsonTextAt,
  valuesTable,
} from './db/portable';
export type { Queryable } from './db/database';
export type { VisibleIds } from './db/visible-ids';
export { createdRange, defineList, jsonListHasAny, lastUpdatedRange, likePattern, textContains } from './db/list';
export { tableRows } from './db/table-rows';
export type { KeyedTableName, TableRows, TextColumn } from './db/table-rows';
export type { Condition, DeclaredList, FilterValue, ListDeclaration, ListFilter, ListOptions } from './db/list';
export type { Bool, BranchChangesTable, BranchRow, HostTables, Id, Json, Row } from './db/tables';
export type { EmittedEvent, EventPayload, EventRuleRow } from './events/bus';
export { recordChange } from './events/changelog';
export { branchContributors, CONTRIBUTORS_READS } from './events/contributors-repository';
export { notify } from './events/notifications';
export { PluginError } from './host';
export type { Host, HostPlugin } from './host';
export { changedAttributes, displayOf, sameAttributes, sameValue, withAttributesOf } from './objects/attributes';
export type { Attributes } from './objects/attributes';
export {
  branchAccess,
  branchActionRefusal,
  branchWriteRefusal,
  requireBranchWrite,
  type BranchAction,
} from './objects/branch-access';
export { branchChangeBatches } from './objects/branch-change-batches-repository';
export {
  BRANCH_DATA_TABLES,
  branchChangeRows,
  branchChanges,
  changesOf,
  branchChangesByIds,
  branchesTouching,
  existingBranchChangeIds,
  parseChangeRow,
  readyBranchesChanging,
  branchTouchesType,
  removeBranchChanges,
  removeChange,
  saveChange,
  savePremerge,
  touchedObjectTypes,
} from './objects/branch-changes-repository';
export type { BranchChange } from './objects/branch-changes-repository';
export { ensureBranchState, forgetBranchState } from './objects/branch-state';
export {
  branchConflicts,
  branchMergeProblems,
  branchProblems,
  CHANGE_CONFLICTS_KEEPER,
  conflictingChanges,
} from './objects/change-conflicts-repository';
export type { AcknowledgedConflicts } from './core/hooks';
export type { KeptProblems } from './objects/change-conflicts-repository';
export { computeConflicts, mergeProblem } from './objects/conflicts';
export type { BranchChangeWrite, BranchStateKeeper } from './objects/branch-state';
export { BRANCH_TYPE, BRANCHES_PATH, findBranch, findBranches, loadBranch, presentBranch } from './objects/branches';
export { branchRows } from './objects/branches-repository';
export type { BranchOut } from './objects/branches';
export { ChangeVisibility } from './objects/change-visibility';
export { clearTags, setTags, tagsOf, TAG_TYPE } from './objects/tags';
export type { TagRef, TagWrite } from './objects/tags';
export type { ChangedObjectRef } from './objects/change-visibility';
export { deleteMainObject, getMainObjects, putMainObject } from './objects/main-repository';
export type { ObjectState } from './objects/main-repository';
export type { NetChange } from './objects/net-effect';
export { logObjectWrite, revertObjectInBranch, updateObject } from './objects/writes';
export type { CatalogueType, RevertAction, Reverted } from './objects/writes';
export { readObject } from './objects/overlay';
export { presentObject } from './objects/present';
export {
  actingUser,
  activeGroupMembers,
  DIRECTORY_TABLES,
  groupsByIds,
  identitiesOf,
  usersByIds,
} from './users/directory';
export type { Identity, UserEntry } from './users/directory';
export { usersHolding } from './users/holders';
export { grantAllows, parsePermissionName, UserPermissions } from './users/object-permissions';
export type { ConstraintObject, Grant } from './users/object-permissions';
export { requireExistingIds } from './users/references';
