// The description, the head of the list of changes, threads whose change is gone, and the timeline.
import { DECISION_VIEW, STATUS_VIEW } from '../../contract/labels';
import { checkState } from '../../contract/checks';
import { readableTimes } from '../../contract/time';
import { renderMarkdown } from '../markdown';
import type { ChangeRequestSnapshot } from '../../contract/webview/protocol';
import { APPLY_ALL_KEY, isPending, TIMELINE_PAGE, type ViewState } from '../state';
import { applicableSuggestionIds } from '../threads';
import type { Thread } from '../../contract/threads';
import { latest, type TimelineEntry } from '../timeline';
import { h, timeEl } from './dom';
import { renderThread } from './thread';

export function renderDescription(doc: Document, snap: ChangeRequestSnapshot): HTMLElement {
  const text = snap.changeRequest.description.trim();
  return h(
    doc,
    'section',
    { id: 'description', 'aria-labelledby': 'description-title' },
    h(doc, 'h2', { id: 'description-title' }, 'Description'),
    text ? renderMarkdown(doc, text) : h(doc, 'p', { class: 'muted' }, 'No description.'),
  );
}

/** The title of the list of changes with its tools: filter, fold all, open all in the diff editor. */
export function renderChangesHead(doc: Document, snap: ChangeRequestSnapshot, state: ViewState): HTMLElement {
  const total = snap.changes.length;
  const deleted = snap.changeRequest.branch_deleted;
  const applyAll = applicableSuggestionIds(snap);
  return h(
    doc,
    'div',
    { class: 'changes-head' },
    h(doc, 'h2', { id: 'changes-title' }, `Changes (${total})`),
    deleted ? h(doc, 'p', { class: 'muted' }, 'The branch is deleted; its changes are no longer available.') : null,
    !deleted && total === 0 ? h(doc, 'p', { class: 'muted' }, 'The branch has no changes.') : null,
    total > 0
      ? h(
          doc,
          'div',
          { class: 'changes-tools', role: 'toolbar', 'aria-label': 'Changes' },
          h(doc, 'label', { class: 'visually-hidden', for: 'changes-filter' }, 'Filter changes by object name or type'),
          h(doc, 'input', {
            type: 'search',
            id: 'changes-filter',
            placeholder: 'Filter changes',
            value: state.filter,
            'aria-describedby': 'changes-count',
            autocomplete: 'off',
            spellcheck: 'false',
          }),
          h(
            doc,
            'button',
            { type: 'button', class: 'secondary', 'data-act': 'collapse-all', id: 'collapse-all' },
            'Collapse all',
          ),
          h(
            doc,
            'button',
            { type: 'button', class: 'secondary', 'data-act': 'expand-all', id: 'expand-all' },
            'Expand all',
          ),
          h(
            doc,
            'button',
            { type: 'button', class: 'secondary', 'data-act': 'open-all', id: 'open-all-changes' },
            'Open All Changes',
          ),
          applyAll.length
            ? h(
                doc,
                'button',
                {
                  type: 'button',
                  class: 'primary',
                  'data-act': 'apply-suggestions',
                  'data-comments': applyAll.join(','),
                  'data-key': APPLY_ALL_KEY,
                  id: 'apply-all-suggestions',
                  disabled: isPending(state, APPLY_ALL_KEY),
                },
                isPending(state, APPLY_ALL_KEY) ? 'Applying…' : `Apply all suggestions (${applyAll.length})`,
              )
            : null,
        )
      : null,
    state.errors[APPLY_ALL_KEY] ? h(doc, 'p', { class: 'error', role: 'alert' }, state.errors[APPLY_ALL_KEY]) : null,
  );
}

export function renderChangesCount(doc: Document, shown: number, total: number, filtered: boolean): HTMLElement {
  return h(
    doc,
    'p',
    { class: 'muted changes-count', id: 'changes-count', role: 'status' },
    filtered ? `${shown} of ${total} changes match the filter.` : '',
  );
}

export function renderOrphans(
  doc: Document,
  snap: ChangeRequestSnapshot,
  state: ViewState,
  orphans: readonly Thread[],
  now: number,
): HTMLElement {
  if (!orphans.length) return h(doc, 'div', { id: 'earlier-comments', hidden: true });
  return h(
    doc,
    'div',
    { class: 'orphans', id: 'earlier-comments' },
    h(doc, 'h3', {}, 'Comments on changes no longer in the branch'),
    orphans.map((t) =>
      h(
        doc,
        'div',
        { class: 'orphan' },
        h(doc, 'p', { class: 'muted' }, t.root.change_label || 'The whole request'),
        renderThread(doc, { snap, state, now, anchored: false, showAttribute: true }, t),
      ),
    ),
  );
}

