import assert from 'node:assert/strict';
import {
  EMPTY_LISTS,
  GROUPS,
  groupChangeRequests,
  indexById,
  isEmpty,
  RECENTLY_CLOSED_LIMIT,
} from '../../extension/core/grouping';
import { makeChangeRequest } from './fixtures';

const labelsOf = (groups: ReturnType<typeof groupChangeRequests>) =>
  Object.fromEntries(groups.map((g) => [g.id, g.items.map((cr) => cr.id)]));

describe('extension: grouping change requests', () => {
  it('always shows the six groups, in order, even when empty', () => {
    const groups = groupChangeRequests(EMPTY_LISTS);
    assert.deepEqual(
      groups.map((g) => g.label),
      ['Needs my review', 'Mine', 'Drafts', 'Ready to merge', 'Blocked', 'Recently closed'],
    );
    assert.deepEqual(
      groups.map((g) => g.id),
      GROUPS.map((g) => g.id),
    );
    assert.ok(groups.every((g) => g.items.length === 0));
  });

  it("sorts requests into groups by status, readiness and the service's reviewer and requester lists", () => {
    const draft = makeChangeRequest({ id: 1, status: 'draft' });
    const ready = makeChangeRequest({
      id: 2,
      status: 'approved',
      approved: true,
      ready_to_merge: true,
      merge_blocked_reason: '',
    });
    const blocked = makeChangeRequest({ id: 3, status: 'needs-review' });
    const approvedButBlocked = makeChangeRequest({
      id: 4,
      status: 'approved',
      approved: true,
      ready_to_merge: false,
      merge_blocked_reason: 'Check "ci" is pending.',
    });
    const completed = makeChangeRequest({ id: 5, status: 'completed' });
    const groups = groupChangeRequests({
      open: [draft, ready, blocked, approvedButBlocked],
      needsMyReview: [blocked],
      advisory: [],
      mine: [draft, ready],
      closed: [completed],
    });
    // Equal priority and update time: the newer request (higher id) first.
    assert.deepEqual(labelsOf(groups), {
      needsMyReview: [3],
      mine: [2, 1],
      drafts: [1],
      readyToMerge: [2],
      blocked: [4, 3],
      recentlyClosed: [5],
    });
  });

  it('keeps drafts and closed requests out of "Needs my review" even if the list has them', () => {
    const groups = groupChangeRequests({
      ...EMPTY_LISTS,
      needsMyReview: [
        makeChangeRequest({ id: 1, status: 'draft' }),
        makeChangeRequest({ id: 2, status: 'abandoned' }),
        makeChangeRequest({ id: 3, status: 'rejected' }),
      ],
    });
    assert.deepEqual(labelsOf(groups).needsMyReview, [3]);
  });

  it('orders by priority, then the most recently updated first', () => {
    const groups = groupChangeRequests({
      ...EMPTY_LISTS,
      open: [
        makeChangeRequest({ id: 1, status: 'draft', priority: 'low', last_updated: '2026-11-03T00:00:00Z' }),
        makeChangeRequest({ id: 2, status: 'draft', priority: 'critical', last_updated: '2026-11-01T00:00:00Z' }),
        makeChangeRequest({ id: 3, status: 'draft', priority: 'medium', last_updated: '2026-11-01T00:00:00Z' }),
        makeChangeRequest({ id: 4, status: 'draft', priority: 'medium', last_updated: '2026-11-02T00:00:00Z' }),
      ],
    });
    assert.deepEqual(labelsOf(groups).drafts, [2, 4, 3, 1]);
  });

  it('shows the most recently closed first, at most a bounded number', () => {
    const closed = Array.from({ length: RECENTLY_CLOSED_LIMIT + 5 }, (_, i) =>
      makeChangeRequest({
        id: i + 1,
        status: i % 2 ? 'completed' : 'abandoned',
        last_updated: `2026-10-${String(i + 1).padStart(2, '0')}T00:00:00Z`,
      }),
    );
    const recent = labelsOf(groupChangeRequests({ ...EMPTY_LISTS, closed })).recentlyClosed;
    assert.equal(recent.length, RECENTLY_CLOSED_LIMIT);
    assert.equal(recent[0], RECENTLY_CLOSED_LIMIT + 5);
  });

  it('does not list a request twice in one group', () => {
    const cr = makeChangeRequest({ id: 1, status: 'draft' });
    const groups = groupChangeRequests({ ...EMPTY_LISTS, open: [cr, cr], mine: [cr, cr] });
    assert.deepEqual(labelsOf(groups).drafts, [1]);
    assert.deepEqual(labelsOf(groups).mine, [1]);
  });

  it('indexes every known request by id and tells when there are none', () => {
    assert.equal(isEmpty(EMPTY_LISTS), true);
    const lists = {
      ...EMPTY_LISTS,
      open: [makeChangeRequest({ id: 1 })],
      closed: [makeChangeRequest({ id: 2, status: 'completed' })],
    };
    assert.equal(isEmpty(lists), false);
    assert.deepEqual([...indexById(lists).keys()].sort(), [1, 2]);
  });
});
