import type {
  ActionAvailability,
  CallerAction,
  ChangeRequestStatus,
  LifecycleAction,
} from '../../../../contract/api/change-control';
import { type AuthUser, grantAllows, type UserPermissions } from '../../../host';
import { GATE_TYPE, MERGE_CHECK_TYPE, PERMISSIONS } from '../names';
import { LIFECYCLE, lifecycleRefusal } from './lifecycle';
import { isOpen } from './status';

/**
 * What the caller may do next with a change request, and why not (pure). Clients map this to
 * their menus; they never re-derive the rules.
 */
export interface ActionFacts {
  status: ChangeRequestStatus;
  requesterId: number | null;
  branchExists: boolean;
  /** The branch's status (`ready`, `merged`, ...), null when it is gone. */
  branchStatus?: string | null;
  readyToMerge: boolean;
  mergeBlockedReason: string;
  /** Only conflicts with main block the merge: a merge by hand acknowledging them passes. */
  onlyConflictsBlock?: boolean;
  /** Only the change window blocks the merge. */
  onlyWindowBlocks: boolean;
  /** `enforce_merge_gate`: false lets an open request's ready branch merge whatever the gate says. */
  gateEnforced?: boolean;
  /** Why the caller may not merge the branch (`branching.merge_branch` does not cover it), or null when they may. */
  branchMergeRefusal?: string | null;
  /** Why the caller may not write to the branch (applying suggestions is a write in it), or null when they may. */
  branchWriteRefusal?: string | null;
  /** Why the caller may not sync the branch (`branching.sync_branch` does not cover it), or null when they may. */
  branchSyncRefusal?: string | null;
}

const ok: ActionAvailability = { allowed: true, reason: null };
const no = (reason: string): ActionAvailability => ({ allowed: false, reason });
/** A refusal naming the permission the caller lacks, so that they know what to ask for. */
const NO_PERMISSION = (permission: string, what: string): ActionAvailability =>
  no(`You need ${permission} to ${what}.`);

const LIFECYCLE_FIELDS: Record<LifecycleAction, CallerAction> = {
  submit: 'submit',
  'return-to-draft': 'return_to_draft',
  abandon: 'abandon',
  reopen: 'reopen',
};

/**
 * Whether a constraint on `change_mergecheck` admits the checks of this request (the route
 * also admits a constraint naming one of its checks; this answers from the request alone).
 */
function checksOfRequestAllowed(
  user: AuthUser | null,
  perms: UserPermissions | null,
  object: Record<string, unknown>,
): boolean {
  if (!user || !perms) return false;
  const grant = perms.grant(MERGE_CHECK_TYPE, 'change');
  return grant === true || (grant !== false && grantAllows(grant, { change_request: object.id }, user));
}