function describe(doc: Document, e: TimelineEntry, known: Set<number>): (Node | string | null)[] {
  switch (e.kind) {
    case 'created':
      return [h(doc, 'strong', {}, e.who ?? 'Someone'), ' opened the change request'];
    case 'status':
      return [
        h(doc, 'strong', {}, e.move.user ?? 'The service'),
        ' moved it ',
        e.move.from ? `from ${STATUS_VIEW[e.move.from].label} ` : '',
        'to ',
        h(doc, 'span', { class: `badge status-${e.move.to}` }, STATUS_VIEW[e.move.to].label),
      ];
    case 'review':
      return [
        h(doc, 'strong', {}, e.review.reviewer.display),
        ` ${e.updated ? 'updated their review: ' : ''}${DECISION_VIEW[e.review.decision].past}`,
        e.review.stale
          ? h(
              doc,
              'span',
              { class: 'badge stale', title: "The branch's changes differ from those this review was given on" },
              'stale',
            )
          : null,
        // Only a policy on trial names the reviewer: the review decides nothing.
        e.review.advisory
          ? h(
              doc,
              'span',
              {
                class: 'badge advisory',
                title: 'Only a policy on trial names this reviewer; the review counts for no decision',
              },
              'advisory (policy on trial)',
            )
          : null,
        // The content the review was given on: the digest of the branch's net diff.
        e.review.digest
          ? h(
              doc,
              'span',
              { class: 'muted digest', title: `Given on digest ${e.review.digest}` },
              ` · on ${e.review.digest.slice(0, 8)}`,
            )
          : null,
      ];
    case 'comment': {
      const c = e.comment;
      const reveal =
        c.change_diff !== null && known.has(c.change_diff)
          ? h(
              doc,
              'button',
              {
                type: 'button',
                class: 'link',
                'data-act': 'reveal-change',
                'data-change': c.change_diff,
                'aria-label': `Show ${c.change_label} in the list of changes`,
              },
              c.change_label || 'the change',
            )
          : h(doc, 'span', {}, c.change_label || 'the request');
      return [
        h(doc, 'strong', {}, c.author.display),
        c.parent === null ? ' commented on ' : ' replied on ',
        reveal,
        c.attribute ? h(doc, 'span', {}, ' · ', h(doc, 'code', {}, c.attribute)) : null,
        c.outdated ? h(doc, 'span', { class: 'mark outdated' }, 'Outdated') : null,
      ];
    }
    case 'check':
      return [
        `Check `,
        h(doc, 'strong', {}, e.check.label || e.check.name),
        // An outdated or timed-out result reads as what it is, never as a plain "Passed".
        `: ${checkState(e.check).label}`,
        e.check.summary ? h(doc, 'span', { class: 'muted' }, ` (${e.check.summary})`) : null,
      ];
    case 'override':
      return [
        h(doc, 'strong', {}, e.override.user?.display ?? 'A deleted user'),
        ' merged it past the gate (override): ',
        h(doc, 'span', { class: 'override-reason' }, e.override.reason),
      ];
  }
}

function body(doc: Document, e: TimelineEntry): HTMLElement | null {
  if (e.kind === 'override')
    return h(
      doc,
      'p',
      { class: 'muted overridden' },
      'What it set aside: ',
      readableTimes(e.override.overridden_reason),
    );
  if (e.kind === 'review' && e.review.comment) return renderMarkdown(doc, e.review.comment);
  if (e.kind === 'comment') return renderMarkdown(doc, e.comment.text);
  return null;
}

export function renderTimeline(
  doc: Document,
  snap: ChangeRequestSnapshot,
  entries: readonly TimelineEntry[],
  limit: number,
  now: number,
): HTMLElement {
  const { shown, hidden } = latest(entries, limit);
  const known = new Set(snap.changes.map((c) => c.id));
  return h(
    doc,
    'section',
    { id: 'timeline', 'aria-labelledby': 'timeline-title' },
    h(doc, 'h2', { id: 'timeline-title' }, 'Timeline'),
    hidden
      ? h(
          doc,
          'button',
          { type: 'button', class: 'link', 'data-act': 'show-more-timeline', id: 'timeline-more' },
          hidden <= TIMELINE_PAGE
            ? `Show ${hidden} earlier event${hidden === 1 ? '' : 's'}`
            : `Show ${TIMELINE_PAGE} earlier events (${hidden} in all)`,
        )
      : null,
    h(
      doc,
      'ol',
      { class: 'timeline' },
      shown.map((e) =>
        h(
          doc,
          'li',
          {
            class: `event event-${e.kind}${e.kind === 'review' ? ` decision-${e.review.decision}${e.review.advisory ? ' advisory' : ''}` : ''}`,
            'data-key': e.key,
            id: e.kind === 'review' ? `review-${e.review.id}` : undefined,
          },
          h(doc, 'div', { class: 'event-head' }, describe(doc, e, known), ' ', timeEl(doc, e.time, now)),
          body(doc, e),
        ),
      ),
    ),
    snap.history === null
      ? h(
          doc,
          'p',
          { class: 'muted hint' },
          'Status moves are not shown: reading the changelog needs a permission you do not have.',
        )
      : null,
  );
}
