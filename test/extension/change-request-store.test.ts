import assert from 'node:assert/strict';
import type { ChangeRequestFilters } from '../../extension/core/api-client';
import { ApiError } from '../../extension/core/api-error';
import { ChangeRequestStore, loadLists, type ListsClient } from '../../extension/core/change-request-store';
import { makeChangeRequest, makeReview } from './fixtures';

function client(over: Partial<ListsClient> = {}) {
  const asked: ChangeRequestFilters[] = [];
  const c: ListsClient = {
    listChangeRequests: async (f = {}) => {
      asked.push(f);
      if (f.reviewer === 'me') return [makeChangeRequest({ id: 2 })];
      if (f.advisory_reviewer === 'me') return [makeChangeRequest({ id: 4 })];
      if (f.requester === 'me') return [makeChangeRequest({ id: 1, status: 'draft' })];
      return [makeChangeRequest({ id: 1, status: 'draft' }), makeChangeRequest({ id: 2 })];
    },
    listSomeChangeRequests: async (f) => (asked.push(f), [makeChangeRequest({ id: 3, status: 'completed' })]),
    listMyReviews: async () => [makeReview({ id: 9, change_request: 2 })],
    listMergeQueue: async () => [
      {
        id: 2,
        url: '',
        display: 'CR 2',
        position: 1,
        branch: 7,
        state: 'pending',
        queued: '',
        waiting_for_freeze: null,
      },
    ],
    ...over,
  };
  return { c, asked };
}

describe('extension: the change request lists', () => {
  it('asks the service for open requests, reviewer=me, advisory_reviewer=me, requester=me and recently closed', async () => {
    const { c, asked } = client();
    const lists = await loadLists(c);
    assert.deepEqual(
      lists.open.map((cr) => cr.id),
      [1, 2],
    );
    assert.deepEqual(
      lists.needsMyReview.map((cr) => cr.id),
      [2],
    );
    assert.deepEqual(
      lists.advisory.map((cr) => cr.id),
      [4],
    );
    assert.deepEqual(
      lists.mine.map((cr) => cr.id),
      [1],
    );
    assert.deepEqual(
      lists.closed.map((cr) => cr.id),
      [3],
    );
    assert.deepEqual(asked, [
      { status: ['draft', 'needs-review', 'approved', 'rejected'] },
      { reviewer: 'me', status: ['needs-review', 'approved', 'rejected'] },
      { advisory_reviewer: 'me', status: ['needs-review', 'approved', 'rejected'] },
      { requester: 'me', status: ['draft', 'needs-review', 'approved', 'rejected'] },
      { status: ['completed', 'abandoned'], ordering: '-last_updated', limit: 20 },
    ]);
  });

  it('keeps the last lists and records the failure when a refresh fails', async () => {
    const store = new ChangeRequestStore();
    const seen: boolean[] = [];
    store.onDidChange((s) => seen.push(s.loading));
    await store.refresh(client().c, 2);
    assert.equal(store.state.loaded, true);
    assert.equal(store.byId(2)?.id, 2);
    assert.deepEqual(
      store.state.myReviews.map((r) => r.id),
      [9],
    );
    assert.deepEqual(
      store.state.queue.map((e) => [e.position, e.id]),
      [[1, 2]],
    );
    await store.refresh(
      client({
        listChangeRequests: async () => {
          throw new ApiError('unreachable', 'ECONNREFUSED');
        },
      }).c,
      2,
    );
    assert.equal(store.state.error?.kind, 'unreachable');
    assert.deepEqual(
      store.state.lists.open.map((cr) => cr.id),
      [1, 2],
    );
    assert.deepEqual(seen, [true, false, true, false]);
    store.clear();
    assert.equal(store.state.loaded, false);
    assert.equal(store.byId(2), undefined);
  });

  it('lets My Reviews fail on its own', async () => {
    const store = new ChangeRequestStore();
    await store.refresh(
      client({
        listMyReviews: async () => {
          throw new ApiError('forbidden', 'no');
        },
      }).c,
      2,
    );
    assert.equal(store.state.error, null);
    assert.equal(store.state.reviewsError?.kind, 'forbidden');
    assert.equal(store.state.loaded, true);
  });

  it('runs one refresh at a time and one more for the requests that came meanwhile', async () => {
    let calls = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const { c } = client({
      listSomeChangeRequests: async () => {
        calls += 1;
        if (calls === 1) await gate;
        return [];
      },
    });
    const store = new ChangeRequestStore();
    const first = store.refresh(c, 2);
    const second = store.refresh(c, 2);
    const third = store.refresh(c, 2);
    release();
    await Promise.all([first, second, third]);
    assert.equal(calls, 2);
  });
});