export function callerActions(
  user: AuthUser | null,
  perms: UserPermissions | null,
  object: Record<string, unknown>,
  facts: ActionFacts,
): Record<CallerAction, ActionAvailability> {
  const allows = (permission: string): boolean => perms !== null && perms.allows(permission, object);
  const has = (permission: string): boolean => perms !== null && perms.has(permission);
  const out = {} as Record<CallerAction, ActionAvailability>;

  for (const [action, field] of Object.entries(LIFECYCLE_FIELDS) as Array<[LifecycleAction, CallerAction]>) {
    const refusal = lifecycleRefusal(action, facts.status, facts.branchExists);
    if (!allows(LIFECYCLE[action].permission))
      out[field] = NO_PERMISSION(LIFECYCLE[action].permission, `${action.replace(/-/g, ' ')} this change request`);
    else out[field] = refusal ? no(refusal) : ok;
  }

  if (!has(PERMISSIONS.addReview)) out.review = NO_PERMISSION(PERMISSIONS.addReview, 'review change requests');
  else if (user !== null && facts.requesterId === user.id)
    out.review = no('You cannot review your own change request.');
  else if (!isOpen(facts.status)) out.review = no(`The change request is ${facts.status}.`);
  else out.review = ok;

  if (!has(PERMISSIONS.reportCheck)) out.run_checks = NO_PERMISSION(PERMISSIONS.reportCheck, 're-run checks');
  else if (!checksOfRequestAllowed(user, perms, object))
    out.run_checks = no('Your permission to re-run checks does not cover the checks of this change request.');
  else if (!isOpen(facts.status)) out.run_checks = no(`The change request is ${facts.status}.`);
  else out.run_checks = ok;

  if (!has(PERMISSIONS.mergeBranch)) out.merge = NO_PERMISSION(PERMISSIONS.mergeBranch, 'merge branches');
  else if (facts.branchMergeRefusal) out.merge = no(facts.branchMergeRefusal);
  else if (facts.readyToMerge) out.merge = ok;
  else if (facts.onlyConflictsBlock) out.merge = { allowed: true, reason: facts.mergeBlockedReason };
  else if (facts.onlyWindowBlocks && allows(PERMISSIONS.overrideWindow))
    out.merge = { allowed: true, reason: `${facts.mergeBlockedReason} You may override the change window.` };
  else if (facts.gateEnforced === false && facts.branchExists && isOpen(facts.status))
    out.merge = { allowed: true, reason: `The merge gate is not enforced. ${facts.mergeBlockedReason}` };
  else out.merge = no(facts.mergeBlockedReason);

  out.override = overrideAvailability(user, perms, object, facts, allows(PERMISSIONS.overrideWindow));

  if (!has(PERMISSIONS.addComment)) out.comment = NO_PERMISSION(PERMISSIONS.addComment, 'comment on change requests');
  else if (!facts.branchExists) out.comment = no('The branch of this change request has been deleted.');
  else out.comment = ok;

  // Applying a reviewer's suggestions is a write in the branch: object permissions decide each object.
  if (!facts.branchExists) out.apply_suggestions = no('The branch of this change request has been deleted.');
  else if (facts.branchWriteRefusal) out.apply_suggestions = no(facts.branchWriteRefusal);
  else if (facts.branchStatus && facts.branchStatus !== 'ready')
    out.apply_suggestions = no(`The branch is ${facts.branchStatus}; only a ready branch accepts changes.`);
  else out.apply_suggestions = ok;

  // Editing its fields (title, description, window, automatic merge): change_changerequest on this request.
  if (!allows(PERMISSIONS.edit)) out.edit = NO_PERMISSION(PERMISSIONS.edit, 'edit this change request');
  else out.edit = ok;

  // Syncing its branch with main (the way out of conflicts): branching.sync_branch for the branch.
  if (!facts.branchExists) out.sync = no('The branch of this change request has been deleted.');
  else if (!has(PERMISSIONS.syncBranch)) out.sync = NO_PERMISSION(PERMISSIONS.syncBranch, 'sync branches');
  else if (facts.branchSyncRefusal) out.sync = no(facts.branchSyncRefusal);
  else if (facts.branchStatus && facts.branchStatus !== 'ready')
    out.sync = no(`The branch is ${facts.branchStatus}; only a ready branch is synced.`);
  else out.sync = ok;
  return out;
}

/**
 * Override (gate/override.ts): shown as allowed only to holders of `override_gate` on this
 * request (or of the window override when only the window blocks) who may merge, when the gate
 * refuses something overridable.
 */
function overrideAvailability(
  user: AuthUser | null,
  perms: UserPermissions | null,
  object: Record<string, unknown>,
  facts: ActionFacts,
  windowOverride: boolean,
): ActionAvailability {
  const holdsGate = perms !== null && user !== null && grantAllows(perms.grant(GATE_TYPE, 'override'), object, user);
  if (!holdsGate && !(facts.onlyWindowBlocks && windowOverride))
    return NO_PERMISSION(PERMISSIONS.overrideGate, 'override the merge gate of this change request');
  if (perms === null || !perms.has(PERMISSIONS.mergeBranch))
    return NO_PERMISSION(PERMISSIONS.mergeBranch, 'merge branches');
  if (facts.branchMergeRefusal) return no(facts.branchMergeRefusal);
  if (!isOpen(facts.status)) return no(`The change request is ${facts.status}.`);
  if (!facts.branchExists) return no('The branch of this change request has been deleted.');
  if (facts.branchStatus && facts.branchStatus !== 'ready') return no(`The branch is ${facts.branchStatus}.`);
  if (facts.status === 'draft') return no('The change request is a draft; submit it for review.');
  if (facts.readyToMerge) return no('Nothing blocks this change request; merge it normally.');
  if (facts.onlyConflictsBlock)
    return no(
      'Nothing but conflicts with main blocks this change request; merge it normally, acknowledging the conflicts.',
    );
  return { allowed: true, reason: facts.mergeBlockedReason };
}
