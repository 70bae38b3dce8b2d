// The panel under jsdom: what a reviewer sees for a snapshot.
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { attributeRows, formatValue } from '../../webview/diff';
import { exactTime } from '../../contract/time';
import { initialState, newThreadKey, reduce, replyKey, type ViewAction, type ViewState } from '../../webview/state';
import { PageView } from '../../webview/view';
import {
  ALICE,
  BOB,
  actions,
  makeChange,
  makeChangeRequest,
  makeCheck,
  makeComment,
  makeEvaluation,
  makeReview,
  makeSnapshot,
} from '../extension/fixtures';

/** The rule fields of a one-off freeze as a request shows it. */
const ONE_OFF = { kind: 'once' as const, weekdays: [], start_time: null, end_time: null, time_zone: 'UTC' };

export const NOW = Date.parse('2026-11-01T11:00:00.000Z');
const doc = () => new JSDOM('<!DOCTYPE html><body></body>').window.document;
/** The page for a state, as the panel shows it. */
function renderApp(d: Document, state: ViewState): HTMLElement {
  const root = d.createElement('div');
  d.body.append(root);
  new PageView(d, root, { now: () => NOW }).update(state);
  return root;
}
const ready = (snapshot = makeSnapshot(), more: ViewAction[] = []): ViewState =>
  [{ type: 'snapshot', snapshot } as ViewAction, ...more].reduce(reduce, initialState);
/** The element's text nodes joined by spaces, as a reader would see separate cells and labels. */
function text(el: Element | null): string {
  if (!el) return '';
  const walker = el.ownerDocument.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
  const parts: string[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) parts.push(n.textContent ?? '');
  return parts.join(' ').replace(/\s+/g, ' ').trim();
}

