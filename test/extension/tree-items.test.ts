import assert from 'node:assert/strict';
import { groupChangeRequests, EMPTY_LISTS } from '../../extension/core/grouping';
import {
  changeRequestIdOf,
  changeRequestItem,
  changeRequestRoots,
  checkItem,
  checkRoots,
  childNodes,
  escapeMarkdown,
  groupItem,
  myReviewRoots,
  nodeItem,
  reviewBadge,
  reviewItem,
} from '../../extension/core/tree-items';
import { ApiError } from '../../extension/core/api-error';
import { actions, makeChangeRequest, makeCheck, makeReview } from './fixtures';

/** The rule fields of a one-off freeze as a request shows it. */
const ONE_OFF = { kind: 'once' as const, weekdays: [], start_time: null, end_time: null, time_zone: 'UTC' };

describe('extension: tree items', () => {
  it('labels a group with its count and collapses empty and closed groups', () => {
    const groups = groupChangeRequests({
      ...EMPTY_LISTS,
      open: [makeChangeRequest({ id: 1, status: 'draft' })],
      closed: [makeChangeRequest({ id: 2, status: 'completed' })],
    });
    const drafts = groupItem(groups.find((g) => g.id === 'drafts')!);
    assert.equal(drafts.label, 'Drafts');
    assert.equal(drafts.description, '1');
    assert.equal(drafts.collapsible, 'expanded');
    assert.equal(groupItem(groups.find((g) => g.id === 'mine')!).collapsible, 'none');
    assert.equal(groupItem(groups.find((g) => g.id === 'recentlyClosed')!).collapsible, 'collapsed');
  });

  it('shows a change request with its ref, status, urgency and conflicts, and opens it on click', () => {
    const cr = makeChangeRequest({
      id: 7,
      title: 'Move sw1',
      ref: 'CHG-7',
      status: 'rejected',
      priority: 'critical',
      has_conflicts: true,
      actions: actions(['submit', 'abandon']),
    });
    const item = changeRequestItem(cr, 'mine');
    assert.equal(item.id, 'mine/cr:7');
    assert.equal(item.label, 'Move sw1');
    assert.equal(item.description, 'CHG-7 · Changes requested · Critical · conflicts');
    assert.deepEqual(item.icon, { id: 'request-changes', color: 'testing.iconFailed' });
    assert.equal(item.contextValue, 'changeRequest;submit;abandon;');
    // A click opens it in the preview tab (the next click reuses that tab).
    assert.deepEqual(item.command, {
      id: 'changeControl.openChangeRequest',
      title: 'Open Change Request',
      args: [7, 'preview'],
    });
  });

  it("says in the tooltip why a request cannot merge, with the user's words escaped", () => {
    const cr = makeChangeRequest({
      id: 1,
      title: 'Fix *all* [the](javascript:x) things',
      merge_blocked_reason: 'Check "ci" is pending.',
      actions: actions([], { merge: 'Check "ci" is pending.' }),
    });
    const tooltip = changeRequestItem(cr, 'blocked').tooltip!;
    assert.match(tooltip, /Merge blocked: Check "ci" is pending\\\./);
    assert.ok(tooltip.includes('Fix \\*all\\* \\[the\\]\\(javascript:x\\) things'));
    const ready = changeRequestItem(
      makeChangeRequest({ id: 2, ready_to_merge: true, actions: actions(['merge']) }),
      'readyToMerge',
    ).tooltip!;
    assert.match(ready, /Ready to merge/);
  });

  it('keeps ids unique when one request sits in several groups', () => {
    const cr = makeChangeRequest({ id: 3 });
    assert.notEqual(changeRequestItem(cr, 'mine').id, changeRequestItem(cr, 'blocked').id);
  });

  it("shows a check's status, kind and summary, and links its details only for http(s)", () => {
    const now = new Date('2026-11-01T09:33:00.000Z');
    const failing = checkItem(
      makeCheck({
        id: 1,
        label: 'CI',
        status: 'failure',
        summary: '3 tests failed',
        details_url: 'https://ci.example/1',
        completed: '2026-11-01T09:30:00.000Z',
      }),
      now,
    );
    assert.equal(failing.label, 'CI');
    assert.equal(failing.description, 'Failed · required · 3 tests failed · 3 minutes ago', 'the time relative');
    assert.match(
      failing.tooltip!,
      /Result from 3 minutes ago \(1 Nov 2026, \d\d:30 /,
      'the exact time on hover, no seconds',
    );
    assert.equal(failing.icon!.id, 'error');
    assert.equal(failing.contextValue, 'check;required;details;');
    assert.deepEqual(failing.command, {
      id: 'changeControl.openCheckDetails',
      title: 'Open Check Details',
      args: ['https://ci.example/1'],
    });
    const advisory = checkItem(makeCheck({ id: 2, status: 'skipped', required: false, blocks_merge: false }));
    assert.equal(advisory.contextValue, 'check;advisory;');
    assert.equal(advisory.command, undefined);
  });

  it('an outdated or timed-out result never shows a pass mark in the Checks view: it says what it is', () => {
    const outdated = checkItem(
      makeCheck({ id: 3, label: 'CI', status: 'success', outdated: true, blocks_merge: true, digest: 'a'.repeat(64) }),
    );
    assert.match(outdated.description!, /^Outdated \(passed, no longer counts\) · required/);
    assert.notEqual(outdated.icon!.id, 'pass');
    assert.match(outdated.tooltip!, /Outdated: reported on an earlier version of the branch \(digest aaaaaaaaaaaa\)/);
    assert.match(outdated.tooltip!, /Blocks the merge/);
    const passed = checkItem(makeCheck({ id: 4, status: 'success' }));
    assert.doesNotMatch(passed.description!, /utdated/);
    assert.equal(passed.icon!.id, 'pass');
    const timedOut = checkItem(
      makeCheck({
        id: 5,
        label: 'CI',
        status: 'failure',
        timed_out: true,
        summary: 'Never reported: still pending after 2 minutes.',
      }),
    );
    assert.match(timedOut.description!, /^Timed out · required/);
    assert.match(timedOut.tooltip!, /Timed out: it was never reported in time/);
  });

  it('a pending check shows its deadline, and a check with a declared reporter names who may report it', () => {
    const due = checkItem(
      makeCheck({
        id: 6,
        status: 'pending',
        deadline: '2026-11-01T09:32:00.000Z',
        reporter: { users: ['ci-bot'], groups: ['pipelines'] },
      }),
    );
    assert.match(due.description!, /^Pending · required · due 1 Nov 2026, \d\d:32 /);
    assert.match(due.tooltip!, /Fails unless reported by 1 Nov 2026, \d\d:32 /);
    assert.match(due.tooltip!, /Only ci\\-bot or group pipelines may report it/);
  });

  it('orders checks in the Checks view as the review page does: blocking first, then required, then by name', () => {
    const roots = checkRoots(
      [
        makeCheck({ id: 1, name: 'z-advisory', required: false, blocks_merge: false }),
        makeCheck({ id: 2, name: 'b-required', required: true, blocks_merge: false }),
        makeCheck({ id: 3, name: 'c-blocking', required: true, blocks_merge: true }),
        makeCheck({ id: 4, name: 'a-blocking', required: true, blocks_merge: true }),
      ],
      false,
    );
    assert.deepEqual(
      roots.map((n) => (n.kind === 'check' ? n.check.name : '')),
      ['a-blocking', 'c-blocking', 'b-required', 'z-advisory'],
    );
  });

  it('says which content a review was given on (its digest) and what stale means', () => {
    const item = reviewItem(
      makeReview({ id: 6, decision: 'approve', stale: true, digest: 'b'.repeat(64), change_request: 1 }),
      undefined,
      new Date('2026-11-01T11:00:00.000Z'),
    );
    assert.match(item.tooltip!, /on digest bbbbbbbbbbbb/);
    assert.match(item.tooltip!, /stale: the branch's changes differ from those you reviewed/);
  });

  it("shows one of my reviews with its decision, staleness and the request's menus", () => {
    const cr = makeChangeRequest({ id: 1, title: 'Move sw1', actions: actions(['review']) });
    const item = reviewItem(
      makeReview({ id: 5, decision: 'reject', stale: true, change_request: 1 }),
      cr,
      new Date('2026-11-01T11:00:00.000Z'),
    );
    assert.equal(item.label, 'Move sw1');
    assert.equal(item.description, 'Request changes · stale · Needs review · 2 hours ago');
    assert.match(item.tooltip!, /Given 2 hours ago \(1 Nov 2026, /);
    assert.equal(item.contextValue, 'changeRequest;review;');
    const unknown = reviewItem(makeReview({ id: 6, change_request: 42 }), undefined);
    assert.equal(unknown.label, 'Change request #42');
    assert.deepEqual(unknown.command!.args, [42, 'preview']);
  });

  it('finds the change request a command argument stands for', () => {
    const cr = makeChangeRequest({ id: 9 });
    assert.equal(changeRequestIdOf(9), 9);
    assert.equal(changeRequestIdOf({ kind: 'changeRequest', cr, scope: 'x' }), 9);
    assert.equal(
      changeRequestIdOf({ kind: 'review', review: makeReview({ id: 1, change_request: 4 }), cr: undefined }),
      4,
    );
    assert.equal(changeRequestIdOf(undefined), undefined);
    assert.equal(changeRequestIdOf('9'), undefined);
    assert.equal(changeRequestIdOf(-1), undefined);
    assert.equal(changeRequestIdOf({ kind: 'check', check: makeCheck({ id: 1 }) }), undefined);
  });

  it("shows a request's freezes and queue position in its row and tooltip", () => {
    const frozen = makeChangeRequest({
      id: 8,
      ref: 'CHG-8',
      status: 'approved',
      queue_position: 2,
      freezes: [
        {
          id: 1,
          name: 'Year *end*',
          active: true,
          start: '2026-12-20T00:00:00.000Z',
          end: '2027-01-04T00:00:00.000Z',
          ...ONE_OFF,
        },
      ],
    });
    const item = changeRequestItem(frozen, 'mine');
    assert.equal(item.description, 'queued #2 · CHG-8 · Approved · frozen', 'the queue first, where it is not cut');
    assert.match(item.tooltip!, /Frozen by "Year \\\*end\\\*" until 4 Jan 2027, \d\d:\d\d /);
    assert.match(item.tooltip!, /Position 2 in the merge queue, waiting for the freeze to end \(4 Jan 2027/);
    assert.doesNotMatch(item.tooltip!, /merging now or next/);
    const upcoming = makeChangeRequest({
      id: 9,
      ref: '',
      status: 'approved',
      freezes: [
        {
          id: 2,
          name: 'Fridays',
          active: false,
          start: '2026-11-06T17:00:00.000Z',
          end: '2026-11-06T22:00:00.000Z',
          ...ONE_OFF,
        },
      ],
    });
    assert.equal(changeRequestItem(upcoming, 'mine').description, 'Approved · freeze ahead');
    assert.match(changeRequestItem(upcoming, 'mine').tooltip!, /Freeze "Fridays" from 6 Nov 2026/);
  });

  it("a request's row says automatic merge, an outdated or timed-out check that blocks it, and its tooltip when it may merge, with no ISO time in its words", () => {
    const auto = makeChangeRequest({ id: 10, ref: 'CHG-10', status: 'approved', auto_merge: true });
    assert.equal(changeRequestItem(auto, 'mine').description, 'auto-merge · CHG-10 · Approved');
    assert.match(changeRequestItem(auto, 'mine').tooltip!, /Merges automatically once ready/);
    const stale = makeChangeRequest({
      id: 11,
      ref: '',
      status: 'approved',
      stale_checks: [
        { name: 'ci/build', label: 'CI build', reason: 'outdated' },
        { name: 'sec/scan', label: 'sec/scan', reason: 'timed_out' },
      ],
    });
    assert.equal(
      changeRequestItem(stale, 'mine').description,
      'Approved · check CI build outdated · check sec/scan timed out',
    );
    const held = makeChangeRequest({
      id: 12,
      status: 'approved',
      ready_to_merge: false,
      blocked_until: '2026-11-28T22:33:06.952Z',
      merge_blocked_reason: 'Merging is frozen by "Year end" until 2026-11-28T22:33:06.952Z.',
      freezes: [
        {
          id: 3,
          name: 'Mondays',
          active: true,
          start: '2026-11-02T13:00:00.000Z',
          end: '2026-11-02T17:00:00.000Z',
          kind: 'recurring',
          weekdays: [1],
          start_time: '08:00',
          end_time: '12:00',
          time_zone: 'America/New_York',
        },
      ],
    });
    const tip = changeRequestItem(held, 'mine').tooltip!;
    assert.match(tip, /Frozen by "Mondays" \\\(every Monday 08:00–12:00 New York time\\\) until 2 Nov 2026, /);
    assert.match(tip, /May merge from 28 Nov 2026|May merge from 29 Nov 2026/);
    assert.doesNotMatch(tip, /\d{4}-\d\d-\d\dT/, 'no ISO string');
  });

  it('lists the objects the mergeable check names as rows under it', () => {
    const check = makeCheck({
      id: 5,
      name: 'mergeable',
      label: 'Merges cleanly',
      status: 'failure',
      summary: '2 objects would conflict or fail to apply: sw1; sw2.',
      objects: [
        { object_type: 'dcim.device', object_id: 1, object_repr: 'sw1', problem: 'Conflicts with main on status.' },
        {
          object_type: 'dcim.device',
          object_id: 2,
          object_repr: 'sw2',
          problem: 'Main deleted it since the branch changed it.',
        },
      ],
    });
    const item = checkItem(check);
    assert.equal(item.collapsible, 'expanded');
    assert.match(item.tooltip!, /- sw1: Conflicts with main on status/);
    const rows = childNodes({ kind: 'check', check }).map(nodeItem);
    assert.deepEqual(
      rows.map((r) => [r.label, r.description]),
      [
        ['sw1', 'Conflicts with main on status.'],
        ['sw2', 'Main deleted it since the branch changed it.'],
      ],
    );
    assert.notEqual(rows[0]!.id, rows[1]!.id);
    assert.equal(checkItem(makeCheck({ id: 6 })).collapsible, 'none');
  });

  it('turns every node kind into an item', () => {
    const node = nodeItem({ kind: 'reviewSection', id: 'waiting', label: 'Waiting for my review', children: [] });
    assert.equal(node.description, '0');
    const message = nodeItem({ kind: 'message', id: 'x', label: 'Loading…' });
    assert.equal(message.contextValue, 'message;');
  });

  it('gives each view its rows: loading, a failed first load to retry, the groups and their requests, nothing when empty', () => {
    const labels = (nodes: ReturnType<typeof changeRequestRoots>) => nodes.map((n) => nodeItem(n).label);
    assert.deepEqual(labels(changeRequestRoots({ loaded: false, error: null, lists: EMPTY_LISTS })), [
      'Loading change requests…',
    ]);
    const retry = changeRequestRoots({ loaded: false, error: new ApiError('unreachable', 'down'), lists: EMPTY_LISTS });
    assert.deepEqual(nodeItem(retry[0]!).command, { id: 'changeControl.refresh', title: 'Refresh', args: [] });
    assert.deepEqual(
      changeRequestRoots({ loaded: true, error: null, lists: EMPTY_LISTS }),
      [],
      'no rows: the welcome says there is none',
    );
    const draft = makeChangeRequest({ id: 1, title: 'Draft one', status: 'draft' });
    const roots = changeRequestRoots({ loaded: true, error: null, lists: { ...EMPTY_LISTS, open: [draft] } });
    const drafts = roots.find((n) => n.kind === 'group' && n.group.id === 'drafts')!;
    assert.deepEqual(childNodes(drafts), [{ kind: 'changeRequest', cr: draft, scope: 'drafts' }]);
    assert.deepEqual(childNodes({ kind: 'check', check: makeCheck({ id: 1 }) }), []);
  });

  it('lists the checks of the selected request, or says there are none (nothing when they failed: the view says why)', () => {
    assert.deepEqual(
      checkRoots([], false).map((n) => nodeItem(n).label),
      ['No checks on this change request'],
    );
    assert.deepEqual(checkRoots([], true), []);
    assert.deepEqual(
      checkRoots([makeCheck({ id: 4, name: 'ci/build' })], false).map((n) => n.kind),
      ['check'],
    );
  });

  it('lists under My Reviews the requests waiting for me, those waiting for my advisory review under their own heading, then my reviews, the last updated first, and counts the waiting ones in a badge', () => {
    const waiting = makeChangeRequest({ id: 5, status: 'needs-review' });
    const trial = makeChangeRequest({ id: 6, status: 'needs-review' });
    const older = makeReview({ id: 1, change_request: 5, last_updated: '2026-10-01T00:00:00Z' });
    const newer = makeReview({ id: 2, change_request: 9, last_updated: '2026-10-02T00:00:00Z' });
    const [waitingSection, advisorySection, reviewed] = myReviewRoots(
      {
        loaded: true,
        lists: { ...EMPTY_LISTS, open: [waiting, trial], needsMyReview: [waiting], advisory: [trial] },
        myReviews: [older, newer],
      },
      (id) => (id === 5 ? waiting : undefined),
    );
    assert.deepEqual(
      childNodes(waitingSection!).map((n) => changeRequestIdOf(n)),
      [5],
    );
    // Only a policy on trial names me on #6: advisory, never "Waiting for my review".
    assert.equal(nodeItem(advisorySection!).label, 'Advisory reviews (policy on trial)');
    assert.deepEqual(
      childNodes(advisorySection!).map((n) => changeRequestIdOf(n)),
      [6],
    );
    assert.deepEqual(
      childNodes(reviewed!).map((n) => (n.kind === 'review' ? [n.review.id, n.cr?.id] : null)),
      [
        [2, undefined],
        [1, 5],
      ],
    );
    assert.deepEqual(
      myReviewRoots({ loaded: false, lists: EMPTY_LISTS, myReviews: [] }, () => undefined),
      [],
    );
    assert.equal(reviewBadge(0), undefined);
    assert.deepEqual(reviewBadge(1), { value: 1, tooltip: '1 change request waiting for your review' });
    assert.equal(reviewBadge(3)!.tooltip, '3 change requests waiting for your review');
  });

  it('escapes Markdown so that it shows literally', () => {
    assert.equal(escapeMarkdown('a_b *c* <d> [e](f)\nnext'), 'a\\_b \\*c\\* \\<d\\> \\[e\\]\\(f\\) next');
  });
});
