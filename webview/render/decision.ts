// The decision form (Approve, Request changes, Comment): nothing preselected; the caller's own
// review so far, and the service's reason when the caller may not review.
import { DECISION_ORDER, DECISION_VIEW } from '../../contract/labels';
import type { ChangeRequestSnapshot } from '../../contract/webview/protocol';
import { isPending, REVIEW_KEY, type ViewState } from '../state';
import { renderComposer } from './composer';
import { h, timeEl } from './dom';

export function renderDecision(doc: Document, snap: ChangeRequestSnapshot, state: ViewState, now: number): HTMLElement {
  const review = snap.changeRequest.actions.review;
  const mine = snap.reviews.find((r) => r.reviewer.id === snap.me.id);
  const allowed = review?.allowed === true;
  const pending = isPending(state, REVIEW_KEY);
  const decision = state.reviewDecision;
  const sendLabel =
    decision === null
      ? mine
        ? 'Update review'
        : 'Submit review'
      : mine
        ? `Update review: ${DECISION_VIEW[decision].label}`
        : `Submit: ${DECISION_VIEW[decision].label}`;
  return h(
    doc,
    'section',
    { id: 'decision', 'aria-labelledby': 'review-form-title' },
    h(
      doc,
      'form',
      { id: 'review-form', 'aria-labelledby': 'review-form-title' },
      h(doc, 'h2', { id: 'review-form-title' }, mine ? 'Update your review' : 'Your review'),
      mine
        ? h(
            doc,
            'p',
            { class: 'muted', id: 'my-review' },
            `You ${DECISION_VIEW[mine.decision].past} `,
            timeEl(doc, mine.last_updated, now),
            mine.stale ? ' (now stale)' : '',
            '. Sending again updates your review.',
          )
        : null,
      !allowed
        ? h(
            doc,
            'p',
            { class: 'muted', id: 'review-not-allowed' },
            review?.reason || 'You cannot review this change request.',
          )
        : null,
      h(
        doc,
        'fieldset',
        { class: 'decisions', disabled: !allowed || pending },
        h(doc, 'legend', {}, 'Decision'),
        DECISION_ORDER.map((d) =>
          h(
            doc,
            'label',
            { class: 'decision' },
            h(doc, 'input', {
              type: 'radio',
              name: 'decision',
              value: d,
              id: `decision-${d}`,
              checked: decision === d,
            }),
            ` ${DECISION_VIEW[d].label}`,
          ),
        ),
      ),
      renderComposer(doc, state, REVIEW_KEY, {
        label: decision === 'reject' ? 'What must change (required)' : 'Comment (optional)',
        sendLabel,
        cancellable: false,
        disabled: !allowed,
        rows: 3,
      }),
    ),
  );
}