describe('webview: rendering the change request', () => {
  it('shows a loading line, then a retry on failure', () => {
    const d = doc();
    assert.match(
      text(renderApp(d, reduce(initialState, { type: 'loading', changeRequestId: 1 }))),
      /Loading the change request/,
    );
    const failed = renderApp(
      d,
      [
        { type: 'loading', changeRequestId: 1 },
        { type: 'loadFailed', changeRequestId: 1, message: 'Not found.' },
      ].reduce((s, a) => reduce(s, a as ViewAction), initialState),
    );
    assert.match(text(failed.querySelector('[role=alert]')), /could not be loaded: Not found\./);
    assert.equal(failed.querySelector('[data-act=refresh]')!.textContent, 'Retry');
  });

  it('shows the header: title, ref, status, priority, branch (or deleted), requester and change window', () => {
    const cr = makeChangeRequest({
      id: 1,
      title: 'Move sw1',
      ref: 'CHG-1',
      status: 'approved',
      priority: 'high',
      scheduled_start: '2026-11-10T22:00:00Z',
      scheduled_end: '2026-11-11T02:00:00Z',
    });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr })));
    assert.equal(text(root.querySelector('#cr-title')), 'Move sw1');
    const facts = text(root.querySelector('.facts'));
    for (const part of [
      'Reference CHG-1',
      'Status Approved',
      'Priority High',
      'Branch branch-1',
      'Requested by Bob',
      'Change window',
    ])
      assert.ok(facts.includes(part), `${part} in ${facts}`);
    const gone = renderApp(
      doc(),
      ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, branch: null, branch_deleted: true }) })),
    );
    assert.equal(text(gone.querySelector('#cr-branch')), 'branch-1 (deleted)');
    assert.match(text(gone.querySelector('#changes')), /The branch is deleted/);
  });

  it('shows the window warning ("Window too short") when the service gives one, and nothing otherwise', () => {
    const warning =
      'Window too short: the change window lasts 5 minutes, less than the automatic-merge interval of 10 minutes; an automatic merge may miss it.';
    const cr = makeChangeRequest({
      id: 1,
      scheduled_start: '2026-11-10T22:00:00Z',
      scheduled_end: '2026-11-10T22:05:00Z',
      window_warning: warning,
    });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr })));
    assert.equal(text(root.querySelector('#cr-window-warning')), warning);
    const none = renderApp(doc(), ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1 }) })));
    assert.equal(none.querySelector('#cr-window-warning'), null);
  });

  it("shows the request's tags by name, and no Tags line without any", () => {
    const tags = [
      {
        id: 1,
        url: 'http://x/api/extras/tags/1/',
        display: 'Network',
        name: 'Network',
        slug: 'network',
        color: '00ff00',
      },
      { id: 2, url: 'http://x/api/extras/tags/2/', display: 'Urgent', name: 'Urgent', slug: 'urgent', color: 'ff0000' },
    ];
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, tags }) })));
    assert.deepEqual(
      [...root.querySelectorAll('#cr-tags .tag')].map((e) => e.textContent),
      ['Network', 'Urgent'],
    );
    const none = renderApp(doc(), ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1 }) })));
    assert.equal(none.querySelector('#cr-tags'), null);
  });

  it('offers the actions the service allows; Merge stays visible but disabled with its reason', () => {
    const cr = makeChangeRequest({
      id: 1,
      status: 'needs-review',
      merge_blocked_reason: 'Required check "ci" is pending.',
      actions: actions(['return_to_draft', 'abandon', 'run_checks'], { merge: 'Required check "ci" is pending.' }),
    });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr })));
    const buttons = [...root.querySelectorAll('[data-act=panel-action]')].map((b) => [
      b.textContent,
      b.getAttribute('aria-disabled'),
    ]);
    assert.deepEqual(buttons, [
      ['Return to Draft', null],
      ['Abandon', null],
      ['Re-run Checks', null],
      ['Merge Branch', 'true'],
    ]);
    assert.equal(text(root.querySelector('#merge-reason')), 'Required check "ci" is pending.');
    assert.equal(root.querySelector('#action-merge')!.getAttribute('aria-describedby'), 'merge-reason');
    const draft = renderApp(
      doc(),
      ready(
        makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, status: 'draft', actions: actions(['submit']) }) }),
      ),
    );
    assert.deepEqual(
      [...draft.querySelectorAll('[data-act=panel-action]')].map((b) => b.textContent),
      ['Submit for Review'],
    );
  });

  it('shows the approval panel: counts, who may approve, empty groups, outstanding and stale reviews, reasons', () => {
    const root = renderApp(doc(), ready());
    const panel = root.querySelector('#approval')!;
    assert.equal(text(panel.querySelector('#approval-state')), 'The policies are not satisfied yet.');
    assert.deepEqual([...panel.querySelectorAll('#approval-reasons li')].map(text), [
      'Rule "Network team" needs 1 more approval.',
    ]);
    const rule = text(panel.querySelector('.rule'));
    for (const part of [
      '○ Network team 1 of 2 approvals',
      'Approved by: Alice',
      'May approve: Alice, netops, ghosts (empty group)',
      'Waiting for: Carol',
      'Group ghosts has no members and can never approve.',
    ]) {
      assert.ok(rule.includes(part), `${part} in ${rule}`);
    }
    assert.match(text(panel.querySelector('.stale')), /Carol: Approve/);
    const none = renderApp(
      doc(),
      ready(
        makeSnapshot({
          evaluation: makeEvaluation({ policies: [], stale_reviews: [], reasons: ['No policy rules apply'] }),
        }),
      ),
    );
    assert.deepEqual([...none.querySelectorAll('#approval-reasons li')].map(text), ['No policy rules apply']);
    const rejected = renderApp(
      doc(),
      ready(
        makeSnapshot({
          evaluation: makeEvaluation({
            rejections: [
              { id: 3, reviewer: BOB, comment: 'VLAN **20** is reserved', comment_html: '<script>x</script>' },
            ],
          }),
        }),
      ),
    );
    assert.equal(text(rejected.querySelector('.rejection strong:not(.markdown strong)')), 'Bob');
    assert.equal(rejected.querySelector('.rejection .markdown strong')!.textContent, '20');
    assert.equal(rejected.querySelectorAll('script').length, 0);
    assert.match(
      text(renderApp(doc(), ready(makeSnapshot({ evaluation: null }))).querySelector('#approval')),
      /could not be loaded/,
    );
  });

  it('on a completed or abandoned request, no check blocks a merge and the approval panel says what was, not what is yet', () => {
    for (const status of ['completed', 'abandoned'] as const) {
      const root = renderApp(
        doc(),
        ready(
          makeSnapshot({
            changeRequest: makeChangeRequest({ id: 1, status }),
            checks: [makeCheck({ id: 1, name: 'ci', label: 'CI', status: 'pending', blocks_merge: true })],
          }),
        ),
      );
      assert.equal(text(root.querySelector('#checks li.check')), '○ CI Pending · required');
      assert.equal(root.querySelector('#checks li.blocking'), null);
      assert.equal(
        text(root.querySelector('#approval-state')),
        `The policies were not satisfied when it was ${status}.`,
      );
    }
  });

  it('shows checks with status, required or advisory, blocking, summary and a details button', () => {
    const root = renderApp(
      doc(),
      ready(
        makeSnapshot({
          checks: [
            makeCheck({
              id: 1,
              name: 'ci',
              label: 'CI',
              status: 'pending',
              details_url: 'https://ci.example/1',
              summary: 'queued',
            }),
            makeCheck({
              id: 2,
              name: 'lint',
              label: 'lint',
              status: 'failure',
              required: false,
              blocks_merge: false,
              details_url: 'javascript:alert(1)',
            }),
          ],
        }),
      ),
    );
    const rows = [...root.querySelectorAll('#checks li.check')];
    assert.deepEqual(
      rows.map((r) => r.getAttribute('data-check')),
      ['ci', 'lint'],
    );
    // Each check named once (its label, the name only when it has none).
    assert.equal(text(rows[0]), '○ CI Pending · required · blocks merge queued Details');
    assert.equal(rows[0].querySelector('[data-act=open-link]')!.getAttribute('data-url'), 'https://ci.example/1');
    assert.equal(text(rows[1]), '✗ lint Failed · advisory');
    assert.equal(rows[1].querySelector('[data-act=open-link]'), null, 'no button for an unsafe link');
    assert.match(text(renderApp(doc(), ready(makeSnapshot({ checks: [] }))).querySelector('#checks')), /No checks/);
  });

  it('shows the freezes that apply (in force, upcoming), the queue position, and the objects the mergeable check names', () => {
    const cr = makeChangeRequest({
      id: 1,
      status: 'approved',
      approved: true,
      queue_position: 3,
      merge_blocked_reason: 'Merging is frozen by "Year end" until 2027-01-04T00:00:00.000Z.',
      freezes: [
        {
          id: 4,
          name: 'Year end',
          active: true,
          start: '2026-12-20T00:00:00.000Z',
          end: '2027-01-04T00:00:00.000Z',
          ...ONE_OFF,
        },
        {
          id: 5,
          name: 'Friday evenings',
          active: false,
          start: '2026-11-06T17:00:00.000Z',
          end: '2026-11-06T22:00:00.000Z',
          ...ONE_OFF,
        },
      ],
    });
    const mergeable = makeCheck({
      id: 9,
      name: 'mergeable',
      label: 'Merges cleanly',
      status: 'failure',
      objects: [
        { object_type: 'dcim.device', object_id: 12, object_repr: 'sw1', problem: 'Conflicts with main on status.' },
      ],
    });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr, checks: [mergeable] })));
    const active = root.querySelector('[data-freeze="4"]')!;
    assert.match(text(active), /^❄ Frozen by "Year end" until 4 Jan 2027/);
    assert.ok(active.classList.contains('active'));
    assert.match(text(root.querySelector('[data-freeze="5"]')), /^Freeze "Friday evenings" from 6 Nov 2026/);
    // A frozen queue says it waits for the freeze to end.
    assert.equal(
      text(root.querySelector('#merge-queue')),
      `Position 3 in the merge queue, waiting for the freeze to end (${exactTime('2027-01-04T00:00:00.000Z')}).`,
    );
    assert.equal(
      text(root.querySelector('[data-check="mergeable"] .check-objects')),
      'sw1 (dcim.device): Conflicts with main on status.',
    );
    const plain = renderApp(doc(), ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 2 }) })));
    assert.equal(plain.querySelector('#merge-queue'), null);
    assert.equal(plain.querySelector('.freeze'), null);
  });

  it('shows the merge state: ready, blocked with the reason, conflicts', () => {
    const readyCr = makeChangeRequest({
      id: 1,
      status: 'approved',
      approved: true,
      ready_to_merge: true,
      merge_blocked_reason: '',
      actions: actions(['merge']),
    });
    assert.equal(
      text(renderApp(doc(), ready(makeSnapshot({ changeRequest: readyCr }))).querySelector('#merge-state')),
      '✓ Ready to merge.',
    );
    const blocked = makeChangeRequest({
      id: 1,
      status: 'approved',
      approved: true,
      has_conflicts: true,
      merge_blocked_reason: 'Outside the change window.',
      actions: { ...actions(), merge: { allowed: false, reason: null } },
    });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: blocked })));
    assert.equal(text(root.querySelector('#merge-state')), 'Merge blocked: Outside the change window.');
    // No generic sentence repeated under the exact reason.
    assert.doesNotMatch(text(root.querySelector('#merge')), /Approved, but/);
    // Conflicts lead somewhere: Sync Branch beside them, or why the caller may not.
    assert.equal(
      text(root.querySelector('#merge-conflicts')),
      'The branch conflicts with main. sync is not possible now.',
    );
    const syncable = renderApp(
      doc(),
      ready(
        makeSnapshot({
          changeRequest: { ...blocked, actions: { ...blocked.actions, sync: { allowed: true, reason: null } } },
        }),
      ),
    );
    const sync = syncable.querySelector('#merge-conflicts #action-sync')!;
    assert.equal(text(sync), 'Sync Branch');
    assert.equal(sync.getAttribute('data-action'), 'sync');
    // A draft whose reviews still satisfy the policies waits for a submit, not for a check.
    const reason = 'The change request is a draft; submit it for review.';
    const draft = makeChangeRequest({
      id: 1,
      status: 'draft',
      approved: true,
      merge_blocked_reason: reason,
      actions: actions([], { merge: reason }),
    });
    const draftRoot = renderApp(doc(), ready(makeSnapshot({ changeRequest: draft })));
    assert.equal(
      text(draftRoot.querySelector('#merge-state')),
      'Merge blocked: The change request is a draft; submit it for review.',
    );
    assert.doesNotMatch(text(draftRoot.querySelector('#merge')), /Approved, but/);
  });

  it("shows each changed object's attributes as line diffs, with conflicts and main's value now, and all attributes on demand", () => {
    const change = makeChange({
      id: 11,
      conflicts: ['vlan'],
      original: { name: 'sw1', status: 'planned', vlan: 10, site: 1 },
      modified: { name: 'sw1', status: 'active', vlan: 30, site: 1 },
      current: { name: 'sw1', status: 'planned', vlan: 20, site: 1 },
    });
    let state = ready(makeSnapshot({ changes: [change] }));
    let article = renderApp(doc(), state).querySelector('#change-11')!;
    assert.match(text(article.querySelector('h3')), /Updated sw1 dcim\.device/);
    assert.match(text(article.querySelector('.warning')), /Conflicts with main: vlan/);
    assert.deepEqual(
      [...article.querySelectorAll('.attr')].map((a) => a.getAttribute('data-attr')),
      ['status', 'vlan'],
    );
    const vlan = article.querySelector('[data-attr=vlan]')!;
    assert.equal(vlan.className, 'attr changed conflict');
    assert.equal(vlan.querySelector('.line.removed del')!.textContent, '10');
    assert.equal(vlan.querySelector('.line.added ins')!.textContent, '30');
    assert.deepEqual(
      [...vlan.querySelectorAll('.line .ch')].map((c) => c.textContent),
      ['1', '3'],
      'the changed character',
    );
    assert.equal(text(vlan.querySelector('.current')), 'Main now: 20');
    assert.match(text(vlan.querySelector('.attr-head')), /vlan ⚠ conflict/);
    const created = renderApp(doc(), ready()).querySelector('#change-12 [data-attr=name]')!;
    assert.equal(created.querySelector('.line.removed'), null, 'a create has nothing on the left');
    assert.equal(text(created.querySelector('.line.added')), '+ sw2');
    state = reduce(state, { type: 'toggleAllAttributes', changeId: 11 });
    article = renderApp(doc(), state).querySelector('#change-11')!;
    assert.equal(article.querySelectorAll('.attr').length, 4);
    assert.equal(text(article.querySelector('[data-attr=site] .line.context')), '1');
    assert.equal(article.querySelector('[data-act=toggle-attrs]')!.getAttribute('aria-expanded'), 'true');
  });

  it('highlights the changed lines and characters inside a multi-line value, folding the unchanged stretch', () => {
    const config = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
    const after = [...config];
    after[19] = 'line 20 shutdown';
    const change = makeChange({
      id: 11,
      original: { name: 'sw1', config: config.join('\n') },
      modified: { name: 'sw1', config: after.join('\n') },
      current: { name: 'sw1', config: config.join('\n') },
    });
    const attr = renderApp(doc(), ready(makeSnapshot({ changes: [change] }))).querySelector(
      '#change-11 [data-attr=config]',
    )!;
    const lines = [...attr.querySelectorAll('.line')];
    assert.deepEqual(
      lines.map((l) => l.className.split(' ')[1]),
      ['gap', 'context', 'context', 'context', 'removed', 'added', 'context', 'context', 'context', 'gap'],
    );
    assert.equal(text(lines[0]), '⋯ 16 unchanged lines');
    assert.equal(text(lines[4]), '20 − line 20', 'numbered lines');
    assert.equal(lines[4].querySelector('.ch'), null, 'nothing was removed from that line');
    assert.equal(lines[5].querySelector('.ch')!.textContent, ' shutdown', 'the added characters are highlighted');
    assert.equal(text(lines[9]), '⋯ 17 unchanged lines');
  });

  it('offers "Open in Diff Editor" on each change, and folds a change to its title line', () => {
    let state = ready();
    let root = renderApp(doc(), state);
    const open = root.querySelector('#change-11 [data-act=open-diff]')!;
    assert.equal(open.textContent, 'Open in Diff Editor');
    assert.equal(open.getAttribute('data-change'), '11');
    assert.equal(root.querySelector('#toggle-11')!.getAttribute('aria-expanded'), 'true');
    state = reduce(state, { type: 'toggleCollapsed', changeId: 11 });
    root = renderApp(doc(), state);
    assert.equal(root.querySelector('#toggle-11')!.getAttribute('aria-expanded'), 'false');
    assert.equal(root.querySelector('#change-11 .attr'), null);
    assert.ok(root.querySelector('#change-11 [data-act=open-diff]'), 'still one click from the diff editor');
    assert.ok(root.querySelector('#change-12 .attr'), 'the others stay open');
  });

  it('shows comment threads under their change: replies, resolved state, own comments editable', () => {
    const comments = [
      makeComment({ id: 1, change_diff: 11, author: BOB, text: 'Why **30**?' }),
      makeComment({ id: 2, change_diff: 11, parent: 1, author: ALICE, text: 'Plan says so.' }),
      makeComment({ id: 3, change_diff: 12, author: ALICE, resolved: true, text: 'ok' }),
      makeComment({ id: 4, change_diff: 99, change_label: 'dcim.device sw9', author: BOB, text: 'old' }),
    ];
    const root = renderApp(doc(), ready(makeSnapshot({ comments }), [{ type: 'composerOpened', key: replyKey(1) }]));
    const thread = root.querySelector('#change-11 .thread')!;
    assert.deepEqual(
      [...thread.querySelectorAll('.comment')].map((c) => c.id),
      ['comment-1', 'comment-2'],
    );
    assert.equal(thread.querySelector('#comment-1 .markdown strong')!.textContent, '30');
    assert.equal(thread.querySelector('#comment-1 [data-act=delete-comment]'), null, 'not mine');
    assert.ok(thread.querySelector('#comment-2 [data-act=delete-comment]'), 'mine');
    assert.ok(thread.querySelector(`textarea[data-draft="${replyKey(1)}"]`), 'reply composer open');
    assert.equal(text(thread.querySelector('[data-act=resolve]')), 'Resolve thread');
    const resolved = root.querySelector('#change-12 .thread')!;
    assert.match(resolved.className, /resolved/);
    assert.equal(text(resolved.querySelector('[data-act=resolve]')), 'Reopen thread');
    assert.match(text(root.querySelector('#earlier-comments')), /dcim\.device sw9 .*old/);
    assert.equal(
      root.querySelector('#earlier-comments [data-act=open-composer]'),
      null,
      'no replies on a change that is gone',
    );
  });

  it('shows a suggested change under its comment as a diff (old → new), marks it applied or outdated, and offers Apply only when the service allows it and it is neither', () => {
    const suggestion = (over = {}) => ({
      attribute: 'vlan',
      value: 30,
      previous: 20,
      previous_absent: false,
      outdated: false,
      applied_by: null,
      applied_at: null,
      ...over,
    });
    const comments = [
      makeComment({
        id: 1,
        change_diff: 11,
        author: BOB,
        text: 'Use 30.',
        attribute: 'vlan',
        suggestion: suggestion(),
      }),
      makeComment({ id: 2, change_diff: 11, author: BOB, text: 'Old.', suggestion: suggestion({ outdated: true }) }),
      makeComment({
        id: 3,
        change_diff: 12,
        author: BOB,
        text: 'Done.',
        suggestion: suggestion({ attribute: 'status', applied_at: '2026-11-01T10:00:00Z', applied_by: ALICE }),
      }),
    ];
    const allowed = makeChangeRequest({ id: 1, actions: actions(['comment', 'apply_suggestions']) });
    const root = renderApp(doc(), ready(makeSnapshot({ comments, changeRequest: allowed })));
    const first = root.querySelector('#comment-1 .suggestion')!;
    assert.match(text(first), /Suggested change to vlan/);
    assert.equal(first.querySelector('.line.removed')!.textContent!.includes('20'), true);
    assert.equal(first.querySelector('.line.added')!.textContent!.includes('30'), true);
    assert.ok(root.querySelector('#comment-1 [data-act=apply-suggestions]'));
    assert.match(text(root.querySelector('#comment-2 .suggestion')), /Outdated/);
    assert.equal(root.querySelector('#comment-2 [data-act=apply-suggestions]'), null, 'outdated: not applyable');
    assert.match(text(root.querySelector('#comment-3 .suggestion')), /Applied by Alice/);
    assert.equal(root.querySelector('#comment-3 [data-act=apply-suggestions]'), null);
    assert.equal(text(root.querySelector('#apply-all-suggestions')), 'Apply all suggestions (1)');
    assert.equal(root.querySelector('#apply-all-suggestions')!.getAttribute('data-comments'), '1');

    const notAllowed = renderApp(doc(), ready(makeSnapshot({ comments })));
    assert.equal(notAllowed.querySelector('[data-act=apply-suggestions]'), null, 'the service does not allow it');
    assert.ok(notAllowed.querySelector('#comment-1 .suggestion'), 'still shown');
  });

  it('marks a comment "(edited)" only when its text was edited, not when its thread was resolved', () => {
    const later = '2026-11-25T10:00:00Z';
    const comments = [
      makeComment({
        id: 1,
        change_diff: 11,
        author: BOB,
        text: 'resolved by someone else',
        resolved: true,
        last_updated: later,
      }),
      makeComment({ id: 2, change_diff: 12, author: BOB, text: 'reworded', edited: true, last_updated: later }),
    ];
    const root = renderApp(doc(), ready(makeSnapshot({ comments })));
    assert.doesNotMatch(text(root.querySelector('#comment-1')), /\(edited\)/);
    assert.match(text(root.querySelector('#comment-2')), /\(edited\)/);
  });

  it('shows a thread at the attribute it is anchored to, whole-object threads at the object, outdated ones marked and never lost', () => {
    const comments = [
      makeComment({ id: 1, change_diff: 11, attribute: 'status', author: BOB, text: 'Why active?' }),
      makeComment({ id: 2, change_diff: 11, parent: 1, attribute: 'status', text: 'Cutover.' }),
      makeComment({ id: 3, change_diff: 11, text: 'Whole object' }),
      makeComment({ id: 4, change_diff: 11, attribute: 'vlan', outdated: true, text: 'VLAN?' }),
    ];
    const article = renderApp(doc(), ready(makeSnapshot({ comments }))).querySelector('#change-11')!;
    const status = article.querySelector('[data-attr=status]')!;
    assert.deepEqual(
      [...status.querySelectorAll('.thread .comment')].map((c) => c.id),
      ['comment-1', 'comment-2'],
    );
    const objectThreads = [...article.querySelectorAll('.object-threads > .thread')];
    assert.deepEqual(
      objectThreads.map((t) => t.getAttribute('data-thread-id')),
      ['3', '4'],
    );
    assert.match(objectThreads[1].className, /outdated/);
    assert.equal(text(objectThreads[1].querySelector('.thread-marks')), 'Outdated vlan');
    assert.match(objectThreads[1].getAttribute('aria-label')!, /on vlan .*\(outdated\)/);
    assert.equal(text(article.querySelector('.thread-count')), '3 open threads');
    // Each changed attribute offers a thread of its own.
    const start = status.querySelector<HTMLElement>('[data-act=open-composer]')!;
    assert.equal(start.dataset.key, newThreadKey(11, 'status'));
    const composing = renderApp(
      doc(),
      ready(makeSnapshot(), [{ type: 'composerOpened', key: newThreadKey(11, 'status') }]),
    );
    assert.equal(
      text(composing.querySelector('#change-11 [data-attr=status] .composer label')),
      'Comment on status of sw1',
    );
  });

  it('offers "Comment on this change" only when the service allows commenting', () => {
    const can = renderApp(doc(), ready());
    assert.ok(can.querySelector('#comment-on-11'));
    const cannot = renderApp(
      doc(),
      ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, actions: actions([]) }) })),
    );
    assert.equal(cannot.querySelector('#comment-on-11'), null);
    const composing = renderApp(
      doc(),
      ready(makeSnapshot(), [
        { type: 'composerOpened', key: newThreadKey(11) },
        { type: 'draftChanged', key: newThreadKey(11), text: 'draft text' },
      ]),
    );
    const ta = composing.querySelector(`#change-11 textarea`) as HTMLTextAreaElement;
    assert.equal(ta.value, 'draft text');
    assert.equal(composing.querySelector(`label[for="${ta.id}"]`)!.textContent, 'Comment on sw1');
  });

  it('shows the review form with no decision preselected; the comment is required for Request changes', () => {
    const fresh = renderApp(doc(), ready()).querySelector('#review-form')!;
    assert.deepEqual(
      [...fresh.querySelectorAll('input[name=decision]')].map((r) => (r as HTMLInputElement).checked),
      [false, false, false],
    );
    assert.equal(text(fresh.querySelector('[data-act=send]')), 'Submit review');
    const reviews = [
      makeReview({ id: 1, reviewer: BOB, decision: 'reject', comment: 'Use VLAN 20', stale: true }),
      makeReview({ id: 2, reviewer: ALICE, decision: 'approve' }),
    ];
    const root = renderApp(doc(), ready(makeSnapshot({ reviews }), [{ type: 'decisionChanged', decision: 'reject' }]));
    const form = root.querySelector('#review-form')!;
    assert.equal(text(form.querySelector('h2')), 'Update your review');
    assert.match(
      text(form.querySelector('#my-review')),
      /^You approved 2 hours ago \. Sending again updates your review\.$/,
    );
    assert.equal(
      form.querySelector('#my-review time')!.getAttribute('title')!.length > 0,
      true,
      'the exact time on hover',
    );
    assert.equal((form.querySelector('#decision-reject') as HTMLInputElement).hasAttribute('checked'), true);
    assert.equal(text(form.querySelector('label[for=ta-review]')), 'What must change (required)');
    assert.equal(text(form.querySelector('[data-act=send]')), 'Update review: Request changes');
    assert.match(text(root.querySelector('#timeline #review-1')), /Bob requested changes stale .*Use VLAN 20/);
  });

  it("leads the author's own page with their next step, not a review form they cannot use", () => {
    const cr = makeChangeRequest({
      id: 1,
      requester: ALICE,
      status: 'approved',
      ready_to_merge: true,
      actions: actions(['merge'], { review: 'You cannot review your own change request.' }),
    });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr })));
    assert.equal(root.querySelector('#review-form'), null);
    assert.equal(text(root.querySelector('#decision h2')), 'Your change request');
    assert.match(text(root.querySelector('#author-next')), /^Approved, and nothing blocks the merge: merge it/);
  });

  it("disables the review form with the service's reason when the caller may not review (and is not the author)", () => {
    const cr = makeChangeRequest({
      id: 1,
      actions: actions([], { review: 'You cannot review your own change request.' }),
    });
    const form = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr }))).querySelector('#review-form')!;
    assert.equal(text(form.querySelector('#review-not-allowed')), 'You cannot review your own change request.');
    assert.equal(form.querySelector('fieldset')!.hasAttribute('disabled'), true);
    assert.equal(form.querySelector('[data-act=send]')!.hasAttribute('disabled'), true);
  });

  it('lists the parts that failed to load', () => {
    const root = renderApp(doc(), ready(makeSnapshot({ problems: ['Checks could not be loaded: HTTP 500'] })));
    assert.equal(text(root.querySelector('.notice')), 'Checks could not be loaded: HTTP 500');
  });

  it('puts the merge gate and the decision before the changes, in page (and keyboard) order', () => {
    const root = renderApp(doc(), ready());
    const order = [
      ...root.querySelectorAll('#cr-header, #merge, #decision, #approval, #checks, #description, #changes, #timeline'),
    ].map((e) => e.id);
    assert.deepEqual(order, [
      'cr-header',
      'merge',
      'decision',
      'approval',
      'checks',
      'description',
      'changes',
      'timeline',
    ]);
    assert.equal(root.querySelector('[data-act=skip-to-changes]')!.textContent, 'Skip to changes');
  });

  it('renders the description as Markdown, safely', () => {
    const cr = makeChangeRequest({
      id: 1,
      description: 'Move **sw1**.\n\n<img src=x onerror=alert(1)> [plan](https://wiki.example/plan)',
    });
    const desc = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr }))).querySelector('#description')!;
    assert.equal(desc.querySelector('.markdown strong')!.textContent, 'sw1');
    assert.equal(desc.querySelectorAll('img, [onerror]').length, 0);
    assert.equal(desc.querySelector('a')!.getAttribute('href'), 'https://wiki.example/plan');
    assert.match(text(renderApp(doc(), ready()).querySelector('#description')), /No description\./);
  });

  it('marks an outdated check result on the review page', () => {
    const page = renderApp(
      doc(),
      ready(
        makeSnapshot({
          checks: [
            makeCheck({
              id: 1,
              name: 'ci/build',
              status: 'success',
              outdated: true,
              blocks_merge: true,
              digest: 'c'.repeat(64),
            }),
          ],
        }),
      ),
    );
    const meta = page.querySelector('#checks [data-check="ci/build"] .check-meta');
    // Never a pass mark for a result that no longer counts.
    assert.match(text(meta), /^Outdated \(passed, no longer counts\) · required · blocks merge/);
    assert.doesNotMatch(text(page.querySelector('#checks [data-check="ci/build"] .symbol')), /✓/);
    assert.match(
      page.querySelector('#checks [data-check="ci/build"] .outdated')!.getAttribute('title')!,
      /^Reported on digest cccccccccccc \(an earlier version of the branch\)/,
    );
  });

  it('shows the override recorded on a request: who, why, and what it overrode', () => {
    const cr = makeChangeRequest({
      id: 1,
      status: 'completed',
      override: {
        reason: 'Outage fix',
        user: BOB,
        time: '2026-11-01T10:00:00.000Z',
        overridden_reason: 'Rule "netops" has 0 of 1 required approvals.',
      },
    });
    const page = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr })));
    assert.match(
      text(page.querySelector('#merge-override')),
      new RegExp(
        `Merged past the gate by Bob on ${exactTime('2026-11-01T10:00:00.000Z')}: Outage fix It set aside: Rule "netops" has 0 of 1 required approvals\\.`,
      ),
    );
    assert.equal(renderApp(doc(), ready()).querySelector('#merge-override'), null);
  });

  it('marks an evaluating policy and says what it would block on', () => {
    const base = makeEvaluation();
    const evaluation = {
      ...base,
      policies: [
        ...base.policies,
        {
          ...base.policies[0],
          id: 2,
          name: 'Trial',
          enforcement: 'evaluate' as const,
          blocking_reasons: ['Check "trial/scan" is pending.'],
        },
      ],
    };
    const policies = [...renderApp(doc(), ready(makeSnapshot({ evaluation }))).querySelectorAll('#approval .policy')];
    assert.match(text(policies[1]!.querySelector('h3')), /Trial .* on trial \(advisory\)/);
    assert.equal(text(policies[1]!.querySelector('.would-block')), 'Would block: Check "trial/scan" is pending.');
    assert.equal(policies[0]!.querySelector('.evaluating'), null, 'an active policy is not marked');
  });

  it('tells a reviewer named only by a policy on trial, before they decide, that their review is advisory', () => {
    const base = makeEvaluation();
    const evaluation = { ...base, policies: base.policies.map((p) => ({ ...p, enforcement: 'evaluate' as const })) };
    const page = renderApp(doc(), ready(makeSnapshot({ evaluation })));
    const title = page.querySelector('#review-form-title')!;
    assert.equal(title.textContent, 'Your review advisory');
    assert.equal(title.querySelector('.badge.advisory')!.textContent, 'advisory', 'the space is outside the badge');
    assert.match(text(page.querySelector('#review-advisory')), /^Your review is advisory: only the policy on trial /);
    const binding = renderApp(doc(), ready(makeSnapshot({ evaluation: base })));
    assert.equal(binding.querySelector('#review-advisory'), null);
    assert.equal(binding.querySelector('#review-form-title .badge'), null);
  });

  it('offers Override and Merge only when the service allows it to the caller', () => {
    const holder = renderApp(
      doc(),
      ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, actions: actions(['override']) }) })),
    );
    assert.ok([...holder.querySelectorAll('button')].some((b) => b.textContent === 'Override and Merge…'));
    const other = renderApp(
      doc(),
      ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, actions: actions([]) }) })),
    );
    assert.equal(
      [...other.querySelectorAll('button')].some((b) => b.textContent === 'Override and Merge…'),
      false,
      'not shown to those without change_control.override_gate',
    );
    // A holder who lacks the branch right sees it disabled, with why.
    const reason = 'You need branching.merge_branch on branch "branch-1" to merge it.';
    const holderWithoutBranch = renderApp(
      doc(),
      ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, actions: actions([], { override: reason }) }) })),
    );
    const button = holderWithoutBranch.querySelector('#action-override')!;
    assert.equal(button.getAttribute('aria-disabled'), 'true');
    assert.equal(text(holderWithoutBranch.querySelector('#why-override')), reason);
  });

  it('says which approvals a rule does not count, and why; never "2 of 1 approvals"', () => {
    const base = makeEvaluation();
    const rule = {
      ...base.policies[0].rules[0],
      approvals: 1,
      min_reviews: 1,
      satisfied: true,
      uncounted_approvals: [
        { review: 40, reviewer: BOB, reason: 'contributor' as const, detail: 'Bob wrote changes on the branch.' },
        { review: 41, reviewer: { id: 9, username: 'carol', display: 'Carol' }, reason: 'stale' as const, detail: '' },
      ],
    };
    const evaluation = { ...base, policies: [{ ...base.policies[0], rules: [rule] }] };
    const items = [
      ...renderApp(doc(), ready(makeSnapshot({ evaluation }))).querySelectorAll('#approval .uncounted li'),
    ].map(text);
    assert.deepEqual(items, [
      'Bob: not counted: changed the branch (Bob wrote changes on the branch.)',
      "Carol: not counted: given on other changes than the branch's now",
    ]);
    // The count is the words the extension uses too (contract/labels.ts, approvalsPhrase).
    const over = { ...evaluation, policies: [{ ...base.policies[0], rules: [{ ...rule, approvals: 2 }] }] };
    assert.equal(
      text(renderApp(doc(), ready(makeSnapshot({ evaluation: over }))).querySelector('#approval .rule-head .count')),
      '2 approvals (1 needed)',
    );
  });

  it('shows the timeline: opened, status moves, reviews, comments and check results in time order', () => {
    const snapshot = makeSnapshot({
      history: [
        { id: 1, time: '2026-11-01T08:00:00.000Z', user: 'alice', from: null, to: 'draft' },
        { id: 2, time: '2026-11-01T08:30:00.000Z', user: 'alice', from: 'draft', to: 'needs-review' },
      ],
      reviews: [
        makeReview({
          id: 7,
          reviewer: BOB,
          decision: 'approve',
          created: '2026-11-01T10:30:00.000Z',
          last_updated: '2026-11-01T10:30:00.000Z',
        }),
      ],
      comments: [makeComment({ id: 5, change_diff: 11, attribute: 'vlan', created: '2026-11-01T10:00:00.000Z' })],
      checks: [
        makeCheck({
          id: 3,
          name: 'ci',
          label: 'CI',
          status: 'success',
          summary: 'build #9',
          completed: '2026-11-01T10:45:00.000Z',
        }),
      ],
    });
    const events = [...renderApp(doc(), ready(snapshot)).querySelectorAll('#timeline li.event')];
    assert.deepEqual(
      events.map((e) => e.getAttribute('data-key')),
      ['created', 'status:2', 'comment:5', 'review:7', 'check:3'],
    );
    assert.match(text(events[0]), /^alice opened the change request 3 hours ago$/);
    assert.match(text(events[1]), /alice moved it from Draft to Needs review/);
    assert.match(text(events[2]), /Alice commented on dcim\.device sw1 · vlan/);
    assert.equal(events[2].querySelector('[data-act=reveal-change]')!.getAttribute('data-change'), '11');
    assert.match(text(events[3]), /Bob approved 30 minutes ago/);
    assert.match(text(events[4]), /Check CI : Passed \(build #9\)/);
    const many = makeSnapshot({ comments: Array.from({ length: 45 }, (_, i) => makeComment({ id: i + 1 })) });
    let state = ready(many);
    const first = renderApp(doc(), state);
    assert.equal(first.querySelectorAll('#timeline li.event').length, 30);
    assert.equal(text(first.querySelector('#timeline-more')), 'Show 16 earlier events');
    state = reduce(state, { type: 'showMoreTimeline' });
    assert.equal(renderApp(doc(), state).querySelectorAll('#timeline li.event').length, 46);
  });

  it('computes diff rows and formats values', () => {
    const created = attributeRows({
      original: null,
      modified: { name: 'sw2', tags: ['a'] },
      current: null,
      conflicts: null,
    });
    assert.deepEqual(
      created.map((r) => [r.name, r.changed, r.mainMoved]),
      [
        ['name', true, false],
        ['tags', true, false],
      ],
    );
    assert.deepEqual(
      attributeRows({
        original: { a: { x: 1, y: 2 } },
        modified: { a: { y: 2, x: 1 } },
        current: { a: { x: 1, y: 2 } },
        conflicts: null,
      }),
      [],
    );
    assert.equal(formatValue(undefined), '—');
    assert.equal(formatValue(null), 'null');
    assert.equal(formatValue('x'), 'x');
    assert.equal(formatValue({ a: 1 }), '{"a":1}');
  });
});
