import assert from 'node:assert/strict';
import { ApiError } from '../../extension/core/api-error';
import { describeOperation, performWrite } from '../../extension/core/operations';
import { lifecycleMoves, loadSnapshot } from '../../extension/core/snapshot';
import { ALICE, makeChange, makeChangeRequest, makeCheck, makeComment, makeEvaluation, makeReview } from './fixtures';

const me = { id: ALICE.id, username: ALICE.username, display: ALICE.display, is_superuser: false };

function fakeClient(over: Record<string, unknown> = {}) {
  const calls: string[] = [];
  const client = {
    getChangeRequest: async (id: number) => (calls.push(`cr ${id}`), makeChangeRequest({ id, branch: 55 })),
    getEvaluation: async (id: number) => (calls.push(`evaluation ${id}`), makeEvaluation({ change_request: id })),
    listChecks: async () => [
      makeCheck({ id: 1, name: 'b', required: false, blocks_merge: false }),
      makeCheck({ id: 2, name: 'a', blocks_merge: true }),
      makeCheck({ id: 3, name: 'c', blocks_merge: false }),
    ],
    listReviews: async () => [
      makeReview({ id: 2, created: '2026-11-02T00:00:00Z' }),
      makeReview({ id: 1, created: '2026-11-01T00:00:00Z' }),
    ],
    listComments: async () => [makeComment({ id: 5 }), makeComment({ id: 4 })],
    listChanges: async (branchId: number) => (
      calls.push(`changes ${branchId}`),
      [makeChange({ id: 2, object_repr: 'sw2' }), makeChange({ id: 1, object_repr: 'sw1' })]
    ),
    request: async (method: string, path: string) => {
      calls.push(`${method} ${path}`);
      return {
        count: 2,
        next: null,
        previous: null,
        results: [
          {
            id: 31,
            time: '2026-11-02T00:00:00Z',
            user_name: 'alice',
            action: 'update',
            prechange_data: { status: 'draft' },
            postchange_data: { status: 'needs-review' },
          },
          {
            id: 30,
            time: '2026-11-01T00:00:00Z',
            user_name: 'alice',
            action: 'create',
            prechange_data: null,
            postchange_data: { status: 'draft' },
          },
        ],
      };
    },
    ...over,
  };
  return { client, calls };
}

describe('extension: loading a change request for the panel', () => {
  it('loads the request, then its parts, in a stable order', async () => {
    const { client, calls } = fakeClient();
    const snap = await loadSnapshot(client, 4, me, () => new Date('2026-11-05T00:00:00Z'));
    assert.equal(snap.changeRequest.id, 4);
    assert.deepEqual(snap.me, { id: ALICE.id, username: 'alice', display: 'Alice' });
    assert.deepEqual(
      snap.checks.map((c) => c.name),
      ['a', 'c', 'b'],
      'blocking first, then required, then by name',
    );
    assert.deepEqual(
      snap.reviews.map((r) => r.id),
      [1, 2],
    );
    assert.deepEqual(
      snap.changes.map((c) => c.object_repr),
      ['sw1', 'sw2'],
    );
    assert.deepEqual(
      snap.comments.map((c) => c.id),
      [4, 5],
    );
    assert.ok(calls.includes('changes 55'));
    assert.deepEqual(snap.problems, []);
    assert.equal(snap.loadedAt, '2026-11-05T00:00:00.000Z');
    assert.ok(
      calls.includes(
        'GET /api/core/object-changes/?changed_object_type=change_control.changerequest&changed_object_id=4&ordering=-time&limit=200',
      ),
      calls.join('\n'),
    );
    assert.deepEqual(snap.history, [
      { id: 30, time: '2026-11-01T00:00:00Z', user: 'alice', from: null, to: 'draft' },
      { id: 31, time: '2026-11-02T00:00:00Z', user: 'alice', from: 'draft', to: 'needs-review' },
    ]);
  });

  it('leaves out the status moves, without naming a problem, when the changelog may not be read', async () => {
    const { client } = fakeClient({
      request: async () => {
        throw new ApiError('forbidden', 'You do not have permission to perform this action.');
      },
    });
    const snap = await loadSnapshot(client, 4, me);
    assert.equal(snap.history, null);
    assert.deepEqual(snap.problems, []);
  });

  it('keeps, of the changelog, the creation and the writes that moved the status', () => {
    const entry = (
      id: number,
      action: string,
      from: string | null,
      to: string | null,
      time = `2026-11-0${id % 9}T00:00:00Z`,
    ) => ({
      id,
      time,
      user_name: id === 4 ? '' : 'bob',
      action,
      prechange_data: from === null ? null : { status: from, title: 'x' },
      postchange_data: to === null ? null : { status: to, title: 'y' },
    });
    assert.deepEqual(
      lifecycleMoves([
        entry(3, 'update', 'needs-review', 'needs-review'),
        entry(1, 'create', null, 'draft'),
        entry(2, 'update', 'draft', 'needs-review'),
        entry(4, 'update', 'needs-review', 'approved'),
        entry(5, 'update', 'approved', 'no-such-status'),
      ]),
      [
        { id: 1, time: '2026-11-01T00:00:00Z', user: 'bob', from: null, to: 'draft' },
        { id: 2, time: '2026-11-02T00:00:00Z', user: 'bob', from: 'draft', to: 'needs-review' },
        { id: 4, time: '2026-11-04T00:00:00Z', user: null, from: 'needs-review', to: 'approved' },
      ],
    );
  });

  it('names the parts that failed instead of failing the whole panel', async () => {
    const { client } = fakeClient({
      getEvaluation: async () => {
        throw new ApiError('server', 'The service failed (HTTP 500).');
      },
    });
    const snap = await loadSnapshot(client, 4, me);
    assert.equal(snap.evaluation, null);
    assert.deepEqual(snap.problems, ['The approval panel could not be loaded: The service failed (HTTP 500).']);
  });

  it('fails when the request itself cannot be loaded', async () => {
    const { client } = fakeClient({
      getChangeRequest: async () => {
        throw new ApiError('notFound', 'Not found.');
      },
    });
    await assert.rejects(loadSnapshot(client, 4, me), /Not found/);
  });

  it('does not ask for the changes of a deleted branch', async () => {
    const { client, calls } = fakeClient({
      getChangeRequest: async (id: number) => makeChangeRequest({ id, branch: null, branch_deleted: true }),
    });
    const snap = await loadSnapshot(client, 4, me);
    assert.deepEqual(snap.changes, []);
    assert.ok(!calls.some((c) => c.startsWith('changes')));
  });
});

