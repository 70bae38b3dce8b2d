/**
 * What other plugins (change control) use of branching, from code: branches, their changes
 * and conflicts, staleness, and the actions run as a given caller.
 */
export { branchingPlugin, BRANCHING_VERSION } from './plugin';
export { findBranch, loadBranch, presentBranch, BRANCH_TYPE, type BranchOut } from './branches';
export { ChangeVisibility, type ChangedObjectRef, branchAccess, requireBranchWrite } from '../../host';
export { branchContributors } from '../../host';
export {
  listBranchChanges,
  branchChangesView,
  getChangeDiff,
  getVisibleChangeDiff,
  branchHasConflicts,
  changeReprOf,
  touchedObjectTypes,
  CHANGEDIFF_TYPE,
  type ChangeDiffOut,
} from './changes';
export { computeConflicts } from '../../host';
export { isBranchStale } from './staleness';
export { mergeBranch } from './merge';
export { conflictsFound, conflictWords, type ConflictsFound } from './merge-conflicts';
export {
  DIGEST_TABLES,
  branchChangeCount,
  branchDigest,
  digestOfChanges,
  formerDigestOfChanges,
  canonicalJson,
  EMPTY_DIGEST,
} from './digest';
export { syncBranch } from './sync';
export { revertBranch } from './revert';
export type { ActionOptions, BranchActionResult } from './action-result';
