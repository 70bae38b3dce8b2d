/**
 * Where the service's API lives and the object types its clients name: the service serves these
 * paths and the extension calls them, so each is written once, here.
 */
export const CHANGE_CONTROL_API = '/api/plugins/change-control/';
/** The change-control plugin's app label: its object types are `change_control.<model>`. */
export const CHANGE_CONTROL_APP = 'change_control';

/** The plugin's models: name, display name and collection path. */
export const CHANGE_CONTROL_MODELS = {
  policy: { model: 'policy', display: 'Policy', path: `${CHANGE_CONTROL_API}policies/` },
  policyRule: { model: 'policyrule', display: 'Policy rule', path: `${CHANGE_CONTROL_API}policy-rules/` },
  changeRequest: { model: 'changerequest', display: 'Change request', path: `${CHANGE_CONTROL_API}change-requests/` },
  review: { model: 'review', display: 'Review', path: `${CHANGE_CONTROL_API}reviews/` },
  mergeCheck: { model: 'mergecheck', display: 'Merge check', path: `${CHANGE_CONTROL_API}checks/` },
  changeComment: { model: 'changecomment', display: 'Change comment', path: `${CHANGE_CONTROL_API}change-comments/` },
  freeze: { model: 'freeze', display: 'Freeze', path: `${CHANGE_CONTROL_API}freezes/` },
} as const;

/** The object type of a change request (changelog entries, notifications, search hits). */
export const CHANGE_REQUEST_TYPE = `${CHANGE_CONTROL_APP}.${CHANGE_CONTROL_MODELS.changeRequest.model}`;

/** The paths a client calls. */
export const API_PATHS = {
  status: '/api/status/',
  me: '/api/users/me/',
  provision: '/api/users/tokens/provision/',
  branches: '/api/plugins/branching/branches/',
  changes: '/api/plugins/branching/changes/',
  notifications: '/api/extras/notifications/',
  search: '/api/search/',
  changeRequests: CHANGE_CONTROL_MODELS.changeRequest.path,
  checks: CHANGE_CONTROL_MODELS.mergeCheck.path,
  reviews: CHANGE_CONTROL_MODELS.review.path,
  comments: CHANGE_CONTROL_MODELS.changeComment.path,
  settings: `${CHANGE_CONTROL_API}settings/`,
  stream: `${CHANGE_CONTROL_API}stream/`,
  mergeQueue: `${CHANGE_CONTROL_API}merge-queue/`,
} as const;
