// The panel wired to a fake webview API under jsdom: the handshake, user events becoming typed
// messages, host answers updating the panel, state kept with setState.
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { PanelController, readPersistedState, type WebviewApi } from '../../webview/controller';
import type { PersistedState, WebviewToHost } from '../../contract/webview/protocol';
import { actions, makeChangeRequest, makeComment, makeSnapshot } from '../extension/fixtures';

function setup(saved?: unknown) {
  const dom = new JSDOM('<!DOCTYPE html><body><div id="root"></div></body>');
  const doc = dom.window.document;
  const posted: WebviewToHost[] = [];
  /** `interacted` (the page was used: a preview tab keeps its tab), apart from the other messages. */
  let interactions = 0;
  const states: PersistedState[] = [];
  const api: WebviewApi = {
    postMessage: (m) => (m.type === 'interacted' ? (interactions += 1) : posted.push(m)),
    getState: () => saved,
    setState: (s) => states.push(s),
  };
  const root = doc.getElementById('root')!;
  const controller = new PanelController(doc, root, api);
  const $ = <T extends Element = HTMLElement>(sel: string) => {
    const el = root.querySelector<T>(sel);
    assert.ok(el, `no ${sel}`);
    return el as unknown as T;
  };
  const type = (sel: string, value: string) => {
    const ta = $<HTMLTextAreaElement>(sel);
    ta.value = value;
    ta.dispatchEvent(new dom.window.Event('input', { bubbles: true }));
  };
  const key = (sel: string, init: KeyboardEventInit) =>
    $(sel).dispatchEvent(new dom.window.KeyboardEvent('keydown', { bubbles: true, ...init }));
  return { dom, doc, root, posted, states, controller, $, type, key, interactions: () => interactions };
}

