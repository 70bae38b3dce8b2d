import assert from 'node:assert/strict';
import {
  editKey,
  initialState,
  newThreadKey,
  operationFor,
  parseComposerKey,
  reduce,
  replyKey,
  REVIEW_KEY,
  reviewProblem,
  toPersisted,
  type ViewAction,
  type ViewState,
} from '../../webview/state';
import { threadsByChange } from '../../webview/threads';
import { ALICE, BOB, makeComment, makeReview, makeSnapshot } from '../extension/fixtures';

const run = (actions: ViewAction[], from: ViewState = initialState) => actions.reduce(reduce, from);

describe('webview: state reducer', () => {
  it('goes from waiting to loading to ready, and keeps showing the snapshot while refreshing', () => {
    const snapshot = makeSnapshot();
    let s = run([{ type: 'loading', changeRequestId: 1 }]);
    assert.equal(s.phase, 'loading');
    s = reduce(s, { type: 'snapshot', snapshot });
    assert.equal(s.phase, 'ready');
    assert.equal(s.snapshot, snapshot);
    s = reduce(s, { type: 'loading', changeRequestId: 1 });
    assert.equal(s.phase, 'ready');
    assert.equal(s.refreshing, true);
    s = reduce(s, { type: 'loadFailed', changeRequestId: 1, message: 'unreachable' });
    assert.equal(s.phase, 'ready', 'a failed refresh keeps the last snapshot');
    assert.equal(s.loadError, 'unreachable');
    assert.equal(reduce(s, { type: 'snapshot', snapshot }).loadError, null);
  });

  it('fails the panel when the first load fails', () => {
    const s = run([
      { type: 'loading', changeRequestId: 3 },
      { type: 'loadFailed', changeRequestId: 3, message: 'Not found.' },
    ]);
    assert.equal(s.phase, 'failed');
    assert.equal(s.loadError, 'Not found.');
    assert.equal(s.changeRequestId, 3);
  });

  it('opens a composer, keeps its draft, sends it, and closes it when the host says done', () => {
    const key = newThreadKey(11);
    let s = run([
      { type: 'snapshot', snapshot: makeSnapshot() },
      { type: 'composerOpened', key },
      { type: 'draftChanged', key, text: 'Why VLAN 20?' },
    ]);
    assert.deepEqual(s.openComposers, [key]);
    assert.equal(s.drafts[key], 'Why VLAN 20?');
    s = reduce(s, { type: 'operationSent', opId: 'op-1', key });
    assert.deepEqual(s.pending, { 'op-1': key });
    s = reduce(s, { type: 'operationDone', opId: 'op-1' });
    assert.deepEqual(s.pending, {});
    assert.deepEqual(s.openComposers, []);
    assert.equal(s.drafts[key], undefined);
  });

  it('keeps the draft and shows the error when the host says the operation failed', () => {
    const key = replyKey(5);
    let s = run([
      { type: 'snapshot', snapshot: makeSnapshot({ comments: [makeComment({ id: 5 })] }) },
      { type: 'composerOpened', key },
      { type: 'draftChanged', key, text: 'x' },
      { type: 'operationSent', opId: 'op-2', key },
    ]);
    s = reduce(s, { type: 'operationFailed', opId: 'op-2', message: 'Replying was refused: reply on another change.' });
    assert.equal(s.errors[key], 'Replying was refused: reply on another change.');
    assert.equal(s.drafts[key], 'x');
    assert.deepEqual(s.openComposers, [key]);
    assert.equal(
      reduce(s, { type: 'draftChanged', key, text: 'y' }).errors[key],
      s.errors[key],
      'typing keeps the error until the next send',
    );
    assert.equal(reduce(s, { type: 'operationSent', opId: 'op-3', key }).errors[key], undefined);
  });

  it('keeps the review form open after a review is sent, clearing its text', () => {
    let s = run([
      { type: 'snapshot', snapshot: makeSnapshot() },
      { type: 'draftChanged', key: REVIEW_KEY, text: 'LGTM' },
      { type: 'decisionChanged', decision: 'approve' },
      { type: 'operationSent', opId: 'op-1', key: REVIEW_KEY },
    ]);
    s = reduce(s, { type: 'operationDone', opId: 'op-1' });
    assert.equal(s.drafts[REVIEW_KEY], undefined);
    assert.equal(s.reviewDecision, 'approve');
  });

  it('ignores answers to operations it did not send', () => {
    const s = run([{ type: 'snapshot', snapshot: makeSnapshot() }]);
    assert.equal(reduce(s, { type: 'operationDone', opId: 'nope' }), s);
    assert.equal(reduce(s, { type: 'operationFailed', opId: 'nope', message: 'x' }), s);
  });

  it('closes composers of comments that are gone, and starts clean for another request', () => {
    const withComment = makeSnapshot({ comments: [makeComment({ id: 5 })] });
    let s = run([
      { type: 'snapshot', snapshot: withComment },
      { type: 'composerOpened', key: editKey(5), text: 'Comment 5' },
      { type: 'composerOpened', key: newThreadKey(11) },
    ]);
    s = reduce(s, { type: 'snapshot', snapshot: makeSnapshot({ comments: [] }) });
    assert.deepEqual(s.openComposers, [newThreadKey(11)]);
    const other = makeSnapshot({ changeRequest: { ...withComment.changeRequest, id: 2 } });
    const moved = reduce(s, { type: 'snapshot', snapshot: other });
    assert.deepEqual(moved.openComposers, []);
    assert.deepEqual(moved.drafts, {});
  });

  it('prefills an edit with the comment text but never overwrites a draft', () => {
    let s = run([
      { type: 'snapshot', snapshot: makeSnapshot({ comments: [makeComment({ id: 5 })] }) },
      { type: 'composerOpened', key: editKey(5), text: 'Comment 5' },
    ]);
    assert.equal(s.drafts[editKey(5)], 'Comment 5');
    s = run(
      [
        { type: 'draftChanged', key: editKey(5), text: 'changed' },
        { type: 'composerOpened', key: editKey(5), text: 'Comment 5' },
      ],
      s,
    );
    assert.equal(s.drafts[editKey(5)], 'changed');
  });

  it('persists what a restored panel needs, and restores it', () => {
    assert.equal(toPersisted(initialState), null);
    const s = run([
      { type: 'snapshot', snapshot: makeSnapshot() },
      { type: 'draftChanged', key: REVIEW_KEY, text: 'half a thought' },
      { type: 'decisionChanged', decision: 'reject' },
      { type: 'toggleAllAttributes', changeId: 11 },
    ]);
    const saved = toPersisted(s)!;
    assert.deepEqual(saved, {
      changeRequestId: 1,
      drafts: { review: 'half a thought' },
      openComposers: [],
      reviewDecision: 'reject',
      expandedChanges: [11],
      collapsedChanges: [],
      filter: '',
    });
    const restored = reduce(initialState, { type: 'restored', state: saved });
    assert.equal(restored.changeRequestId, 1);
    assert.equal(restored.drafts.review, 'half a thought');
    assert.equal(restored.reviewDecision, 'reject');
    assert.deepEqual(reduce(restored, { type: 'toggleAllAttributes', changeId: 11 }).expandedChanges, []);
  });

  it('builds the operation of each composer', () => {
    const snapshot = makeSnapshot({
      comments: [makeComment({ id: 5, change_diff: 11 })],
      reviews: [makeReview({ id: 9, reviewer: ALICE })],
    });
    let s = run([
      { type: 'snapshot', snapshot },
      { type: 'draftChanged', key: replyKey(5), text: 'Agreed' },
      { type: 'draftChanged', key: REVIEW_KEY, text: 'Fix VLAN' },
      { type: 'decisionChanged', decision: 'reject' },
    ]);
    assert.deepEqual(operationFor(s, replyKey(5), 'a'), {
      type: 'addComment',
      opId: 'a',
      changeDiff: 11,
      text: 'Agreed',
      parent: 5,
      attribute: null,
    });
    assert.deepEqual(operationFor(s, REVIEW_KEY, 'b'), {
      type: 'submitReview',
      opId: 'b',
      decision: 'reject',
      comment: 'Fix VLAN',
      reviewId: 9,
    });
    assert.deepEqual(operationFor(s, newThreadKey(12), 'c'), {
      type: 'addComment',
      opId: 'c',
      changeDiff: 12,
      text: '',
      parent: null,
      attribute: null,
    });
    assert.deepEqual(operationFor(s, newThreadKey(12, 'custom_fields.owner'), 'c2'), {
      type: 'addComment',
      opId: 'c2',
      changeDiff: 12,
      text: '',
      parent: null,
      attribute: 'custom_fields.owner',
    });
    assert.deepEqual(operationFor(s, editKey(5), 'd'), { type: 'editComment', opId: 'd', commentId: 5, text: '' });
    assert.equal(operationFor(s, replyKey(99), 'e'), null);
    assert.equal(operationFor(s, 'bogus', 'f'), null);
    s = run([
      { type: 'snapshot', snapshot: makeSnapshot({ reviews: [makeReview({ id: 9, reviewer: BOB })] }) },
      { type: 'decisionChanged', decision: 'approve' },
    ]);
    assert.equal(
      (operationFor(s, REVIEW_KEY, 'g') as { reviewId: number | null }).reviewId,
      null,
      "someone else's review is not mine to update",
    );
  });

  it('parses composer keys', () => {
    assert.deepEqual(parseComposerKey('review'), { kind: 'review' });
    assert.deepEqual(parseComposerKey('comment:11'), { kind: 'comment', changeId: 11, attribute: null });
    assert.deepEqual(parseComposerKey('comment:11:interfaces.0.name'), {
      kind: 'comment',
      changeId: 11,
      attribute: 'interfaces.0.name',
    });
    assert.equal(parseComposerKey('reply:5:x'), null);
    assert.deepEqual(parseComposerKey('reply:5'), { kind: 'reply', rootId: 5 });
    assert.deepEqual(parseComposerKey('edit:7'), { kind: 'edit', commentId: 7 });
    assert.equal(parseComposerKey('action:merge'), null);
  });

  it('preselects no decision, and says what the review lacks before it can be sent', () => {
    let s = run([{ type: 'snapshot', snapshot: makeSnapshot() }]);
    assert.equal(s.reviewDecision, null);
    assert.equal(operationFor(s, REVIEW_KEY, 'x'), null);
    assert.match(reviewProblem(s)!, /Choose a decision first/);
    s = reduce(s, { type: 'decisionChanged', decision: 'reject' });
    assert.match(reviewProblem(s)!, /needs a comment/);
    s = reduce(s, { type: 'draftChanged', key: REVIEW_KEY, text: 'Use VLAN 20' });
    assert.equal(reviewProblem(s), null);
    s = reduce(s, { type: 'composerError', key: REVIEW_KEY, message: 'x' });
    assert.equal(
      reduce(s, { type: 'decisionChanged', decision: 'comment' }).errors[REVIEW_KEY],
      undefined,
      'choosing clears the complaint',
    );
  });

  it('folds changes one by one or all at once, filters, and pages the timeline', () => {
    let s = run([
      { type: 'snapshot', snapshot: makeSnapshot() },
      { type: 'toggleCollapsed', changeId: 12 },
    ]);
    assert.deepEqual(s.collapsedChanges, [12]);
    s = run([{ type: 'collapseAll', collapsed: true }], s);
    assert.deepEqual(s.collapsedChanges, [11, 12]);
    s = run(
      [{ type: 'collapseAll', collapsed: false }, { type: 'filterChanged', text: 'sw' }, { type: 'showMoreTimeline' }],
      s,
    );
    assert.deepEqual([s.collapsedChanges, s.filter, s.timelineLimit], [[], 'sw', 60]);
    // A refresh keeps them; another request starts afresh.
    const again = reduce(s, { type: 'snapshot', snapshot: makeSnapshot() });
    assert.deepEqual([again.filter, again.timelineLimit], ['sw', 60]);
    const other = reduce(s, {
      type: 'snapshot',
      snapshot: makeSnapshot({ changeRequest: { ...makeSnapshot().changeRequest, id: 2 } }),
    });
    assert.deepEqual([other.filter, other.timelineLimit, other.reviewDecision], ['', 30, null]);
  });

  it('keeps, across a refresh, the identity of every part of the snapshot that did not change', () => {
    const first = makeSnapshot({ comments: [makeComment({ id: 5 }), makeComment({ id: 6 })] });
    const s1 = run([{ type: 'snapshot', snapshot: first }]);
    const next = structuredClone(first);
    next.comments[1] = { ...next.comments[1]!, text: 'edited' };
    next.loadedAt = '2026-11-01T12:00:00.000Z';
    const s2 = reduce(s1, { type: 'snapshot', snapshot: next });
    const a = s1.snapshot!;
    const b = s2.snapshot!;
    assert.equal(b.changeRequest, a.changeRequest);
    assert.equal(b.changes, a.changes);
    assert.equal(b.evaluation, a.evaluation);
    assert.equal(b.comments[0], a.comments[0]);
    assert.notEqual(b.comments[1], a.comments[1]);
    assert.equal(b.comments[1]!.text, 'edited');
    assert.equal(b.comments[1]!.author, a.comments[1]!.author);
  });

  it('threads comments one level deep under their change, flattening replies to replies', () => {
    const comments = [
      makeComment({ id: 1, change_diff: 11 }),
      makeComment({ id: 2, change_diff: 11, parent: 1 }),
      makeComment({ id: 3, change_diff: 11, parent: 2 }),
      makeComment({ id: 4, change_diff: 12 }),
      makeComment({ id: 5, change_diff: null, change_label: 'gone' }),
    ];
    const threads = threadsByChange(comments);
    assert.deepEqual(
      threads.get(11)!.map((t) => [t.root.id, t.replies.map((r) => r.id)]),
      [[1, [2, 3]]],
    );
    assert.deepEqual(
      threads.get(12)!.map((t) => t.root.id),
      [4],
    );
    assert.deepEqual(
      threads.get(null)!.map((t) => t.root.id),
      [5],
    );
  });
});
