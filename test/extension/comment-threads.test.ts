// Comment threads as the gutter shows them: placed on their attribute's line (or the first
// line), posted comments and pending drafts together, outdated ones marked and never dropped.
import assert from 'node:assert/strict';
import { attributeSpans, lineOfAttribute, serializeState } from '../../extension/core/change-documents';
import { buildThreads, openThreadCounts, threadLabel } from '../../extension/core/comment-threads';
import type { DraftComment } from '../../extension/core/pending-review';
import { ALICE, BOB, makeChange, makeComment } from './fixtures';

const ME = { id: BOB.id, display: BOB.display };

describe('extension: comment threads in the gutter', () => {
  const sw1 = makeChange({
    id: 11,
    original: { name: 'sw1', rack: 'R1', serial: 'X1' },
    modified: { name: 'sw1', rack: 'R2', custom_fields: { owner: 'net' } },
  });
  const gone = makeChange({
    id: 12,
    object_repr: 'sw9',
    object_id: 9,
    action: 'delete',
    modified: null,
    original: { name: 'sw9' },
  });
  const lineIn = (side: 'original' | 'modified', attr: string) =>
    lineOfAttribute(attributeSpans(serializeState(sw1[side])), attr).line;

  it('puts a thread on the line of its attribute, replies in order, and marks my comments', () => {
    const root = makeComment({ id: 1, change_diff: 11, attribute: 'rack', author: ALICE, text: 'Why R2?' });
    const reply = makeComment({ id: 2, change_diff: 11, parent: 1, attribute: 'rack', author: BOB, text: 'Room.' });
    const [t] = buildThreads({ comments: [reply, root], drafts: [], changes: [sw1], me: ME });
    assert.equal(t.key, 'c:1');
    assert.equal(t.place?.side, 'modified');
    assert.equal(t.place?.line, lineIn('modified', 'rack'));
    assert.equal(t.label, 'rack');
    assert.equal(t.contextValue, 'thread;open;posted;');
    assert.deepEqual(
      t.comments.map((c) => [c.key, c.author, c.mine, c.contextValue]),
      [
        ['c:1', 'Alice', false, 'comment;posted;'],
        ['c:2', 'Bob', true, 'comment;mine;posted;'],
      ],
    );
  });

  it('marks an edited comment "(edited)" beside its author, as the review page does', () => {
    const root = makeComment({
      id: 1,
      change_diff: 11,
      attribute: 'rack',
      author: ALICE,
      text: 'Why R2? (typo fixed)',
      edited: true,
    });
    const reply = makeComment({ id: 2, change_diff: 11, parent: 1, attribute: 'rack', author: BOB, text: 'Room.' });
    const [t] = buildThreads({ comments: [root, reply], drafts: [], changes: [sw1], me: ME });
    assert.deepEqual(
      t.comments.map((c) => c.label),
      ['(edited)', undefined],
    );
  });

  it('places a thread without attribute on the first line, a nested one on its key, and one only the baseline has on the baseline', () => {
    const threads = buildThreads({
      comments: [
        makeComment({ id: 1, change_diff: 11, attribute: null }),
        makeComment({ id: 2, change_diff: 11, attribute: 'custom_fields.owner' }),
        makeComment({ id: 3, change_diff: 11, attribute: 'serial' }),
      ],
      drafts: [],
      changes: [sw1],
      me: ME,
    });
    assert.deepEqual(
      threads.map((t) => [t.label, t.place?.side, t.place?.line]),
      [
        ['Whole object', 'modified', 0],
        ['custom_fields.owner', 'modified', lineIn('modified', 'custom_fields.owner')],
        ['serial', 'original', lineIn('original', 'serial')],
      ],
    );
  });

  it('shows outdated and resolved threads as such, and keeps threads whose change left the branch', () => {
    const threads = buildThreads({
      comments: [
        makeComment({ id: 1, change_diff: 11, attribute: 'name', outdated: true, resolved: true }),
        makeComment({ id: 2, change_diff: 77, attribute: 'rack', outdated: true }),
        makeComment({ id: 3, change_diff: null, attribute: null, outdated: true }),
      ],
      drafts: [],
      changes: [sw1, gone],
      me: ME,
    });
    assert.equal(threads.length, 3);
    assert.equal(threads[0].label, 'name · Outdated: no longer changed · Resolved');
    assert.equal(threads[0].contextValue, 'thread;resolved;outdated;posted;');
    assert.equal(threads[1].place, null);
    assert.equal(threads[1].label, 'rack · Outdated: the change is no longer in the branch');
    assert.equal(threads[1].contextValue, 'thread;open;outdated;posted;');
    assert.equal(threads[2].place, null);
  });

  it('shows my pending drafts: new threads on their attribute, replies at the end of their thread, marked Pending', () => {
    const root = makeComment({ id: 1, change_diff: 11, attribute: 'rack' });
    const drafts: DraftComment[] = [
      {
        key: 'k1',
        changeDiff: 11,
        attribute: 'name',
        parent: null,
        parentDraft: null,
        text: 'Name?',
        created: '2026-11-01T11:00:00.000Z',
      },
      {
        key: 'k2',
        changeDiff: 11,
        attribute: null,
        parent: 1,
        parentDraft: null,
        text: 'Agreed.',
        created: '2026-11-01T11:01:00.000Z',
      },
      {
        key: 'k3',
        changeDiff: 11,
        attribute: null,
        parent: null,
        parentDraft: 'k1',
        text: 'And the serial.',
        created: '2026-11-01T11:02:00.000Z',
      },
    ];
    const threads = buildThreads({ comments: [root], drafts, changes: [sw1], me: ME });
    assert.deepEqual(
      threads.map((t) => t.key),
      ['c:1', 'd:k1'],
    );
    assert.deepEqual(
      threads[0].comments.map((c) => [c.key, c.label, c.pending, c.contextValue]),
      [
        ['c:1', undefined, false, 'comment;posted;'],
        ['d:k2', 'Pending', true, 'comment;mine;pending;'],
      ],
    );
    const pending = threads[1];
    assert.equal(pending.pending, true);
    assert.equal(pending.rootDraft, 'k1');
    assert.equal(pending.label, 'name · Pending');
    assert.equal(pending.contextValue, 'thread;open;pending;');
    assert.equal(pending.place?.line, lineIn('modified', 'name'));
    assert.deepEqual(
      pending.comments.map((c) => [c.text, c.author]),
      [
        ['Name?', 'Bob'],
        ['And the serial.', 'Bob'],
      ],
    );
  });

  it('shows a reply whose root it cannot see as a thread of its own', () => {
    const threads = buildThreads({
      comments: [makeComment({ id: 5, parent: 4, change_diff: 11 })],
      drafts: [],
      changes: [sw1],
      me: ME,
    });
    assert.deepEqual(
      threads.map((t) => t.key),
      ['c:5'],
    );
  });

  it('says which attribute is not in the shown version', () => {
    assert.equal(
      threadLabel({ attribute: 'x.y', resolved: false, outdated: false, pending: false, exact: false, gone: false }),
      'x.y (not in this version)',
    );
  });

  it('counts the open posted threads per change', () => {
    const counts = openThreadCounts([
      makeComment({ id: 1, change_diff: 11 }),
      makeComment({ id: 2, change_diff: 11, parent: 1 }),
      makeComment({ id: 3, change_diff: 11, resolved: true }),
      makeComment({ id: 4, change_diff: 12 }),
      makeComment({ id: 5, change_diff: null }),
    ]);
    assert.deepEqual(
      [...counts.entries()],
      [
        [11, 1],
        [12, 1],
      ],
    );
  });
});
