import assert from 'node:assert/strict';
import { Backoff } from '../../extension/core/backoff';
import type { Notification } from '../../contract/api/host';
import {
  MAX_SHOWN_AT_ONCE,
  moreMessage,
  notificationMessage,
  reviewNotificationsToShow,
} from '../../extension/core/review-notifications';

function note(id: number, over: Partial<Notification> = {}): Notification {
  return {
    id,
    url: `http://127.0.0.1:8000/api/extras/notifications/${id}/`,
    display: `n ${id}`,
    object_type: 'change_control.changerequest',
    object_id: id,
    object_repr: `CR ${id}`,
    event_type: 'change_request_review_requested',
    created: '2026-11-01T09:00:00Z',
    read: false,
    ...over,
  };
}

describe('extension: polling for review requests', () => {
  it('backs off by doubling on failures up to a ceiling, and returns to the base on success', () => {
    const b = new Backoff(1000, 10_000);
    assert.equal(b.next(true), 1000);
    assert.equal(b.next(false), 2000);
    assert.equal(b.next(false), 4000);
    assert.equal(b.next(false), 8000);
    assert.equal(b.next(false), 10_000);
    assert.equal(b.consecutiveFailures, 4);
    assert.equal(b.next(true), 1000);
  });

  it('shows only new review requests on change requests, once per request, newest first', () => {
    const d = reviewNotificationsToShow(
      [
        note(5),
        note(4, { event_type: 'change_request_updated' }),
        note(3, { object_type: 'dcim.device' }),
        note(2),
        note(6, { object_id: 2 }),
        note(1),
      ],
      1,
    );
    assert.deepEqual(
      d.show.map((n) => n.id),
      [6, 5],
    );
    assert.equal(d.more, 0);
    assert.equal(d.lastSeenId, 6);
  });

  it("shows the requester's own requests approved, rejected or merged, each in its words", () => {
    const d = reviewNotificationsToShow(
      [
        note(7, { event_type: 'change_request_approved' }),
        note(8, { event_type: 'change_request_rejected' }),
        note(9, { event_type: 'change_request_completed' }),
      ],
      0,
    );
    assert.deepEqual(
      d.show.map((n) => n.id),
      [9, 8, 7],
    );
    assert.deepEqual(
      d.show.map((n) => notificationMessage(n)),
      [
        'Your change request was merged: CR 9',
        'Your change request was rejected: CR 8',
        'Your change request was approved: CR 7',
      ],
    );
  });

  it('a request merged by an override says so, with who and why when the request could be read', () => {
    const n = note(10, { event_type: 'change_request_overridden' });
    assert.deepEqual(
      reviewNotificationsToShow([n], 0).show.map((x) => x.id),
      [10],
    );
    assert.equal(
      notificationMessage(n, { user: 'carol', reason: 'Outage fix' }),
      'Your change request was merged past its gate (an override) by carol: CR 10. Reason: Outage fix',
    );
    assert.equal(notificationMessage(n), 'Your change request was merged past its gate (an override): CR 10');
  });

  it('a first sign-in shows no burst of past outcomes (approved, merged), only reviews waiting for me; then only what comes after', () => {
    const before = [
      note(2, { event_type: 'change_request_review_requested', object_id: 20 }),
      note(3, { event_type: 'change_request_approved' }),
      note(4, { event_type: 'change_request_approved' }),
    ];
    const first = reviewNotificationsToShow(before, undefined);
    assert.deepEqual(
      first.show.map((n) => n.id),
      [2],
    );
    assert.equal(first.lastSeenId, 4);
    const later = reviewNotificationsToShow(
      [...before, note(5, { event_type: 'change_request_completed' })],
      first.lastSeenId,
    );
    assert.deepEqual(
      later.show.map((x) => x.id),
      [5],
    );
    assert.match(moreMessage(2), /^2 more change requests changed for you/);
  });

  it('shows a few at once and counts the rest', () => {
    const many = Array.from({ length: MAX_SHOWN_AT_ONCE + 4 }, (_, i) => note(i + 1));
    const d = reviewNotificationsToShow(many, 0);
    assert.equal(d.show.length, MAX_SHOWN_AT_ONCE);
    assert.equal(d.more, 4);
    assert.deepEqual(reviewNotificationsToShow(many, d.lastSeenId).show, []);
  });

  it('keeps the high-water mark when nothing is unread', () => {
    assert.deepEqual(reviewNotificationsToShow([], 12), { show: [], more: 0, lastSeenId: 12 });
    assert.equal(notificationMessage(note(1)), 'Change request waiting for your review: CR 1');
  });
});
