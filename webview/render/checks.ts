// Merge checks and the merge state (ready, or why not).
import type { ChangeRequest, MergeCheck } from '../../contract/api/change-control';
import { mergeBlockedReason } from '../../contract/merge-reason';
import { CHECK_STATUS_VIEW, freezePhrase, queuePhrase } from '../../contract/labels';
import { exactTime } from '../../contract/time';
import { isSafeLink } from '../markdown';
import { h, timeEl } from './dom';

export function renderChecks(doc: Document, checks: readonly MergeCheck[], now: number): HTMLElement {
  const section = h(
    doc,
    'section',
    { id: 'checks', 'aria-labelledby': 'checks-title' },
    h(doc, 'h2', { id: 'checks-title' }, `Checks (${checks.length})`),
  );
  if (checks.length === 0) {
    section.append(h(doc, 'p', { class: 'muted' }, 'No checks on this change request.'));
    return section;
  }
  section.append(
    h(
      doc,
      'ul',
      { class: 'checks' },
      checks.map((c) =>
        h(
          doc,
          'li',
          { class: `check check-${c.status}${c.blocks_merge ? ' blocking' : ''}`, 'data-check': c.name },
          h(
            doc,
            'div',
            { class: 'check-head' },
            h(doc, 'span', { class: 'symbol', 'aria-hidden': 'true' }, `${CHECK_STATUS_VIEW[c.status].symbol} `),
            h(doc, 'strong', {}, c.label || c.name),
            c.label && c.label !== c.name ? h(doc, 'span', { class: 'muted' }, ` (${c.name})`) : null,
          ),
          h(
            doc,
            'div',
            { class: 'check-meta' },
            `${CHECK_STATUS_VIEW[c.status].label} · ${c.required ? 'required' : 'advisory'}`,
            // A result for an earlier version of the branch: it no longer counts.
            c.outdated
              ? h(
                  doc,
                  'strong',
                  {
                    class: 'outdated',
                    title: `Reported on digest ${c.digest?.slice(0, 12) ?? ''}; the branch has changed since.`,
                  },
                  ' · outdated',
                )
              : null,
            c.blocks_merge ? h(doc, 'strong', { class: 'blocks' }, ' · blocks merge') : null,
            c.completed ? h(doc, 'span', { class: 'muted' }, ' · ', timeEl(doc, c.completed, now)) : null,
          ),
          c.summary ? h(doc, 'p', { class: 'check-summary' }, c.summary) : null,
          c.objects.length > 0
            ? h(
                doc,
                'ul',
                { class: 'check-objects', 'aria-label': `Objects named by ${c.label || c.name}` },
                c.objects.map((o) =>
                  h(
                    doc,
                    'li',
                    { class: 'check-object' },
                    h(doc, 'strong', {}, o.object_repr || `${o.object_type} ${o.object_id}`),
                    ` (${o.object_type}): ${o.problem}`,
                  ),
                ),
              )
            : null,
          isSafeLink(c.details_url)
            ? h(
                doc,
                'button',
                {
                  type: 'button',
                  class: 'link',
                  'data-act': 'open-link',
                  'data-url': c.details_url,
                  'aria-label': `Details of ${c.label || c.name}`,
                },
                'Details',
              )
            : null,
        ),
      ),
    ),
  );
  return section;
}

export function renderMergeState(doc: Document, cr: ChangeRequest): HTMLElement {
  const section = h(
    doc,
    'section',
    { id: 'merge', 'aria-labelledby': 'merge-title' },
    h(doc, 'h2', { id: 'merge-title' }, 'Merge'),
  );
  if (cr.status === 'completed') section.append(h(doc, 'p', { class: 'state ok', id: 'merge-state' }, 'Merged.'));
  else if (cr.status === 'abandoned')
    section.append(h(doc, 'p', { class: 'state muted', id: 'merge-state' }, 'Abandoned.'));
  else if (cr.ready_to_merge)
    section.append(h(doc, 'p', { class: 'state ok', id: 'merge-state' }, '✓ Ready to merge.'));
  else {
    section.append(
      h(
        doc,
        'p',
        { class: 'state blocked', id: 'merge-state' },
        'Merge blocked: ',
        h(doc, 'span', { id: 'merge-reason' }, mergeBlockedReason(cr) || 'not ready.'),
      ),
    );
  }
  if (cr.has_conflicts)
    section.append(h(doc, 'p', { class: 'warning', id: 'merge-conflicts' }, 'The branch conflicts with main.'));
  for (const f of cr.freezes) {
    section.append(
      h(
        doc,
        'p',
        { class: f.active ? 'warning freeze active' : 'muted freeze', 'data-freeze': String(f.id) },
        `${f.active ? '❄ ' : ''}${freezePhrase(f, (iso) => exactTime(iso))}.`,
      ),
    );
  }
  if (cr.queue_position !== null)
    section.append(h(doc, 'p', { class: 'queue', id: 'merge-queue' }, `${queuePhrase(cr.queue_position)}.`));
  if (cr.override) {
    section.append(
      h(
        doc,
        'div',
        { class: 'override', id: 'merge-override' },
        h(
          doc,
          'p',
          {},
          h(doc, 'strong', {}, 'Merged past the gate'),
          ` by ${cr.override.user?.username ?? 'a deleted user'}: `,
          h(doc, 'span', { class: 'override-reason' }, cr.override.reason),
        ),
        h(doc, 'p', { class: 'muted' }, 'It overrode: ', cr.override.overridden_reason),
      ),
    );
  }
  // Only while it is approved: a draft keeps `approved` from its reviews but waits for a submit first.
  if (cr.status === 'approved' && !cr.ready_to_merge) {
    section.append(
      h(doc, 'p', { class: 'muted' }, 'Approved, but a check, the change window or the branch still blocks the merge.'),
    );
  }
  return section;
}