describe('extension: writes asked for by the panel', () => {
  function recorder() {
    const calls: unknown[][] = [];
    const record =
      (name: string) =>
      async (...args: unknown[]): Promise<void> => {
        calls.push([name, ...args]);
      };
    return {
      calls,
      client: {
        createComment: record('createComment'),
        updateComment: record('updateComment'),
        deleteComment: record('deleteComment'),
        createReview: record('createReview'),
        updateReview: record('updateReview'),
        applySuggestions: record('applySuggestions'),
      },
    };
  }

  it('applies the suggestions the page names, all at once (one write of the branch)', async () => {
    const { client, calls } = recorder();
    await performWrite(client, 4, { type: 'applySuggestions', opId: '1', commentIds: [7, 9] });
    assert.deepEqual(calls, [['applySuggestions', 4, [7, 9]]]);
  });

  it('creates comments and replies anchored to the change and its attribute, trimmed', async () => {
    const { client, calls } = recorder();
    await performWrite(client, 4, {
      type: 'addComment',
      opId: '1',
      changeDiff: 11,
      text: '  Why 20?  ',
      parent: null,
      attribute: 'vlan',
    });
    await performWrite(client, 4, {
      type: 'addComment',
      opId: '2',
      changeDiff: 11,
      text: 'Because.',
      parent: 7,
      attribute: 'vlan',
    });
    await performWrite(client, 4, {
      type: 'addComment',
      opId: '3',
      changeDiff: 11,
      text: 'On the whole object.',
      parent: null,
      attribute: null,
    });
    assert.deepEqual(calls, [
      ['createComment', { change_request: 4, change_diff: 11, text: 'Why 20?', parent: null, attribute: 'vlan' }],
      ['createComment', { change_request: 4, change_diff: 11, text: 'Because.', parent: 7, attribute: 'vlan' }],
      [
        'createComment',
        { change_request: 4, change_diff: 11, text: 'On the whole object.', parent: null, attribute: null },
      ],
    ]);
  });

  it('edits, deletes, resolves and reopens comments', async () => {
    const { client, calls } = recorder();
    await performWrite(client, 4, { type: 'editComment', opId: '1', commentId: 7, text: 'Edited' });
    await performWrite(client, 4, { type: 'deleteComment', opId: '2', commentId: 7 });
    await performWrite(client, 4, { type: 'setResolved', opId: '3', commentId: 8, resolved: true });
    await performWrite(client, 4, { type: 'setResolved', opId: '4', commentId: 8, resolved: false });
    assert.deepEqual(calls, [
      ['updateComment', 7, { text: 'Edited' }],
      ['deleteComment', 7],
      ['updateComment', 8, { resolved: true }],
      ['updateComment', 8, { resolved: false }],
    ]);
  });

  it("creates a review, or updates the caller's existing one", async () => {
    const { client, calls } = recorder();
    await performWrite(client, 4, {
      type: 'submitReview',
      opId: '1',
      decision: 'approve',
      comment: '',
      reviewId: null,
    });
    await performWrite(client, 4, {
      type: 'submitReview',
      opId: '2',
      decision: 'reject',
      comment: 'VLAN 20 is wrong',
      reviewId: 9,
    });
    assert.deepEqual(calls, [
      ['createReview', { change_request: 4, decision: 'approve', comment: '' }],
      ['updateReview', 9, { decision: 'reject', comment: 'VLAN 20 is wrong' }],
    ]);
  });

  it('refuses empty comments and a request for changes without a comment, before calling the service', async () => {
    const { client, calls } = recorder();
    await assert.rejects(
      performWrite(client, 4, {
        type: 'addComment',
        opId: '1',
        changeDiff: 11,
        text: '   ',
        parent: null,
        attribute: null,
      }),
      /Write a comment first/,
    );
    await assert.rejects(
      performWrite(client, 4, { type: 'editComment', opId: '1', commentId: 1, text: '' }),
      /cannot be empty/,
    );
    await assert.rejects(
      performWrite(client, 4, { type: 'submitReview', opId: '1', decision: 'reject', comment: ' ', reviewId: null }),
      /needs a comment/,
    );
    assert.deepEqual(calls, []);
  });

  it('describes each operation for messages', () => {
    assert.equal(
      describeOperation({ type: 'addComment', opId: '1', changeDiff: 1, text: '', parent: 3, attribute: null }),
      'Replying',
    );
    assert.equal(
      describeOperation({ type: 'setResolved', opId: '1', commentId: 1, resolved: true }),
      'Resolving a thread',
    );
    assert.equal(describeOperation({ type: 'panelAction', opId: '1', action: 'merge' }), 'Running merge');
  });
});
