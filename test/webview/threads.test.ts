// Where comment threads show, and the timeline of the request.
import assert from 'node:assert/strict';
import { relativeTime } from '../../contract/time';
import { buildTimeline, latest } from '../../webview/timeline';
import { openThreadCount, placeThreads, threadsByChange, topAttribute } from '../../webview/threads';
import { BOB, makeChangeRequest, makeCheck, makeComment, makeReview } from '../extension/fixtures';

describe('webview: thread placement', () => {
  it('reads the row of a dot path', () => {
    assert.deepEqual(['config', 'custom_fields.owner', 'interfaces.0.name'].map(topAttribute), [
      'config',
      'custom_fields',
      'interfaces',
    ]);
  });

  it('places a thread under the row of its attribute, and at the object when it names none or its row is not shown', () => {
    const threads = threadsByChange([
      makeComment({ id: 1, attribute: 'custom_fields.owner' }),
      makeComment({ id: 2, parent: 1, attribute: 'custom_fields.owner' }),
      makeComment({ id: 3, attribute: null }),
      makeComment({ id: 4, attribute: 'status', outdated: true }),
      makeComment({ id: 5, attribute: 'custom_fields', resolved: true }),
    ]).get(11)!;
    const placed = placeThreads(threads, ['custom_fields', 'name']);
    assert.deepEqual(
      [...placed.byAttribute.entries()].map(([row, list]) => [row, list.map((t) => t.root.id)]),
      [['custom_fields', [1, 5]]],
    );
    assert.deepEqual(
      placed.object.map((t) => t.root.id),
      [3, 4],
      'the outdated thread on a row no longer shown is kept, at the object',
    );
    assert.deepEqual(
      placeThreads(threads, ['status', 'custom_fields']).object.map((t) => t.root.id),
      [3],
    );
    assert.equal(openThreadCount(threads), 3);
  });
});

describe('webview: timeline', () => {
  const cr = makeChangeRequest({ id: 1, created: '2026-11-01T08:00:00.000Z' });

  it("orders the request's events by time, the same instant by kind", () => {
    const entries = buildTimeline({
      changeRequest: cr,
      history: [
        { id: 9, time: '2026-11-01T08:00:00.000Z', user: 'alice', from: null, to: 'draft' },
        { id: 10, time: '2026-11-01T09:00:00.000Z', user: 'alice', from: 'draft', to: 'needs-review' },
      ],
      reviews: [
        makeReview({
          id: 3,
          reviewer: BOB,
          created: '2026-11-01T09:30:00.000Z',
          last_updated: '2026-11-01T10:30:00.000Z',
        }),
      ],
      comments: [makeComment({ id: 4, created: '2026-11-01T09:00:00.000Z' })],
      checks: [makeCheck({ id: 5, completed: '2026-11-01T09:45:00.000Z' }), makeCheck({ id: 6, completed: null })],
    });
    assert.deepEqual(
      entries.map((e) => [e.key, e.time]),
      [
        ['created', '2026-11-01T08:00:00.000Z'],
        ['status:10', '2026-11-01T09:00:00.000Z'],
        ['comment:4', '2026-11-01T09:00:00.000Z'],
        ['check:5', '2026-11-01T09:45:00.000Z'],
        ['review:3', '2026-11-01T10:30:00.000Z'],
      ],
    );
    assert.equal(
      entries.find((e) => e.kind === 'review')!.kind === 'review' &&
        (entries.find((e) => e.kind === 'review') as { updated: boolean }).updated,
      true,
    );
  });

  it("falls back to the request's creation and requester when the changelog is not readable", () => {
    const [first] = buildTimeline({ changeRequest: cr, history: null, reviews: [], comments: [], checks: [] });
    assert.deepEqual(first, {
      kind: 'created',
      key: 'created',
      time: '2026-11-01T08:00:00.000Z',
      who: cr.requester?.display ?? null,
    });
  });

  it('shows the latest entries and counts the earlier ones', () => {
    const entries = buildTimeline({
      changeRequest: cr,
      history: null,
      reviews: [],
      comments: Array.from({ length: 5 }, (_, i) => makeComment({ id: i + 1 })),
      checks: [],
    });
    const { shown, hidden } = latest(entries, 4);
    assert.equal(hidden, 2);
    assert.deepEqual(
      shown.map((e) => e.key),
      ['comment:2', 'comment:3', 'comment:4', 'comment:5'],
    );
  });

  it('says times relatively', () => {
    const now = Date.parse('2026-11-01T12:00:00Z');
    assert.deepEqual(
      [
        '2026-11-01T11:59:40Z',
        '2026-11-01T11:57:00Z',
        '2026-11-01T09:00:00Z',
        '2026-10-31T12:00:00Z',
        '2026-10-20T12:00:00Z',
        '2026-11-01T14:00:00Z',
        'not a time',
      ].map((t) => relativeTime(t, now)),
      ['just now', '3 minutes ago', '3 hours ago', 'yesterday', '2 weeks ago', 'in 2 hours', 'not a time'],
    );
  });
});
