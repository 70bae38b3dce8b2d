// The reviews given so far and the review form (Approve, Request changes, Comment).
import { DECISION_LABEL, DECISION_ORDER, DECISION_PAST } from '../../extension/core/labels';
import { renderMarkdown } from '../markdown';
import type { ChangeRequestSnapshot } from '../protocol';
import { isPending, REVIEW_KEY, type ViewState } from '../state';
import { renderComposer } from './composer';
import { formatTime, h } from './dom';

export function renderReviews(doc: Document, snap: ChangeRequestSnapshot, state: ViewState): HTMLElement {
  const section = h(doc, 'section', { id: 'reviews', 'aria-labelledby': 'reviews-title' }, h(doc, 'h2', { id: 'reviews-title' }, `Reviews (${snap.reviews.length})`));
  if (snap.reviews.length === 0) section.append(h(doc, 'p', { class: 'muted' }, 'No reviews yet.'));
  for (const r of snap.reviews) {
    section.append(
      h(doc, 'article', { class: `review decision-${r.decision}${r.stale ? ' stale' : ''}`, id: `review-${r.id}` },
        h(doc, 'div', { class: 'comment-head' },
          h(doc, 'strong', {}, r.reviewer.display),
          ` ${DECISION_PAST[r.decision]}`,
          r.stale ? h(doc, 'span', { class: 'badge stale' }, 'stale') : null,
          h(doc, 'span', { class: 'muted' }, ` ${formatTime(r.last_updated)}`),
        ),
        r.comment ? renderMarkdown(doc, r.comment) : null,
      ),
    );
  }

  const review = snap.changeRequest.actions.review;
  const mine = snap.reviews.find((r) => r.reviewer.id === snap.me.id);
  const allowed = review?.allowed === true;
  const pending = isPending(state, REVIEW_KEY);
  const form = h(doc, 'form', { id: 'review-form', 'aria-labelledby': 'review-form-title' },
    h(doc, 'h3', { id: 'review-form-title' }, mine ? 'Update your review' : 'Your review'),
    mine ? h(doc, 'p', { class: 'muted' }, `You ${DECISION_PAST[mine.decision]}${mine.stale ? ' (now stale)' : ''}. Sending again updates your review.`) : null,
    !allowed ? h(doc, 'p', { class: 'muted', id: 'review-not-allowed' }, review?.reason || 'You cannot review this change request.') : null,
    h(doc, 'fieldset', { class: 'decisions', disabled: !allowed || pending },
      h(doc, 'legend', {}, 'Decision'),
      DECISION_ORDER.map((d) =>
        h(doc, 'label', { class: 'decision' },
          h(doc, 'input', { type: 'radio', name: 'decision', value: d, id: `decision-${d}`, checked: state.reviewDecision === d }),
          ` ${DECISION_LABEL[d]}`,
        ),
      ),
    ),
    renderComposer(doc, state, REVIEW_KEY, {
      label: state.reviewDecision === 'reject' ? 'What must change (required)' : 'Comment (optional)',
      sendLabel: mine ? 'Update review' : `Submit: ${DECISION_LABEL[state.reviewDecision]}`,
      cancellable: false,
      disabled: !allowed,
    }),
  );
  section.append(form);
  return section;
}
