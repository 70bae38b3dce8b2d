// The panel's renderers under jsdom: what a reviewer sees for a snapshot.
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { attributeRows, formatValue } from '../../webview/diff';
import { renderApp } from '../../webview/render/app';
import { initialState, newThreadKey, reduce, replyKey, type ViewAction, type ViewState } from '../../webview/state';
import { ALICE, BOB, actions, makeChange, makeChangeRequest, makeCheck, makeComment, makeEvaluation, makeReview, makeSnapshot } from '../extension/fixtures';

const doc = () => new JSDOM('<!DOCTYPE html><body></body>').window.document;
const ready = (snapshot = makeSnapshot(), more: ViewAction[] = []): ViewState => [{ type: 'snapshot', snapshot } as ViewAction, ...more].reduce(reduce, initialState);
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
    assert.match(text(renderApp(d, reduce(initialState, { type: 'loading', changeRequestId: 1 }))), /Loading the change request/);
    const failed = renderApp(d, [{ type: 'loading', changeRequestId: 1 }, { type: 'loadFailed', changeRequestId: 1, message: 'Not found.' }].reduce((s, a) => reduce(s, a as ViewAction), initialState));
    assert.match(text(failed.querySelector('[role=alert]')), /could not be loaded: Not found\./);
    assert.equal(failed.querySelector('[data-act=refresh]')!.textContent, 'Retry');
  });

  it('shows the header: title, ref, status, priority, branch (or deleted), requester and change window', () => {
    const cr = makeChangeRequest({ id: 1, title: 'Move sw1', ref: 'CHG-1', status: 'approved', priority: 'high', scheduled_start: '2026-11-10T22:00:00Z', scheduled_end: '2026-11-11T02:00:00Z' });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr })));
    assert.equal(text(root.querySelector('#cr-title')), 'Move sw1');
    const facts = text(root.querySelector('.facts'));
    for (const part of ['Reference CHG-1', 'Status Approved', 'Priority High', 'Branch branch-1', 'Requested by Bob', 'Change window']) assert.ok(facts.includes(part), `${part} in ${facts}`);
    const gone = renderApp(doc(), ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, branch: null, branch_deleted: true }) })));
    assert.equal(text(gone.querySelector('#cr-branch')), 'branch-1 (deleted)');
    assert.match(text(gone.querySelector('#changes')), /The branch is deleted/);
  });

  it('offers the actions the service allows; Merge stays visible but disabled with its reason', () => {
    const cr = makeChangeRequest({ id: 1, status: 'needs-review', merge_blocked_reason: 'Required check "ci" is pending.', actions: actions(['return_to_draft', 'abandon', 'run_checks'], { merge: 'Required check "ci" is pending.' }) });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr })));
    const buttons = [...root.querySelectorAll('[data-act=panel-action]')].map((b) => [b.textContent, b.getAttribute('aria-disabled')]);
    assert.deepEqual(buttons, [['Return to Draft', null], ['Abandon', null], ['Re-run Checks', null], ['Merge Branch', 'true']]);
    assert.equal(text(root.querySelector('#merge-reason')), 'Required check "ci" is pending.');
    assert.equal(root.querySelector('#action-merge')!.getAttribute('aria-describedby'), 'merge-reason');
    const draft = renderApp(doc(), ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, status: 'draft', actions: actions(['submit']) }) })));
    assert.deepEqual([...draft.querySelectorAll('[data-act=panel-action]')].map((b) => b.textContent), ['Submit for Review']);
  });

  it('shows the approval panel: counts, who may approve, empty groups, outstanding and stale reviews, reasons', () => {
    const root = renderApp(doc(), ready());
    const panel = root.querySelector('#approval')!;
    assert.equal(text(panel.querySelector('#approval-state')), 'The policies are not satisfied yet.');
    assert.deepEqual([...panel.querySelectorAll('#approval-reasons li')].map(text), ['Rule "Network team" needs 1 more approval.']);
    const rule = text(panel.querySelector('.rule'));
    for (const part of ['○ Network team 1 of 2 approvals', 'Approved by: Alice', 'May approve: Alice, netops, ghosts (empty group)', 'Waiting for: Carol', 'Group ghosts has no members and can never approve.']) {
      assert.ok(rule.includes(part), `${part} in ${rule}`);
    }
    assert.match(text(panel.querySelector('.stale')), /Carol: Approve/);
    const none = renderApp(doc(), ready(makeSnapshot({ evaluation: makeEvaluation({ policies: [], stale_reviews: [], reasons: ['No policy rules apply'] }) })));
    assert.deepEqual([...none.querySelectorAll('#approval-reasons li')].map(text), ['No policy rules apply']);
    const rejected = renderApp(doc(), ready(makeSnapshot({ evaluation: makeEvaluation({ rejections: [{ id: 3, reviewer: BOB, comment: 'VLAN **20** is reserved', comment_html: '<script>x</script>' }] }) })));
    assert.equal(text(rejected.querySelector('.rejection strong:not(.markdown strong)')), 'Bob');
    assert.equal(rejected.querySelector('.rejection .markdown strong')!.textContent, '20');
    assert.equal(rejected.querySelectorAll('script').length, 0);
    assert.match(text(renderApp(doc(), ready(makeSnapshot({ evaluation: null }))).querySelector('#approval')), /could not be loaded/);
  });

  it('shows checks with status, required or advisory, blocking, summary and a details button', () => {
    const root = renderApp(doc(), ready(makeSnapshot({ checks: [makeCheck({ id: 1, name: 'ci', label: 'CI', status: 'pending', details_url: 'https://ci.example/1', summary: 'queued' }), makeCheck({ id: 2, name: 'lint', label: 'lint', status: 'failure', required: false, blocks_merge: false, details_url: 'javascript:alert(1)' })] })));
    const rows = [...root.querySelectorAll('#checks li.check')];
    assert.deepEqual(rows.map((r) => r.getAttribute('data-check')), ['ci', 'lint']);
    assert.equal(text(rows[0]), '○ CI (ci) Pending · required · blocks merge queued Details');
    assert.equal(rows[0].querySelector('[data-act=open-link]')!.getAttribute('data-url'), 'https://ci.example/1');
    assert.equal(text(rows[1]), '✗ lint Failed · advisory');
    assert.equal(rows[1].querySelector('[data-act=open-link]'), null, 'no button for an unsafe link');
    assert.match(text(renderApp(doc(), ready(makeSnapshot({ checks: [] }))).querySelector('#checks')), /No checks/);
  });

  it('shows the merge state: ready, blocked with the reason, conflicts', () => {
    const readyCr = makeChangeRequest({ id: 1, status: 'approved', approved: true, ready_to_merge: true, merge_blocked_reason: '', actions: actions(['merge']) });
    assert.equal(text(renderApp(doc(), ready(makeSnapshot({ changeRequest: readyCr }))).querySelector('#merge-state')), '✓ Ready to merge.');
    const blocked = makeChangeRequest({ id: 1, status: 'approved', approved: true, has_conflicts: true, merge_blocked_reason: 'Outside the change window.', actions: { ...actions(), merge: { allowed: false, reason: null } } });
    const root = renderApp(doc(), ready(makeSnapshot({ changeRequest: blocked })));
    assert.equal(text(root.querySelector('#merge-state')), 'Merge blocked: Outside the change window.');
    assert.match(text(root.querySelector('#merge')), /Approved, but a check, the change window or the branch still blocks the merge\./);
    assert.equal(text(root.querySelector('#merge-conflicts')), 'The branch conflicts with main.');
    // A draft whose reviews still satisfy the policies waits for a submit, not for a check.
    const reason = 'The change request is a draft; submit it for review.';
    const draft = makeChangeRequest({ id: 1, status: 'draft', approved: true, merge_blocked_reason: reason, actions: actions([], { merge: reason }) });
    const draftRoot = renderApp(doc(), ready(makeSnapshot({ changeRequest: draft })));
    assert.equal(text(draftRoot.querySelector('#merge-state')), 'Merge blocked: The change request is a draft; submit it for review.');
    assert.doesNotMatch(text(draftRoot.querySelector('#merge')), /Approved, but/);
  });

  it('shows each changed object\'s attribute diff with conflicts, and all attributes on demand', () => {
    const change = makeChange({ id: 11, conflicts: ['vlan'], original: { name: 'sw1', status: 'planned', vlan: 10, site: 1 }, modified: { name: 'sw1', status: 'active', vlan: 30, site: 1 }, current: { name: 'sw1', status: 'planned', vlan: 20, site: 1 } });
    let state = ready(makeSnapshot({ changes: [change] }));
    let article = renderApp(doc(), state).querySelector('#change-11')!;
    assert.match(text(article.querySelector('h3')), /Updated sw1 dcim\.device/);
    assert.match(text(article.querySelector('.warning')), /Conflicts with main: vlan/);
    const rows = [...article.querySelectorAll('table.diff tbody tr')].map((r) => [...r.children].map(text));
    assert.deepEqual(rows, [['status', 'planned', 'active', 'planned'], ['vlan ⚠ conflict', '10', '30', '20']]);
    const created = renderApp(doc(), ready()).querySelector('#change-12 tr[data-attr=name] td.original')!;
    assert.equal(created.className, 'original absent');
    assert.equal(created.textContent, '—');
    assert.equal(article.querySelector('tr[data-attr=vlan]')!.className, 'changed conflict');
    assert.equal(article.querySelector('tr[data-attr=vlan] td.current')!.className, 'current moved');
    state = reduce(state, { type: 'toggleAllAttributes', changeId: 11 });
    article = renderApp(doc(), state).querySelector('#change-11')!;
    assert.equal(article.querySelectorAll('table.diff tbody tr').length, 4);
    assert.equal(article.querySelector('[data-act=toggle-attrs]')!.getAttribute('aria-expanded'), 'true');
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
    assert.deepEqual([...thread.querySelectorAll('.comment')].map((c) => c.id), ['comment-1', 'comment-2']);
    assert.equal(thread.querySelector('#comment-1 .markdown strong')!.textContent, '30');
    assert.equal(thread.querySelector('#comment-1 [data-act=delete-comment]'), null, 'not mine');
    assert.ok(thread.querySelector('#comment-2 [data-act=delete-comment]'), 'mine');
    assert.ok(thread.querySelector(`textarea[data-draft="${replyKey(1)}"]`), 'reply composer open');
    assert.equal(text(thread.querySelector('[data-act=resolve]')), 'Resolve thread');
    const resolved = root.querySelector('#change-12 .thread')!;
    assert.match(resolved.className, /resolved/);
    assert.equal(text(resolved.querySelector('[data-act=resolve]')), 'Reopen thread');
    assert.match(text(root.querySelector('#earlier-comments')), /dcim\.device sw9 .*old/);
    assert.equal(root.querySelector('#earlier-comments [data-act=open-composer]'), null, 'no replies on a change that is gone');
  });

  it('offers "Comment on this change" only when the service allows commenting', () => {
    const can = renderApp(doc(), ready());
    assert.ok(can.querySelector('#comment-on-11'));
    const cannot = renderApp(doc(), ready(makeSnapshot({ changeRequest: makeChangeRequest({ id: 1, actions: actions([]) }) })));
    assert.equal(cannot.querySelector('#comment-on-11'), null);
    const composing = renderApp(doc(), ready(makeSnapshot(), [{ type: 'composerOpened', key: newThreadKey(11) }, { type: 'draftChanged', key: newThreadKey(11), text: 'draft text' }]));
    const ta = composing.querySelector(`#change-11 textarea`) as HTMLTextAreaElement;
    assert.equal(ta.value, 'draft text');
    assert.equal(composing.querySelector(`label[for="${ta.id}"]`)!.textContent, 'Comment on sw1');
  });

  it('shows the reviews and a review form; the comment is required for Request changes', () => {
    const reviews = [makeReview({ id: 1, reviewer: BOB, decision: 'reject', comment: 'Use VLAN 20', stale: true }), makeReview({ id: 2, reviewer: ALICE, decision: 'approve' })];
    const root = renderApp(doc(), ready(makeSnapshot({ reviews }), [{ type: 'decisionChanged', decision: 'reject' }]));
    assert.match(text(root.querySelector('#review-1')), /Bob requested changes stale .*Use VLAN 20/);
    const form = root.querySelector('#review-form')!;
    assert.equal(text(form.querySelector('h3')), 'Update your review');
    assert.match(text(form), /You approved\. Sending again updates your review\./);
    assert.equal((form.querySelector('#decision-reject') as HTMLInputElement).hasAttribute('checked'), true);
    assert.equal(text(form.querySelector('label[for=ta-review]')), 'What must change (required)');
    assert.equal(text(form.querySelector('[data-act=send]')), 'Update review');
  });

  it('disables the review form with the service\'s reason when the caller may not review', () => {
    const cr = makeChangeRequest({ id: 1, actions: actions([], { review: 'You cannot review your own change request.' }) });
    const form = renderApp(doc(), ready(makeSnapshot({ changeRequest: cr }))).querySelector('#review-form')!;
    assert.equal(text(form.querySelector('#review-not-allowed')), 'You cannot review your own change request.');
    assert.equal(form.querySelector('fieldset')!.hasAttribute('disabled'), true);
    assert.equal(form.querySelector('[data-act=send]')!.hasAttribute('disabled'), true);
  });

  it('lists the parts that failed to load', () => {
    const root = renderApp(doc(), ready(makeSnapshot({ problems: ['Checks could not be loaded: HTTP 500'] })));
    assert.equal(text(root.querySelector('.notice')), 'Checks could not be loaded: HTTP 500');
  });

  it('computes diff rows and formats values', () => {
    const created = attributeRows({ original: null, modified: { name: 'sw2', tags: ['a'] }, current: null, conflicts: null });
    assert.deepEqual(created.map((r) => [r.name, r.changed, r.mainMoved]), [['name', true, false], ['tags', true, false]]);
    assert.deepEqual(attributeRows({ original: { a: { x: 1, y: 2 } }, modified: { a: { y: 2, x: 1 } }, current: { a: { x: 1, y: 2 } }, conflicts: null }), []);
    assert.equal(formatValue(undefined), '—');
    assert.equal(formatValue(null), 'null');
    assert.equal(formatValue('x'), 'x');
    assert.equal(formatValue({ a: 1 }), '{"a":1}');
  });
});
