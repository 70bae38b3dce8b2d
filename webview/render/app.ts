// The whole panel from the state.
import type { ViewState } from '../state';
import { renderApproval } from './approval';
import { renderChanges } from './changes';
import { renderChecks, renderMergeState } from './checks';
import { h } from './dom';
import { renderHeader } from './header';
import { renderReviews } from './reviews';

export function renderApp(doc: Document, state: ViewState): HTMLElement {
  const root = h(doc, 'main', { id: 'app', 'data-phase': state.phase });
  if (state.phase === 'waiting' || state.phase === 'loading' || !state.snapshot) {
    if (state.phase === 'failed') {
      root.append(
        h(doc, 'div', { class: 'load-failed', role: 'alert' },
          h(doc, 'p', {}, `The change request could not be loaded: ${state.loadError ?? 'unknown error'}`),
          h(doc, 'button', { type: 'button', class: 'primary', 'data-act': 'refresh', id: 'action-refresh' }, 'Retry'),
        ),
      );
    } else {
      root.append(h(doc, 'p', { class: 'muted', role: 'status', id: 'loading' }, 'Loading the change request…'));
    }
    return root;
  }
  const snap = state.snapshot;
  root.append(
    renderHeader(doc, snap, state),
    h(doc, 'div', { class: 'columns' },
      h(doc, 'div', { class: 'main-column' }, renderChanges(doc, snap, state), renderReviews(doc, snap, state)),
      h(doc, 'aside', { class: 'side-column', 'aria-label': 'Gates' }, renderApproval(doc, snap.evaluation), renderMergeState(doc, snap.changeRequest), renderChecks(doc, snap.checks)),
    ),
  );
  return root;
}
