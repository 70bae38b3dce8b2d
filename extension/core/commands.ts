// The single table of the extension's commands and views. package.json declares exactly these
// (checked by test/extension/manifest.test.ts) and extension/vscode/commands.ts registers exactly
// these (its handler map is typed by CommandId, so a missing handler does not compile).
import type { CallerAction } from '../../contract/api/change-control';

export const CATEGORY = 'Change Control';

export interface CommandSpec {
  readonly id: string;
  readonly title: string;
  /** Codicon shown when the command sits in a view's title bar or inline on an item. */
  readonly icon?: string;
  /** The service action (`actions` of a change request) that must be allowed for the command to apply to a request. */
  readonly action?: CallerAction;
  /** Shown in the command palette (it prompts with a QuickPick when it needs a change request). */
  readonly palette: boolean;
}

export const COMMANDS = [
  { id: 'changeControl.openChangeRequest', title: 'Open Change Request', icon: 'go-to-file', palette: true },
  {
    id: 'changeControl.openChangeRequestForBranch',
    title: 'Open Change Request for Branch',
    icon: 'git-branch',
    palette: true,
  },
  { id: 'changeControl.submit', title: 'Submit for Review', icon: 'send', action: 'submit', palette: true },
  {
    id: 'changeControl.returnToDraft',
    title: 'Return to Draft',
    icon: 'discard',
    action: 'return_to_draft',
    palette: true,
  },
  { id: 'changeControl.abandon', title: 'Abandon', icon: 'circle-slash', action: 'abandon', palette: true },
  { id: 'changeControl.reopen', title: 'Reopen', icon: 'history', action: 'reopen', palette: true },
  { id: 'changeControl.review', title: 'Review', icon: 'feedback', action: 'review', palette: true },
  { id: 'changeControl.runChecks', title: 'Re-run Checks', icon: 'debug-rerun', action: 'run_checks', palette: true },
  { id: 'changeControl.merge', title: 'Merge Branch', icon: 'git-merge', action: 'merge', palette: true },
  { id: 'changeControl.override', title: 'Override and Merge…', icon: 'unlock', action: 'override', palette: true },
  // The way out of conflicts with main: sync the branch (its dry run shown first).
  { id: 'changeControl.syncBranch', title: 'Sync Branch with Main…', icon: 'sync', action: 'sync', palette: true },
  { id: 'changeControl.previewBranch', title: 'Preview Policies for Branch', icon: 'preview', palette: true },
  { id: 'changeControl.refresh', title: 'Refresh', icon: 'refresh', palette: true },
  { id: 'changeControl.search', title: 'Search', icon: 'search', palette: true },
  { id: 'changeControl.signIn', title: 'Sign In', icon: 'sign-in', palette: true },
  { id: 'changeControl.signOut', title: 'Sign Out', icon: 'sign-out', palette: true },
  { id: 'changeControl.showLogs', title: 'Show Logs', icon: 'output', palette: true },
  { id: 'changeControl.openCheckDetails', title: 'Open Check Details', icon: 'link-external', palette: false },
  // Reviewing in the editor: changed objects as documents, the diff editor, viewed marks.
  { id: 'changeControl.openChangeDiff', title: 'Open Change', icon: 'diff', palette: true },
  { id: 'changeControl.openAllChanges', title: 'Open All Changes', icon: 'diff-multiple', palette: true },
  { id: 'changeControl.compareWithMain', title: 'Compare with Main Now', icon: 'git-compare', palette: false },
  { id: 'changeControl.nextChange', title: 'Next Change', icon: 'arrow-circle-down', palette: true },
  { id: 'changeControl.previousChange', title: 'Previous Change', icon: 'arrow-circle-up', palette: true },
  { id: 'changeControl.markViewed', title: 'Mark as Viewed', icon: 'pass', palette: true },
  { id: 'changeControl.markNotViewed', title: 'Mark as Not Viewed', icon: 'pass-filled', palette: true },
  // Comment threads in the gutter and the pending review.
  { id: 'changeControl.addComment', title: 'Add Comment', icon: 'comment', palette: false },
  { id: 'changeControl.startReview', title: 'Start Review', icon: 'comment-draft', palette: true },
  { id: 'changeControl.addReviewComment', title: 'Add Review Comment', icon: 'comment-draft', palette: false },
  { id: 'changeControl.submitReview', title: 'Submit Review', icon: 'check-all', palette: true },
  { id: 'changeControl.discardReview', title: 'Discard Pending Review', icon: 'trash', palette: true },
  { id: 'changeControl.editComment', title: 'Edit Comment', icon: 'edit', palette: false },
  { id: 'changeControl.saveComment', title: 'Save', icon: 'check', palette: false },
  { id: 'changeControl.cancelEditComment', title: 'Cancel', icon: 'close', palette: false },
  { id: 'changeControl.deleteComment', title: 'Delete Comment', icon: 'trash', palette: false },
  { id: 'changeControl.resolveThread', title: 'Resolve Thread', icon: 'check', palette: false },
  { id: 'changeControl.reopenThread', title: 'Reopen Thread', icon: 'issue-reopened', palette: false },
  // Authors' first steps.
  { id: 'changeControl.createBranch', title: 'Create Branch', icon: 'git-branch-create', palette: true },
  { id: 'changeControl.editTitle', title: 'Edit Title', icon: 'edit', action: 'edit', palette: true },
  { id: 'changeControl.editDescription', title: 'Edit Description', icon: 'markdown', action: 'edit', palette: true },
  // Authoring: a branch's objects as documents.
  { id: 'changeControl.showBranchObjects', title: 'Show Branch Objects', icon: 'list-tree', palette: true },
  {
    id: 'changeControl.openBranchFolder',
    title: 'Open Branch as Workspace Folder',
    icon: 'root-folder-opened',
    palette: true,
  },
  { id: 'changeControl.goToObject', title: 'Go to Object…', icon: 'search', palette: true },
  { id: 'changeControl.newObject', title: 'New Object…', icon: 'new-file', palette: true },
  { id: 'changeControl.deleteObject', title: 'Delete Object', icon: 'trash', palette: true },
  { id: 'changeControl.revertObject', title: 'Revert Object to Main', icon: 'discard', palette: true },
  { id: 'changeControl.loadMoreObjects', title: 'Load More Objects', icon: 'ellipsis', palette: false },
  // Suggested changes in comment threads.
  { id: 'changeControl.suggestChange', title: 'Suggest a Change', icon: 'lightbulb', palette: false },
  { id: 'changeControl.applySuggestion', title: 'Apply Suggestion', icon: 'lightbulb-autofix', palette: false },
  {
    id: 'changeControl.applySuggestions',
    title: 'Apply All Suggestions',
    icon: 'check-all',
    action: 'apply_suggestions',
    palette: true,
  },
  // When the bundled service cannot start, or the service cannot be reached.
  { id: 'changeControl.useRemoteServer', title: 'Use a Remote Server', icon: 'remote', palette: true },
  { id: 'changeControl.openSettings', title: 'Open Settings', icon: 'settings-gear', palette: true },
] as const satisfies readonly CommandSpec[];

