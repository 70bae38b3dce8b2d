// The decision form (Approve, Request changes, Comment): nothing preselected; the caller's own
// review so far, and the service's reason when the caller may not review.
import { DECISION_ORDER, DECISION_VIEW } from '../../contract/labels';
import type { ChangeRequestSnapshot } from '../../contract/webview/protocol';
import { isPending, REVIEW_KEY, type ViewState } from '../state';
import { renderComposer } from './composer';
import { h, timeEl } from './dom';

/**
 * The policies on trial that alone name the caller as a reviewer: their review is advisory (it
 * decides nothing). Empty when an active rule names them too, or none names them.
 */
export function advisoryOnly(snap: Pick<ChangeRequestSnapshot, 'evaluation' | 'me'>): string[] {
  const named = (snap.evaluation?.policies ?? []).filter((p) =>
    p.rules.some((r) => r.eligible_users.some((u) => u.id === snap.me.id)),
  );
  if (named.length === 0 || named.some((p) => p.enforcement !== 'evaluate')) return [];
  return named.map((p) => p.name);
}

/** What the author of a request does next, by its state: their page leads with that, not a review form they cannot use. */
export function authorNextStep(cr: ChangeRequestSnapshot['changeRequest']): string {
  switch (cr.status) {
    case 'draft':
      return 'It is a draft: when its changes are ready, submit it for review (Submit for Review, above).';
    case 'needs-review':
      return 'Waiting for reviews: the approvals below say who may approve it and how many are still needed. Reply to their comments on the changes.';
    case 'rejected':
      return 'Changes were requested: the reviews in the timeline say what. Change the branch; its reviewers are asked again.';
    case 'approved':
      return cr.ready_to_merge
        ? 'Approved, and nothing blocks the merge: merge it (Merge Branch, above).'
        : 'Approved: the merge gate above says what still blocks the merge.';
    case 'completed':
      return 'Merged into main.';
    case 'abandoned':
      return 'Abandoned: reopen it to work on it again.';
  }
}

export function renderDecision(doc: Document, snap: ChangeRequestSnapshot, state: ViewState, now: number): HTMLElement {
  const review = snap.changeRequest.actions.review;
  const trial = advisoryOnly(snap);
  const mine = snap.reviews.find((r) => r.reviewer.id === snap.me.id);
  const allowed = review?.allowed === true;
  // The author's own page: their next step, not a disabled review form (the form is for reviewers).
  if (!allowed && snap.changeRequest.requester?.id === snap.me.id)
    return h(
      doc,
      'section',
      { id: 'decision', 'aria-labelledby': 'author-next-title' },
      h(doc, 'h2', { id: 'author-next-title' }, 'Your change request'),
      h(doc, 'p', { id: 'author-next' }, authorNextStep(snap.changeRequest)),
    );
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
      h(
        doc,
        'h2',
        { id: 'review-form-title' },
        mine ? 'Update your review' : 'Your review',
        // The space outside the badge: inside it, the badge's padding would swallow it.
        trial.length ? [' ', h(doc, 'span', { class: 'badge advisory' }, 'advisory')] : null,
      ),
      // Only a policy on trial names the caller: said before they decide, not after.
      trial.length
        ? h(
            doc,
            'p',
            { class: 'advisory-note', id: 'review-advisory' },
            `Your review is advisory: only the policy on trial ${trial.map((n) => `"${n}"`).join(', ')} names you, so it counts for no decision.`,
          )
        : null,
      mine
        ? h(
            doc,
            'p',
            { class: 'muted', id: 'my-review', tabindex: '-1' },
            `You ${DECISION_VIEW[mine.decision].past}${mine.advisory ? ' (advisory)' : ''} `,
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
