// The extension's REST client against the real service, in process, for the change-control
// endpoints it uses: lists (reviewer=me, requester=me, status, ordering), detail with actions,
// the evaluation, lifecycle moves, reviews, comments, checks, the merge and its refusal,
// notifications, settings and search. Each test works on a freshly seeded world (seed.ts).
import assert from 'node:assert/strict';
import { OPEN_STATUSES } from '../../contract/api/change-control';
import { ApiClient } from '../../extension/core/api-client';
import { ApiError, presentError } from '../../extension/core/api-error';
import { availability, changeRequestContextValue, mergeBlockedReason } from '../../extension/core/availability';
import { loadLists } from '../../extension/core/change-request-store';
import { groupChangeRequests } from '../../extension/core/grouping';
import { performWrite } from '../../extension/core/operations';
import { reviewNotificationsToShow } from '../../extension/core/review-notifications';
import { loadSnapshot } from '../../extension/core/snapshot';
import { threadsByChange } from '../../webview/threads';
import type { TestService } from '../support/service';
import {
  CHECK_NAME,
  extensionClient,
  POLICY_NAME,
  reportCheck,
  RULE_NAME,
  seededServicePerTest,
  type World,
} from './seed';

async function rejects(p: Promise<unknown>, kind: ApiError['kind']): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`);
    assert.equal(e.kind, kind, `${e.kind}: ${e.message}`);
    return e;
  }
  assert.fail(`expected a ${kind} failure`);
}

describe('extension: API client against the service (change control)', () => {
  const seeded = seededServicePerTest();
  let svc: TestService;
  let world: World;
  let alice: ApiClient; // the author
  let bob: ApiClient; // the reviewer the policy's rule names
  let ci: ApiClient; // a pipeline
  let admin: ApiClient;
  let crId: number;

  /** Takes the seeded world's service and people (again after a restart). */
  function use(seededWorld: World) {
    world = seededWorld;
    svc = world.svc;
    alice = extensionClient(world, world.author);
    bob = extensionClient(world, world.reviewer);
    ci = extensionClient(world, world.pipeline);
    admin = extensionClient(world, 'admin');
    crId = world.changeRequest.id;
  }
  beforeEach(() => use(seeded.world));

  it('lists with reviewer=me, requester=me and status filters, as each caller sees them', async () => {
    const ids = (list: { id: number }[]) => list.map((cr) => cr.id).sort();
    assert.deepEqual(ids(await bob.listChangeRequests({ reviewer: 'me' })), [crId]);
    assert.deepEqual(ids(await alice.listChangeRequests({ reviewer: 'me' })), []);
    assert.deepEqual(
      ids(await alice.listChangeRequests({ requester: 'me', status: OPEN_STATUSES })),
      [crId, world.draft.id].sort(),
    );
    assert.deepEqual(ids(await bob.listChangeRequests({ requester: 'me' })), []);
    assert.deepEqual(ids(await bob.listChangeRequests({ status: ['draft'] })), [world.draft.id]);
    assert.deepEqual(ids(await bob.listChangeRequests({ status: ['needs-review', 'approved'] })), [crId]);

    // The Change Requests view's groups, from the bob's answers.
    const groups = groupChangeRequests(await loadLists(bob));
    const members = Object.fromEntries(groups.map((g) => [g.id, g.items.map((cr) => cr.id)]));
    assert.deepEqual(members, {
      needsMyReview: [crId],
      mine: [],
      drafts: [world.draft.id],
      readyToMerge: [],
      blocked: [crId],
      recentlyClosed: [],
    });
    const mine = groupChangeRequests(await loadLists(alice)).find((g) => g.id === 'mine')!;
    assert.deepEqual(
      mine.items.map((cr) => cr.id),
      [crId, world.draft.id],
    ); // high priority first
  });

  it('reads the detail with what the caller may do next, and maps it to menus', async () => {
    const asReviewer = await bob.getChangeRequest(crId);
    assert.equal(asReviewer.status, 'needs-review');
    assert.equal(asReviewer.has_conflicts, true);
    assert.equal(asReviewer.branch_name, world.branch.name);
    assert.deepEqual(availability(asReviewer, 'review'), { allowed: true, reason: '' });
    assert.equal(availability(asReviewer, 'comment').allowed, true);
    assert.match(availability(asReviewer, 'submit').reason, /^You need change_control\.change_changerequest to submit/);
    assert.equal(changeRequestContextValue(asReviewer), 'changeRequest;review;comment;');

    const asAuthor = await alice.getChangeRequest(crId);
    assert.equal(availability(asAuthor, 'review').reason, 'You cannot review your own change request.');
    assert.equal(availability(asAuthor, 'return_to_draft').allowed, true);
    assert.equal(availability(asAuthor, 'abandon').allowed, true);
    assert.equal(availability(asAuthor, 'submit').allowed, false);
    assert.equal(availability(asAuthor, 'merge').allowed, false);
    assert.equal(mergeBlockedReason(asAuthor), asAuthor.merge_blocked_reason);
    assert.match(asAuthor.merge_blocked_reason, new RegExp(`Required check "${CHECK_NAME}" is pending`));
    // The author owns the branch: suggestions are hers to apply.
    assert.equal(
      changeRequestContextValue(asAuthor),
      'changeRequest;return_to_draft;abandon;comment;apply_suggestions;edit;sync;',
    );
  });

  it('reads the approval panel, which counts an approval', async () => {
    const before = await bob.getEvaluation(crId);
    assert.equal(before.approved, false);
    assert.deepEqual(
      before.policies.map((p) => [p.name, p.checks]),
      [[POLICY_NAME, [CHECK_NAME]]],
    );
    const rule = before.policies[0].rules[0];
    assert.equal(rule.name, RULE_NAME);
    assert.deepEqual([rule.approvals, rule.min_reviews, rule.satisfied], [0, 1, false]);
    assert.deepEqual(
      rule.eligible_users.map((u) => u.username),
      ['bob'],
    );
    assert.deepEqual(
      rule.outstanding_reviewers.map((u) => u.username),
      ['bob'],
    );
    assert.equal(before.reasons.length, 1);
    assert.match(before.reasons[0], /Network team/);

    await bob.createReview({ change_request: crId, decision: 'approve', comment: 'Looks right.' });
    const after = await alice.getEvaluation(crId);
    assert.equal(after.approved, true);
    assert.equal(after.status, 'approved');
    assert.deepEqual(
      after.policies[0].rules[0].approvers.map((u) => u.username),
      ['bob'],
    );
    assert.deepEqual(after.reasons, []);
  });

  it("moves a request through its lifecycle; a move that does not apply is a conflict with the service's reason", async () => {
    assert.equal((await alice.lifecycle(crId, 'return-to-draft')).status, 'draft');
    const again = await rejects(alice.lifecycle(crId, 'return-to-draft'), 'conflict');
    assert.equal(again.status, 409);
    assert.ok(again.message.length > 10 && !/HTTP 409/.test(again.message), again.message);
    assert.match(presentError('Returning to draft', again).message, /^Returning to draft was refused: /);
    assert.equal((await alice.lifecycle(crId, 'submit')).status, 'needs-review');
    await rejects(alice.lifecycle(crId, 'submit'), 'conflict');
    assert.equal((await alice.lifecycle(crId, 'abandon')).status, 'abandoned');
    assert.equal((await alice.lifecycle(crId, 'reopen')).status, 'draft');
    // Not the reviewer's to move.
    await rejects(bob.lifecycle(crId, 'submit'), 'forbidden');
  });

  it('records reviews: a second one is refused and the existing one updated; own requests and reject without a comment are refused', async () => {
    const first = await bob.createReview({ change_request: crId, decision: 'comment', comment: 'Why R2?' });
    assert.equal(first.reviewer.username, 'bob');
    const second = await rejects(
      bob.createReview({ change_request: crId, decision: 'approve', comment: '' }),
      'invalid',
    );
    assert.equal(second.status, 400);
    const updated = await bob.updateReview(first.id, { decision: 'approve', comment: 'Fine, R2 it is.' });
    assert.equal(updated.decision, 'approve');
    assert.deepEqual(
      (await alice.listReviews(crId)).map((r) => [r.reviewer.username, r.decision, r.stale]),
      [['bob', 'approve', false]],
    );
    assert.deepEqual(
      (await bob.listMyReviews(world.reviewer.id)).map((r) => r.id),
      [first.id],
    );
    assert.deepEqual(await alice.listMyReviews(world.author.id), []);
    assert.equal((await bob.getChangeRequest(crId)).status, 'approved');

    await rejects(alice.createReview({ change_request: crId, decision: 'approve', comment: '' }), 'invalid');
    const svc2 = await rejects(
      bob.request('POST', '/api/plugins/change-control/reviews/', {
        change_request: world.draft.id,
        decision: 'reject',
        comment: '',
      }),
      'invalid',
    );
    assert.equal(svc2.status, 400);
    // The webview's path: performWrite refuses it before asking, and updates an existing review.
    await assert.rejects(
      performWrite(bob, crId, {
        type: 'submitReview',
        opId: 'op',
        decision: 'reject',
        comment: ' ',
        reviewId: first.id,
      }),
      /needs a comment/,
    );
    await performWrite(bob, crId, {
      type: 'submitReview',
      opId: 'op',
      decision: 'reject',
      comment: 'Use R3.',
      reviewId: first.id,
    });
    assert.equal((await bob.getChangeRequest(crId)).status, 'rejected');
  });

  it('comments: anchored to a change, replies (even to replies) flattened into one thread, resolved, deleted', async () => {
    const sw1 = world.changes.sw1;
    const root = await bob.createComment({
      change_request: crId,
      change_diff: sw1,
      text: 'Why **R2** and not R3?',
      parent: null,
    });
    assert.deepEqual(
      [root.change_diff, root.parent, root.author.username, root.change_label],
      [sw1, null, 'bob', 'sw1'],
    );
    assert.match(root.text_html, /<strong>R2<\/strong>/);
    const reply = await alice.createComment({
      change_request: crId,
      change_diff: sw1,
      text: 'R3 is full.',
      parent: root.id,
    });
    assert.equal(reply.parent, root.id);
    const nested = await bob.createComment({
      change_request: crId,
      change_diff: sw1,
      text: 'Fair enough.',
      parent: reply.id,
    });
    assert.equal(nested.parent, root.id, 'a reply to a reply is flattened into the thread');
    assert.equal(nested.change_diff, sw1);

    const comments = await alice.listComments(crId);
    assert.deepEqual(
      comments.map((c) => c.id).sort((a, b) => a - b),
      [root.id, reply.id, nested.id],
    );
    const threads = threadsByChange(comments).get(sw1)!;
    assert.equal(threads.length, 1);
    assert.deepEqual(
      threads[0].replies.map((c) => c.id),
      [reply.id, nested.id],
    );

    // A reply on another change than its parent's, and a change outside the branch, are refused.
    await rejects(
      bob.createComment({ change_request: crId, change_diff: world.changes.sw2, text: 'x', parent: root.id }),
      'invalid',
    );
    const other = await admin.listChanges(world.draft.branchId);
    await rejects(bob.createComment({ change_request: crId, change_diff: other[0].id, text: 'x' }), 'invalid');

    assert.equal((await bob.updateComment(root.id, { resolved: true })).resolved, true);
    assert.equal((await bob.updateComment(nested.id, { text: 'Fair enough, R2.' })).text, 'Fair enough, R2.');
    await rejects(alice.updateComment(nested.id, { text: 'not mine' }), 'forbidden');
    await bob.deleteComment(root.id);
    assert.deepEqual(await alice.listComments(crId), [], 'deleting a thread root removes its replies');
  });

  it('loads everything the webview shows in one snapshot', async () => {
    await bob.createComment({ change_request: crId, change_diff: world.changes.sw1, text: 'Why R2?' });
    const me = await bob.me();
    const snap = await loadSnapshot(bob, crId, me, () => new Date('2026-11-01T10:00:00Z'));
    assert.deepEqual(snap.problems, []);
    assert.equal(snap.changeRequest.id, crId);
    assert.deepEqual(
      snap.changes.map((c) => [c.object_repr, c.action, c.conflicts]),
      [
        ['sw1', 'update', ['rack']],
        ['sw2', 'create', null],
      ],
    );
    const sw1 = snap.changes[0];
    assert.deepEqual([sw1.original?.rack, sw1.modified?.rack, sw1.current?.rack], ['R1', 'R2', 'R3']);
    assert.deepEqual(
      snap.checks.map((c) => [c.name, c.status, c.required, c.blocks_merge]),
      [[CHECK_NAME, 'pending', true, true]],
    );
    assert.equal(snap.evaluation?.policies[0].rules[0].name, RULE_NAME);
    assert.equal(snap.comments.length, 1);
    assert.deepEqual(snap.me, { id: world.reviewer.id, username: 'bob', display: 'bob' });
    // The status moves come from the changelog: the creation, then whatever moved the status since.
    const asAdmin = await loadSnapshot(admin, crId, me);
    const moves = asAdmin.history!.map((m) => [m.from, m.to]);
    assert.deepEqual(moves[0], [null, 'draft']);
    assert.ok(
      moves.some(([from, to]) => from === 'draft' && to === 'needs-review'),
      JSON.stringify(moves),
    );
  });

  it("checks: the policy's reported check is required and pending; a re-run keeps it; only a permitted caller re-runs", async () => {
    const [check] = await alice.listChecks(crId);
    assert.deepEqual(
      [check.name, check.status, check.required, check.blocks_merge, check.completed],
      [CHECK_NAME, 'pending', true, true, null],
    );
    const rerun = await ci.runChecks(crId);
    assert.equal(rerun.id, crId);
    assert.equal((await alice.listChecks(crId))[0].status, 'pending', 'a refresh never overwrites a reported check');
    await rejects(bob.runChecks(crId), 'forbidden');
    await reportCheck(world, 'success', 'build 1042 green');
    const [passed] = await alice.listChecks(crId);
    assert.deepEqual(
      [passed.status, passed.summary, passed.blocks_merge, passed.details_url],
      ['success', 'build 1042 green', false, 'https://ci.example.net/jobs/1042'],
    );
  });

  it("merge: refused with the gate's reason (409 detail) and nothing merged; once every gate clears, the conflict with main still asks for an acknowledgement; merged acknowledging it, the request completes", async () => {
    const refused = await rejects(alice.mergeBranch(world.branch.id), 'conflict');
    assert.equal(refused.status, 409);
    const reason = (await alice.getChangeRequest(crId)).merge_blocked_reason;
    assert.equal(refused.message, reason, 'the 409 detail is the message');
    assert.match(refused.message, /Required check "ci\/build" is pending\./);
    assert.equal(
      presentError('Merging "Move sw1 to rack R2"', refused).message,
      `Merging "Move sw1 to rack R2" was refused: ${reason}`,
    );
    assert.equal((await alice.getBranch(world.branch.id)).status, 'ready');

    await bob.createReview({ change_request: crId, decision: 'approve', comment: '' });
    const approved = await alice.getChangeRequest(crId);
    assert.equal(approved.status, 'approved');
    // The world's sw1 conflicts with main (rack): named last, after the gate's reasons.
    const conflicts =
      'The branch conflicts with main (sw1: rack); merge it by hand acknowledging the conflicts, or sync the branch.';
    assert.equal(approved.merge_blocked_reason, `Required check "ci/build" is pending. ${conflicts}`);
    assert.equal(
      (await rejects(alice.mergeBranch(world.branch.id), 'conflict')).message,
      `Required check "ci/build" is pending. ${conflicts}`,
    );

    await reportCheck(world, 'success');
    const ready = await alice.getChangeRequest(crId);
    assert.equal(ready.ready_to_merge, false, 'a conflicting branch is not ready to merge by itself');
    assert.equal(ready.merge_blocked_reason, conflicts);
    assert.equal(availability(ready, 'merge').allowed, true);
    assert.deepEqual(ready.actions.merge, { allowed: true, reason: conflicts });
    await rejects(bob.mergeBranch(world.branch.id), 'forbidden');
    assert.match((await rejects(alice.mergeBranch(world.branch.id), 'conflict')).message, /sw1: rack/);

    const acknowledged = await world.author.client.post(`/api/plugins/branching/branches/${world.branch.id}/merge/`, {
      commit: true,
      acknowledge_conflicts: true,
    });
    assert.equal(acknowledged.status, 200, JSON.stringify(acknowledged.body));
    const merged = acknowledged.body as Awaited<ReturnType<ApiClient['mergeBranch']>>;
    assert.equal(merged.commit, true);
    assert.equal(merged.branch.status, 'merged');
    assert.deepEqual(merged.changes.map((c) => [c.object_repr, c.effect]).sort(), [
      ['sw1', 'updated'],
      ['sw2', 'created'],
    ]);
    const done = await alice.getChangeRequest(crId);
    assert.equal(done.status, 'completed');
    assert.equal(availability(done, 'merge').allowed, false);
  });

  it('Recently closed: the last updated first (ordering=-last_updated), not the newest id', async () => {
    svc.clock.advance(3_600_000);
    await alice.lifecycle(world.draft.id, 'abandon'); // the higher id closes first...
    svc.clock.advance(3_600_000);
    await alice.lifecycle(crId, 'abandon'); // ...and the lower id last
    const lists = await loadLists(alice);
    assert.deepEqual(
      lists.closed.map((cr) => cr.id),
      [crId, world.draft.id],
    );
    const group = groupChangeRequests(lists).find((g) => g.id === 'recentlyClosed')!;
    assert.deepEqual(
      group.items.map((cr) => cr.id),
      [crId, world.draft.id],
    );
    const byId = await alice.listSomeChangeRequests({ status: ['abandoned'], ordering: '-id', limit: 20 });
    assert.deepEqual(
      byId.map((cr) => cr.id),
      [world.draft.id, crId],
    );
  });

  it('notifications: the reviewer is told of the submitted request and marks it read', async () => {
    const unread = await bob.listNotifications({ unreadOnly: true });
    const forRequest = unread.results.filter((n) => n.object_id === crId);
    assert.ok(forRequest.length >= 1, JSON.stringify(unread.results));
    const decision = reviewNotificationsToShow(unread.results, 0);
    assert.deepEqual(
      decision.show.map((n) => n.object_id),
      [crId],
    );
    assert.match(decision.show[0].object_repr, /Move sw1 to rack R2/);
    await bob.markNotificationRead(decision.show[0].id);
    assert.equal(
      (await bob.listNotifications({ unreadOnly: true })).results.some((n) => n.id === decision.show[0].id),
      false,
    );
    assert.equal(
      (await alice.listNotifications({ unreadOnly: true })).results.some(
        (n) => n.event_type === 'change_request_review_requested',
      ),
      false,
    );
  });

  it('searches the change-control models', async () => {
    const { results: hits, truncated } = await bob.search('CHG-1042');
    assert.equal(truncated, false);
    assert.ok(
      hits.some((h) => h.object_type === 'change_control.changerequest' && h.id === crId && h.field === 'ref'),
      JSON.stringify(hits),
    );
  });

  it('reads the plugin settings: branch_page_placement defaults to right_page and follows the configuration', async () => {
    assert.deepEqual((await bob.getSettings()).branch_page_placement, ['right_page']);
    await svc.close();
    use(await seeded.restart({ config: { change_control: { branch_page_placement: 'alerts' } } }));
    const settings = await bob.getSettings();
    assert.deepEqual(settings.branch_page_placement, ['alerts']);
    assert.equal(settings.enforce_merge_gate, true);
  });
});