export type CommandId = (typeof COMMANDS)[number]['id'];

export function commandSpec(id: CommandId): CommandSpec {
  const spec = COMMANDS.find((c) => c.id === id);
  if (!spec) throw new Error(`unknown command ${id}`);
  return spec;
}

/** The palette title, "Change Control: Submit for Review". */
export function fullTitle(id: CommandId): string {
  return `${CATEGORY}: ${commandSpec(id).title}`;
}

export const VIEW_CONTAINER = 'changeControl';
/** Changed Objects has a container of its own: the whole side bar's height for walking a review's changes. */
export const REVIEW_CONTAINER = 'changeControlReview';

export const VIEWS = {
  changeRequests: { id: 'changeControl.changeRequests', name: 'Change Requests', container: VIEW_CONTAINER },
  checks: { id: 'changeControl.checks', name: 'Checks', container: VIEW_CONTAINER },
  myReviews: { id: 'changeControl.myReviews', name: 'My Reviews', container: VIEW_CONTAINER },
  mergeQueue: { id: 'changeControl.mergeQueue', name: 'Merge Queue', container: VIEW_CONTAINER },
  branchObjects: { id: 'changeControl.branchObjects', name: 'Branch Objects', container: VIEW_CONTAINER },
  changedObjects: { id: 'changeControl.changedObjects', name: 'Changed Objects', container: REVIEW_CONTAINER },
} as const;
export type ViewKey = keyof typeof VIEWS;

/** The webview panel type of a change request (its serializer restores it). */
export const CHANGE_REQUEST_PANEL = 'changeControl.changeRequest';

/** Context keys the extension sets for `when` clauses. */
export const CONTEXT_KEYS = {
  /** The connection phase (connection-state.ts). */
  connection: 'changeControl.connection',
  /** True when connected and the service lists no change request at all. */
  empty: 'changeControl.empty',
  /** Why the connection is offline or failed (connection-state.ts), or empty. */
  problem: 'changeControl.problem',
  /** True when connected and the service has no open branch (the empty state offers Create Branch). */
  noBranches: 'changeControl.noBranches',
  /** True when the change request of the active editor has a pending review. */
  reviewing: 'changeControl.reviewing',
  /** True when the Changed Objects view shows a request with changes (Next/Previous Change apply). */
  hasChanges: 'changeControl.hasChanges',
  /** True when the active editor shows a changed object (Mark as Viewed applies). */
  activeChange: 'changeControl.activeChange',
  /** True when the change the active editor shows is marked viewed. */
  activeViewed: 'changeControl.activeViewed',
  /** True when the Branch Objects view shows a branch. */
  branchObjects: 'changeControl.branchObjects',
} as const;

/** The comment controller's id (menus of the comment widget read it as `commentController`). */
export const COMMENT_CONTROLLER = 'changeControl.comments';
