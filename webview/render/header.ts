// The header: title, facts of the request, and the action buttons the service allows.
import type { CallerAction } from '../../contract/api/change-control';
import { PRIORITY_LABEL, STATUS_VIEW } from '../../contract/labels';
import { PANEL_ACTIONS, type ChangeRequestSnapshot, type PanelAction } from '../../contract/webview/protocol';
import { actionKey, isPending, type ViewState } from '../state';
import { formatTime, h, timeEl } from './dom';

export const PANEL_ACTION_LABEL = {
  submit: 'Submit for Review',
  return_to_draft: 'Return to Draft',
  abandon: 'Abandon',
  reopen: 'Reopen',
  run_checks: 'Re-run Checks',
  merge: 'Merge Branch',
  override: 'Override and Merge…',
  sync: 'Sync Branch',
} as const satisfies Record<PanelAction, string>;

const CALLER_ACTION_OF = {
  submit: 'submit',
  return_to_draft: 'return_to_draft',
  abandon: 'abandon',
  reopen: 'reopen',
  run_checks: 'run_checks',
  merge: 'merge',
  override: 'override',
  sync: 'sync',
} as const satisfies Record<PanelAction, CallerAction>;

/** Sync Branch sits beside the conflicts it resolves (the merge section), not in the header. */
const HEADER_ACTIONS = PANEL_ACTIONS.filter((a) => a !== 'sync');

/**
 * Override shows disabled, with the service's reason, to a holder of the override who cannot use
 * it now (say, without the right to merge the branch), on a submitted open request that cannot
 * merge; not to those the override is not for (the reason names change_control.override_gate).
 */
function overrideShownBlocked(cr: ChangeRequestSnapshot['changeRequest']): boolean {
  const reason = cr.actions.override?.reason ?? '';
  return (
    !cr.ready_to_merge &&
    !['draft', 'completed', 'abandoned'].includes(cr.status) &&
    reason !== '' &&
    !reason.includes('change_control.override_gate')
  );
}

function fact(doc: Document, term: string, value: Node | string | null): Node[] {
  if (value === null || value === '') return [];
  return [h(doc, 'div', { class: 'fact' }, h(doc, 'dt', {}, term), h(doc, 'dd', {}, value))];
}

export function renderHeader(doc: Document, snap: ChangeRequestSnapshot, state: ViewState, now: number): HTMLElement {
  const cr = snap.changeRequest;
  const window =
    cr.scheduled_start || cr.scheduled_end
      ? `${formatTime(cr.scheduled_start) || '…'} – ${formatTime(cr.scheduled_end) || '…'}`
      : null;
  const branch = cr.branch_deleted ? `${cr.branch_name} (deleted)` : cr.branch_name;

  const buttons = HEADER_ACTIONS.flatMap((action) => {
    const a = cr.actions[CALLER_ACTION_OF[action]];
    const allowed = a?.allowed === true;
    // Merge stays visible on a submitted open request, disabled with its reason (Override too, for
    // its holders); the others show only when allowed.
    const showBlocked =
      (action === 'merge' && !['draft', 'completed', 'abandoned'].includes(cr.status)) ||
      (action === 'override' && overrideShownBlocked(cr));
    if (!allowed && !showBlocked) return [];
    const pending = isPending(state, actionKey(action));
    return [
      h(
        doc,
        'button',
        {
          type: 'button',
          id: `action-${action}`,
          class: action === 'merge' || action === 'submit' ? 'primary' : 'secondary',
          'data-act': 'panel-action',
          'data-action': action,
          'aria-disabled': allowed && !pending ? undefined : 'true',
          'aria-describedby': !allowed && action === 'merge' ? 'merge-reason' : !allowed ? `why-${action}` : undefined,
          title: !allowed ? (a?.reason ?? undefined) : undefined,
        },
        pending ? `${PANEL_ACTION_LABEL[action]}…` : PANEL_ACTION_LABEL[action],
      ),
      // Why a button shown disabled cannot be used (Merge's reason is the merge section's).
      !allowed && action !== 'merge'
        ? h(doc, 'span', { class: 'muted why', id: `why-${action}` }, a?.reason ?? '')
        : null,
    ].filter((x): x is HTMLElement => x !== null);
  });

  const notices = [
    ...snap.problems,
    ...(state.loadError ? [`Refreshing failed: ${state.loadError}`] : []),
    ...PANEL_ACTIONS.flatMap((a) => (state.errors[actionKey(a)] ? [state.errors[actionKey(a)]] : [])),
  ];

  return h(
    doc,
    'header',
    { class: 'cr-header', id: 'cr-header' },
    h(doc, 'h1', { id: 'cr-title' }, cr.title || cr.branch_name),
    h(
      doc,
      'dl',
      { class: 'facts' },
      fact(doc, 'Reference', cr.ref || null),
      fact(
        doc,
        'Status',
        h(doc, 'span', { class: `badge status-${cr.status}`, id: 'cr-status' }, STATUS_VIEW[cr.status].label),
      ),
      fact(doc, 'Priority', PRIORITY_LABEL[cr.priority]),
      fact(
        doc,
        'Branch',
        h(doc, 'span', { id: 'cr-branch', class: cr.branch_deleted ? 'deleted' : undefined }, branch),
      ),
      fact(doc, 'Requested by', cr.requester ? cr.requester.display : null),
      fact(doc, 'Change window', window),
      fact(
        doc,
        'Window warning',
        cr.window_warning ? h(doc, 'span', { id: 'cr-window-warning', class: 'warning' }, cr.window_warning) : null,
      ),
      fact(
        doc,
        'Tags',
        cr.tags.length
          ? h(
              doc,
              'span',
              { id: 'cr-tags' },
              cr.tags.map((t) => h(doc, 'span', { class: 'tag', title: t.slug }, t.name)),
            )
          : null,
      ),
      fact(doc, 'Updated', timeEl(doc, cr.last_updated, now)),
    ),
    h(
      doc,
      'div',
      { class: 'toolbar', role: 'toolbar', 'aria-label': 'Change request actions' },
      buttons,
      h(
        doc,
        'button',
        {
          type: 'button',
          id: 'action-refresh',
          class: 'secondary',
          'data-act': 'refresh',
          'aria-busy': state.refreshing ? 'true' : undefined,
        },
        state.refreshing ? 'Refreshing…' : 'Refresh',
      ),
    ),
    notices.length
      ? h(
          doc,
          'div',
          { class: 'notice', role: 'status' },
          h(
            doc,
            'ul',
            {},
            notices.map((n) => h(doc, 'li', {}, n)),
          ),
        )
      : null,
  );
}
