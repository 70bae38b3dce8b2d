// What the caller may do with a change request, read from the service's `actions` and never
// re-derived here. Feeds tree `contextValue`s (and so menu `when` clauses), QuickPick candidates
// and the checks run before a command calls the service.
import type { ChangeRequest } from '../../contract/api/change-control';
import { CALLER_ACTIONS, type CallerAction, type LifecycleAction } from '../../contract/api/vocabulary';

export interface Availability {
  allowed: boolean;
  reason: string;
}

const NOT_OFFERED = 'The service does not offer this action for this change request.';

export function availability(cr: Pick<ChangeRequest, 'actions'>, action: CallerAction): Availability {
  const a = cr.actions[action];
  if (!a) return { allowed: false, reason: NOT_OFFERED };
  return { allowed: a.allowed, reason: a.allowed ? '' : a.reason?.trim() || NOT_OFFERED };
}

export { mergeBlockedReason } from '../../contract/merge-reason';

export function allowedActions(cr: Pick<ChangeRequest, 'actions'>): CallerAction[] {
  return CALLER_ACTIONS.filter((a) => availability(cr, a).allowed);
}

/** Tree item context value: `changeRequest;submit;abandon;` (the kind, then each allowed action). */
export function changeRequestContextValue(cr: Pick<ChangeRequest, 'actions'>): string {
  return ['changeRequest', ...allowedActions(cr)].join(';') + ';';
}

/** The `when` clause fragment matching a context value that allows `action`. */
export function whenActionAllowed(action: CallerAction): string {
  return `viewItem =~ /;${action};/`;
}

/** The REST path segment of a lifecycle move, for the actions that are moves. */
export const LIFECYCLE_OF: Partial<Record<CallerAction, LifecycleAction>> = {
  submit: 'submit',
  return_to_draft: 'return-to-draft',
  abandon: 'abandon',
  reopen: 'reopen',
};