describe('webview: the panel controller', () => {
  it("announces an action's result in a live region and puts the focus on the new state", () => {
    const t = setup();
    const cr = makeChangeRequest({
      id: 1,
      status: 'approved',
      approved: true,
      ready_to_merge: true,
      merge_blocked_reason: '',
      actions: actions(['merge']),
    });
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot({ changeRequest: cr }) });
    t.$('#action-merge').click();
    assert.deepEqual(t.posted.at(-1), { type: 'panelAction', opId: 'op-1', action: 'merge' });
    t.controller.receive({ type: 'operationDone', opId: 'op-1' });
    const region = t.doc.getElementById('announcer')!;
    assert.equal(region.getAttribute('aria-live'), 'polite');
    // The page the host sends next is the request after the merge: that is what is said.
    t.controller.receive({
      type: 'snapshot',
      snapshot: makeSnapshot({ changeRequest: { ...cr, status: 'completed', actions: actions([]) } }),
    });
    assert.equal(region.textContent, 'Merged.');
    assert.equal(t.doc.activeElement, t.$('#merge-state'));
  });

  it('tells the host once that the page was used (a preview tab becomes a tab of its own), not before', () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    assert.equal(t.interactions(), 0);
    t.$('#comment-on-11').click();
    t.type('#ta-comment-11', 'x');
    assert.equal(t.interactions(), 1);
  });

  it('says ready, shows loading, then renders the snapshot the host sends', () => {
    const t = setup();
    t.controller.start();
    assert.deepEqual(t.posted, [{ type: 'ready' }]);
    t.controller.receive({ type: 'loading', changeRequestId: 1 });
    assert.ok(t.$('#loading'));
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    assert.equal(t.$('#cr-title').textContent, 'Change 1');
    t.controller.receive('garbage');
    t.controller.receive(null);
    assert.equal(t.$('#cr-title').textContent, 'Change 1');
  });

  it('posts a new comment anchored to its change, then clears the composer when the host says done', () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    t.$('#comment-on-11').click();
    assert.equal(t.doc.activeElement, t.$('#ta-comment-11'), 'focus moves into the new text box');
    t.type('#ta-comment-11', 'Why is VLAN 20 gone?');
    t.$('#send-comment-11').click();
    assert.deepEqual(t.posted, [
      { type: 'addComment', opId: 'op-1', changeDiff: 11, text: 'Why is VLAN 20 gone?', parent: null, attribute: null },
    ]);
    assert.equal(t.$('#send-comment-11').textContent, 'Sending…');
    assert.equal(t.$('#send-comment-11').hasAttribute('disabled'), true);
    t.$('#send-comment-11').click();
    assert.equal(t.posted.length, 1, 'no second send while one is pending');
    t.controller.receive({ type: 'operationDone', opId: 'op-1' });
    assert.equal(t.root.querySelector('#ta-comment-11'), null);
    assert.ok(t.$('#comment-on-11'));
  });

  it("shows the host's refusal next to the composer and keeps the text", () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    t.$('#comment-on-12').click();
    t.type('#ta-comment-12', 'x');
    t.$('#send-comment-12').click();
    t.controller.receive({
      type: 'operationFailed',
      opId: 'op-1',
      message: 'Adding a comment was refused: change_diff: not in this branch',
    });
    assert.equal(
      t.$('#ta-comment-12-error').textContent,
      'Adding a comment was refused: change_diff: not in this branch',
    );
    assert.equal(t.$<HTMLTextAreaElement>('#ta-comment-12').value, 'x');
    assert.equal(t.$('#ta-comment-12').getAttribute('aria-invalid'), 'true');
  });

  it('works from the keyboard: Ctrl+Enter sends, Escape cancels', () => {
    const t = setup();
    t.controller.receive({
      type: 'snapshot',
      snapshot: makeSnapshot({ comments: [makeComment({ id: 5, change_diff: 11 })] }),
    });
    const reply = t.root.querySelector<HTMLButtonElement>('[data-act=open-composer][data-key="reply:5"]')!;
    reply.click();
    t.type('#ta-reply-5', 'Agreed');
    t.key('#ta-reply-5', { key: 'Enter', ctrlKey: true });
    assert.deepEqual(t.posted.at(-1), {
      type: 'addComment',
      opId: 'op-1',
      changeDiff: 11,
      text: 'Agreed',
      parent: 5,
      attribute: null,
    });
    t.$('#comment-on-11').click();
    t.key('#ta-comment-11', { key: 'Escape' });
    assert.equal(t.root.querySelector('#ta-comment-11'), null);
  });

  it('submits a review with the chosen decision, and asks for one when none is chosen', () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    t.$('#send-review').click();
    assert.deepEqual(t.posted, []);
    assert.equal(t.$('#ta-review-error').textContent, 'Choose a decision first: Approve, Request changes or Comment.');
    const reject = t.$<HTMLInputElement>('#decision-reject');
    reject.checked = true;
    reject.dispatchEvent(new t.dom.window.Event('change', { bubbles: true }));
    assert.equal(t.$('label[for=ta-review]').textContent, 'What must change (required)');
    t.$('#send-review').click();
    assert.equal(t.$('#ta-review-error').textContent, 'Requesting changes needs a comment saying what to change.');
    t.type('#ta-review', 'Keep VLAN 20.');
    t.$('#send-review').click();
    assert.deepEqual(t.posted.at(-1), {
      type: 'submitReview',
      opId: 'op-1',
      decision: 'reject',
      comment: 'Keep VLAN 20.',
      reviewId: null,
    });
  });

  it('asks the host for lifecycle actions, ignores disabled ones, and opens links through the host', () => {
    const cr = makeChangeRequest({
      id: 1,
      status: 'needs-review',
      actions: actions(['return_to_draft'], { merge: 'Check "ci" is pending.' }),
    });
    const t = setup();
    t.controller.receive({
      type: 'snapshot',
      snapshot: makeSnapshot({
        changeRequest: cr,
        comments: [makeComment({ id: 5, text: 'see [log](https://ci.example/5)' })],
      }),
    });
    t.$('#action-merge').click();
    assert.deepEqual(t.posted, []);
    t.$('#action-return_to_draft').click();
    assert.deepEqual(t.posted, [{ type: 'panelAction', opId: 'op-1', action: 'return_to_draft' }]);
    t.$('#comment-5 a').click();
    assert.deepEqual(t.posted.at(-1), { type: 'openLink', url: 'https://ci.example/5' });
    t.root.querySelector<HTMLElement>('[data-act=open-link]')!.click();
    assert.deepEqual(t.posted.at(-1), { type: 'openLink', url: 'https://ci.example/run/1' });
    t.$('#action-refresh').click();
    assert.deepEqual(t.posted.at(-1), { type: 'refresh' });
  });

  it('offline, says why at the top, shows what would post as disabled with the reason, refuses to post and keeps the text; back online, posts again', () => {
    const reason =
      'Offline: the Change Control service does not answer (ECONNREFUSED). Reconnecting by itself; what you typed is kept.';
    const cr = makeChangeRequest({
      id: 1,
      status: 'needs-review',
      actions: actions(['review', 'comment', 'return_to_draft']),
    });
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot({ changeRequest: cr }) });
    assert.equal(t.$('#offline-banner').hasAttribute('hidden'), true);
    t.controller.receive({ type: 'connection', blocked: reason });
    assert.equal(t.$('#offline-banner').textContent, reason);
    assert.equal(t.$('#offline-banner').hasAttribute('hidden'), false);
    assert.equal(t.$('#action-return_to_draft').getAttribute('aria-disabled'), 'true');
    assert.equal(t.$('#action-return_to_draft').title, reason);
    t.$('#action-return_to_draft').click();
    t.$('#decision-approve').click();
    t.type('#ta-review', 'Looks right');
    assert.equal(t.$('#send-review').getAttribute('aria-disabled'), 'true');
    t.$('#send-review').click();
    assert.deepEqual(t.posted, [], 'nothing posted while offline');
    assert.equal(t.$('#ta-review-error').textContent, reason);
    assert.equal(t.$<HTMLTextAreaElement>('#ta-review').value, 'Looks right');

    t.controller.receive({ type: 'connection', blocked: null });
    assert.equal(t.$('#offline-banner').hasAttribute('hidden'), true);
    assert.equal(t.$('#action-return_to_draft').hasAttribute('aria-disabled'), false);
    t.$('#send-review').click();
    assert.deepEqual(t.posted, [
      { type: 'submitReview', opId: 'op-1', decision: 'approve', comment: 'Looks right', reviewId: null },
    ]);
  });

  it('asks the host to delete and to resolve', () => {
    const t = setup();
    t.controller.receive({
      type: 'snapshot',
      snapshot: makeSnapshot({ comments: [makeComment({ id: 5, change_diff: 11 })] }),
    });
    t.root.querySelector<HTMLElement>('#comment-5 [data-act=delete-comment]')!.click();
    t.root.querySelector<HTMLElement>('[data-act=resolve]')!.click();
    assert.deepEqual(t.posted, [
      { type: 'deleteComment', opId: 'op-1', commentId: 5 },
      { type: 'setResolved', opId: 'op-2', commentId: 5, resolved: true },
    ]);
  });

  it('asks the host to apply one suggestion, or every applicable one with Apply all', () => {
    const t = setup();
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
    t.controller.receive({
      type: 'snapshot',
      snapshot: makeSnapshot({
        changeRequest: makeChangeRequest({ id: 1, actions: actions(['comment', 'apply_suggestions']) }),
        comments: [
          makeComment({ id: 5, change_diff: 11, suggestion: suggestion() }),
          makeComment({ id: 6, change_diff: 12, suggestion: suggestion({ attribute: 'status', value: 'planned' }) }),
          makeComment({ id: 7, change_diff: 11, suggestion: suggestion({ outdated: true }) }),
        ],
      }),
    });
    t.root.querySelector<HTMLElement>('#comment-5 [data-act=apply-suggestions]')!.click();
    assert.equal(t.root.querySelector('#comment-5 [data-act=apply-suggestions]')!.textContent, 'Applying…');
    t.$('#apply-all-suggestions').click();
    assert.deepEqual(t.posted, [
      { type: 'applySuggestions', opId: 'op-1', commentIds: [5] },
      { type: 'applySuggestions', opId: 'op-2', commentIds: [5, 6] },
    ]);
    t.controller.receive({ type: 'operationFailed', opId: 'op-2', message: 'Applying failed: outdated.' });
    assert.equal(t.$('#apply-all-suggestions').textContent, 'Apply all suggestions (2)');
    assert.match(t.root.querySelector('.changes-head .error')!.textContent!, /outdated/);
  });

  it('keeps drafts with setState and restores them in a new panel', () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    t.type('#ta-review', 'half a thought');
    const saved = t.states.at(-1)!;
    assert.equal(saved.changeRequestId, 1);
    assert.equal(saved.drafts.review, 'half a thought');
    assert.deepEqual(readPersistedState(saved), saved);
    assert.equal(readPersistedState({ changeRequestId: 'x' }), null);
    // A state saved by an older version: what it lacks takes its default.
    assert.deepEqual(
      readPersistedState({
        changeRequestId: 3,
        drafts: { review: 'x', bad: 1 },
        openComposers: [],
        reviewDecision: 'approve',
        expandedChanges: [11],
      }),
      {
        changeRequestId: 3,
        drafts: { review: 'x' },
        openComposers: [],
        reviewDecision: 'approve',
        expandedChanges: [11],
        collapsedChanges: [],
        filter: '',
      },
    );

    const again = setup(saved);
    assert.equal(again.controller.current.changeRequestId, 1);
    again.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    assert.equal(again.$<HTMLTextAreaElement>('#ta-review').value, 'half a thought');
  });

  it('keeps keyboard focus on the same control across a re-render', () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    t.$('#ta-review').focus();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    assert.equal(t.doc.activeElement?.id, 'ta-review');
  });

  it('applies a refresh sent as a delta, and asks for a whole snapshot when a delta does not fit', () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot(), seq: 4 });
    const delta = {
      changeRequestId: 1,
      baseSeq: 4,
      seq: 5,
      parts: { changeRequest: makeChangeRequest({ id: 1, title: 'Renamed', actions: actions(['comment']) }) },
    };
    t.controller.receive({ type: 'snapshotDelta', delta });
    assert.equal(t.$('#cr-title').textContent, 'Renamed');
    assert.deepEqual(t.posted, []);
    t.controller.receive({ type: 'snapshotDelta', delta: { ...delta, baseSeq: 9, seq: 10 } });
    assert.deepEqual(t.posted, [{ type: 'ready' }]);
    assert.equal(t.controller.current.seq, 5);
  });

  it('asks the host to open a change, or all of them, in the diff editor', () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    t.$('#change-12 [data-act=open-diff]').click();
    t.$('#open-all-changes').click();
    assert.deepEqual(t.posted, [{ type: 'openDiff', changeDiff: 12 }, { type: 'openAllChanges' }]);
  });

  it("posts a comment on an attribute with that attribute, and a reply with its root's", () => {
    const t = setup();
    t.controller.receive({
      type: 'snapshot',
      snapshot: makeSnapshot({ comments: [makeComment({ id: 5, change_diff: 11, attribute: 'status' })] }),
    });
    t.$('#change-11 [data-attr=status] [data-act=open-composer][data-key="comment:11:status"]').click();
    const ta = t.$<HTMLTextAreaElement>('#change-11 [data-attr=status] textarea');
    assert.equal(t.doc.activeElement, ta);
    t.type(`#${ta.id}`, 'Why active now?');
    t.key(`#${ta.id}`, { key: 'Enter', ctrlKey: true });
    t.root.querySelector<HTMLElement>('[data-act=open-composer][data-key="reply:5"]')!.click();
    t.type('#ta-reply-5', 'Cutover.');
    t.key('#ta-reply-5', { key: 'Enter', ctrlKey: true });
    assert.deepEqual(t.posted, [
      { type: 'addComment', opId: 'op-1', changeDiff: 11, text: 'Why active now?', parent: null, attribute: 'status' },
      { type: 'addComment', opId: 'op-2', changeDiff: 11, text: 'Cutover.', parent: 5, attribute: 'status' },
    ]);
  });

  it('folds and unfolds changes, one or all, and filters the list', () => {
    const t = setup();
    t.controller.receive({ type: 'snapshot', snapshot: makeSnapshot() });
    t.$('#toggle-11').focus();
    t.$('#toggle-11').click();
    assert.equal(t.$('#toggle-11').getAttribute('aria-expanded'), 'false');
    assert.equal(t.doc.activeElement?.id, 'toggle-11', 'focus stays on the toggle');
    t.$('#collapse-all').click();
    assert.deepEqual(t.controller.current.collapsedChanges, [11, 12]);
    t.$('#expand-all').click();
    assert.equal(t.$('#toggle-12').getAttribute('aria-expanded'), 'true');
    const filter = t.$<HTMLInputElement>('#changes-filter');
    filter.focus();
    filter.value = 'sw2';
    filter.dispatchEvent(new t.dom.window.Event('input', { bubbles: true }));
    assert.equal(t.root.querySelector('#change-11'), null);
    assert.ok(t.$('#change-12'));
    assert.equal(t.$('#changes-count').textContent, '1 of 2 changes match the filter.');
    assert.equal(t.doc.activeElement, filter, 'typing in the filter keeps the same box');
    assert.equal(t.states.at(-1)!.filter, 'sw2');
  });

  it('goes to a change from the timeline, clearing a filter that hides it', () => {
    const t = setup();
    t.controller.receive({
      type: 'snapshot',
      snapshot: makeSnapshot({ comments: [makeComment({ id: 5, change_diff: 11 })] }),
    });
    const filter = t.$<HTMLInputElement>('#changes-filter');
    filter.value = 'sw2';
    filter.dispatchEvent(new t.dom.window.Event('input', { bubbles: true }));
    t.$('#timeline [data-act=reveal-change]').click();
    assert.equal(t.controller.current.filter, '');
    assert.equal(filter.value, '');
    assert.equal(t.doc.activeElement?.id, 'toggle-11');
  });
});
