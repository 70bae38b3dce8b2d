// Merge checks and the merge state (ready, or why not).
import type { ChangeDiff } from '../../contract/api/branching';
import type { ChangeRequest, ChangeRequestStatus, MergeCheck } from '../../contract/api/change-control';
import { mergeBlockedReason } from '../../contract/merge-reason';
import { checkState } from '../../contract/checks';
import { freezePhrase, queuePhrase } from '../../contract/labels';
import { exactTime, readableTimes } from '../../contract/time';
import { isSafeLink } from '../markdown';
import { h, timeEl } from './dom';

/** Who alone may report a check, in words. */
function reporterWords(reporter: NonNullable<MergeCheck['reporter']>): string {
  return [...reporter.users, ...reporter.groups.map((g) => `group ${g}`)].join(' or ');
}

export function renderChecks(
  doc: Document,
  checks: readonly MergeCheck[],
  now: number,
  changes: readonly Pick<ChangeDiff, 'id' | 'object_type' | 'object_id'>[] = [],
  status: ChangeRequestStatus | null = null,
): HTMLElement {
  // A completed or abandoned request has nothing left to merge: no check blocks it.
  const closed = status === 'completed' || status === 'abandoned';
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
      checks.map((c) => {
        // An outdated or timed-out result never shows a pass mark: it says what it is.
        const state = checkState(c);
        return h(
          doc,
          'li',
          {
            class: `check check-${c.status}${c.blocks_merge && !closed ? ' blocking' : ''}${c.outdated ? ' outdated' : ''}${c.timed_out ? ' timed-out' : ''}`,
            'data-check': c.name,
          },
          h(
            doc,
            'div',
            { class: 'check-head' },
            h(doc, 'span', { class: 'symbol', 'aria-hidden': 'true' }, `${state.symbol} `),
            // The name once: the label, or the name when it has none.
            h(doc, 'strong', {}, c.label || c.name),
          ),
          h(
            doc,
            'div',
            { class: 'check-meta' },
            h(
              doc,
              'span',
              {
                class: c.outdated ? 'outdated' : c.timed_out ? 'timed-out' : undefined,
                title: c.outdated
                  ? `Reported on digest ${c.digest?.slice(0, 12) ?? ''} (an earlier version of the branch), or by someone other than its declared reporter: it no longer counts.`
                  : c.timed_out
                    ? 'Never reported in time; a report replaces this result.'
                    : undefined,
              },
              state.label,
            ),
            ` · ${c.required ? 'required' : 'advisory'}`,
            c.blocks_merge && !closed ? h(doc, 'strong', { class: 'blocks' }, ' · blocks merge') : null,
            c.completed ? h(doc, 'span', { class: 'muted' }, ' · ', timeEl(doc, c.completed, now)) : null,
          ),
          c.deadline
            ? h(doc, 'p', { class: 'check-deadline' }, `Fails unless reported by ${exactTime(c.deadline)}.`)
            : null,
          c.reporter
            ? h(doc, 'p', { class: 'muted check-reporter' }, `Only ${reporterWords(c.reporter)} may report it.`)
            : null,
          c.summary ? h(doc, 'p', { class: 'check-summary' }, c.summary) : null,
          c.objects.length > 0
            ? h(
                doc,
                'ul',
                { class: 'check-objects', 'aria-label': `Objects named by ${c.label || c.name}` },
                c.objects.map((o) => {
                  const change = changes.find((x) => x.object_type === o.object_type && x.object_id === o.object_id);
                  const name = o.object_repr || `${o.object_type} ${o.object_id}`;
                  return h(
                    doc,
                    'li',
                    { class: 'check-object' },
                    // A conflicting object opens its diff against main as it is now.
                    change
                      ? h(
                          doc,
                          'button',
                          {
                            type: 'button',
                            class: 'link',
                            'data-act': 'compare-with-main',
                            'data-change': change.id,
                            'aria-label': `Compare ${name} with main now`,
                          },
                          h(doc, 'strong', {}, name),
                        )
                      : h(doc, 'strong', {}, name),
                    ` (${o.object_type}): ${o.problem}`,
                  );
                }),
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
        );
      }),
    ),
  );
  return section;
}

export function renderMergeState(doc: Document, cr: ChangeRequest, syncPending = false): HTMLElement {
  const section = h(
    doc,
    'section',
    { id: 'merge', 'aria-labelledby': 'merge-title' },
    h(doc, 'h2', { id: 'merge-title' }, 'Merge'),
  );
  // The new state takes focus after an action (tabindex -1): its words are what changed.
  const state = (cls: string, ...children: (Node | string)[]) =>
    h(doc, 'p', { class: `state ${cls}`, id: 'merge-state', tabindex: '-1' }, ...children);
  if (cr.status === 'completed') section.append(state('ok', cr.override ? 'Merged by an override.' : 'Merged.'));
  else if (cr.status === 'abandoned') section.append(state('muted', 'Abandoned.'));
  else if (cr.ready_to_merge) section.append(state('ok', '✓ Ready to merge.'));
  else {
    // The service's words with every time written as the reader reads times (no ISO string).
    section.append(
      state(
        'blocked',
        'Merge blocked: ',
        h(doc, 'span', { id: 'merge-reason' }, readableTimes(mergeBlockedReason(cr) || 'not ready.')),
      ),
    );
  }
  if (cr.blocked_until && !cr.ready_to_merge)
    section.append(h(doc, 'p', { id: 'merge-until' }, `May merge from ${exactTime(cr.blocked_until)}.`));
  if (cr.has_conflicts) {
    const sync = cr.actions.sync;
    section.append(
      h(
        doc,
        'p',
        { class: 'warning', id: 'merge-conflicts' },
        'The branch conflicts with main. ',
        // The way out: sync the branch with main (its dry run is shown first).
        sync?.allowed
          ? h(
              doc,
              'button',
              {
                type: 'button',
                class: 'secondary',
                id: 'action-sync',
                'data-act': 'panel-action',
                'data-action': 'sync',
                'aria-disabled': syncPending ? 'true' : undefined,
              },
              syncPending ? 'Sync Branch…' : 'Sync Branch',
            )
          : sync?.reason
            ? h(doc, 'span', { class: 'muted' }, sync.reason)
            : null,
      ),
    );
  }
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
  const open = cr.status !== 'completed' && cr.status !== 'abandoned';
  if (cr.queue_position !== null) {
    // A frozen queue waits for the freeze to end: its head is not "merging now or next".
    const frozen = cr.freezes
      .filter((f) => f.active)
      .reduce<string | null>((end, f) => (end && end > f.end ? end : f.end), null);
    section.append(
      h(
        doc,
        'p',
        { class: 'queue', id: 'merge-queue' },
        `${queuePhrase(cr.queue_position, frozen, (iso) => exactTime(iso))}.`,
      ),
    );
  } else if (cr.auto_merge && open)
    section.append(h(doc, 'p', { class: 'muted', id: 'merge-auto' }, 'Merges automatically once ready.'));
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
          ` by ${cr.override.user?.display ?? 'a deleted user'} on ${exactTime(cr.override.time)}: `,
          h(doc, 'span', { class: 'override-reason' }, cr.override.reason),
        ),
        h(doc, 'p', { class: 'muted' }, 'It set aside: ', readableTimes(cr.override.overridden_reason)),
      ),
    );
  }
  return section;
}
