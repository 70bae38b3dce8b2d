import { CHANGE_CONTROL_API, CHANGE_CONTROL_APP, CHANGE_CONTROL_MODELS } from '../../../contract/api/paths';

/** Names of the change-control plugin: object types, paths and permissions (contract 4.3). */
export const PLUGIN_NAME = 'change-control';
export const PLUGIN_VERSION = '0.5.0';
/** The app label, the API root and the models are the contract's (contract/api/paths.ts). */
export const APP_LABEL = CHANGE_CONTROL_APP;
export const API_ROOT = CHANGE_CONTROL_API;
export const MODELS = CHANGE_CONTROL_MODELS;
export type ModelKey = keyof typeof MODELS;

/** `change_control.<model>` */
export function objectType(key: ModelKey): string {
  return `${APP_LABEL}.${MODELS[key].model}`;
}

export const POLICY_TYPE = objectType('policy');
export const POLICY_RULE_TYPE = objectType('policyRule');
export const CHANGE_REQUEST_TYPE = objectType('changeRequest');
export const REVIEW_TYPE = objectType('review');
export const MERGE_CHECK_TYPE = objectType('mergeCheck');
export const CHANGE_COMMENT_TYPE = objectType('changeComment');
export const FREEZE_TYPE = objectType('freeze');

/**
 * The object type of `override_gate`: it has no rows of its own; a grant's constraints are
 * checked against the change request being overridden.
 */
export const GATE_TYPE = `${APP_LABEL}.gate`;

/** Fired when a request is merged past its gate. */
export const OVERRIDE_EVENT = 'change_request_overridden';

/** Custom permissions beyond view/add/change/delete. */
export const PERMISSIONS = {
  submit: `${APP_LABEL}.change_changerequest`,
  returnToDraft: `${APP_LABEL}.change_changerequest`,
  abandon: `${APP_LABEL}.abandon_changerequest`,
  reopen: `${APP_LABEL}.reopen_changerequest`,
  overrideWindow: `${APP_LABEL}.override_window_changerequest`,
  /** Merging a request the gate refuses, with a reason (gate/override.ts); checked against the request. */
  overrideGate: `${APP_LABEL}.override_gate`,
  bypassPolicy: `${APP_LABEL}.bypass_policy`,
  addReview: `${APP_LABEL}.add_review`,
  reportCheck: `${APP_LABEL}.change_mergecheck`,
  addComment: `${APP_LABEL}.add_changecomment`,
  mergeBranch: 'branching.merge_branch',
  syncBranch: 'branching.sync_branch',
  /** Editing a request's fields (PATCH, PUT). */
  edit: `${APP_LABEL}.change_changerequest`,
} as const;

/** `abandon` of `change_control.abandon_changerequest`, for object-level checks. */
export function actionOf(permission: string): string {
  const rest = permission.slice(permission.indexOf('.') + 1);
  return rest.slice(0, rest.lastIndexOf('_'));
}
