import assert from 'node:assert/strict';
import { Receiver } from '../../../support/receiver';
import { startService, suiteService, withService } from '../../../support/service';
import { forSuite } from '../../../support/prepared';
import {
  act,
  actor,
  AUTHOR,
  branch,
  BRANCHES,
  created,
  customFieldsLog,
  device,
  openRequest,
  detail,
  expectCustomFieldsRefused,
  expectStatus,
  grant,
  ok,
  REQUESTS,
  review,
  REVIEWS,
} from './fixtures';
import {
  assertRefused,
  editInBranch,
  hookEvents,
  postReview,
  queuedDeliveries,
  recordEvents,
  reviewsOf,
  scene,
  scenePerTest,
  withPermissions,
  world,
  type Scene,
} from './reviews-comments-fixtures';

const evaluationOf = (s: Scene) => ok(s.alice.client.get(`${REQUESTS}${s.cr.id}/evaluation/`), 'evaluation');

describe('change control: review fields', () => {
  const svc = suiteService();
  const s = scenePerTest(svc);

  it('Review fields: a created review carries change_request, decision, comment (Markdown, with comment_html), reviewer and stale', async () => {
    const r = await created(
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment', comment: 'Looks **fine**' }),
    );
    assert.equal(r.change_request, s.cr.id);
    assert.equal(r.decision, 'comment');
    assert.equal(r.comment, 'Looks **fine**');
    assert.equal(r.comment_html, '<p>Looks <strong>fine</strong></p>\n');
    assert.deepEqual(r.reviewer, { id: s.bob.id, username: 'bob', display: 'bob' });
    assert.equal(r.stale, false);
    assert.equal(r.url, `${svc.url}${REVIEWS}${r.id}/`);
    const again = await ok(s.bob.client.get(`${REVIEWS}${r.id}/`));
    assert.deepEqual(again, r);
  });

  it('Review field change_request is required: a review without it is 400 naming the field', async () => {
    assertRefused(await postReview(s.bob.client, { decision: 'approve' }), 'change_request');
    assertRefused(await postReview(s.bob.client, { change_request: null, decision: 'approve' }), 'change_request');
    assertRefused(await postReview(s.bob.client, { change_request: 'one', decision: 'approve' }), 'change_request');
    assert.equal((await reviewsOf(svc, s.cr.id)).length, 0);
  });

  it('Review field change_request: naming a request that does not exist is a validation error (400), never a server error', async () => {
    assertRefused(
      await postReview(s.bob.client, { change_request: 999_999, decision: 'approve' }),
      'change_request',
      /does not exist/,
    );
    assertRefused(await postReview(s.bob.client, { change_request: 2 ** 62, decision: 'approve' }), 'change_request');
    assertRefused(await postReview(s.bob.client, { change_request: -1, decision: 'approve' }), 'change_request');
  });

  it('Review field decision: approve, reject and comment are the values; any other is 400 naming decision', async () => {
    assertRefused(await postReview(s.bob.client, { change_request: s.cr.id, decision: 'lgtm' }), 'decision');
    assertRefused(await postReview(s.bob.client, { change_request: s.cr.id }), 'decision');
    assertRefused(await postReview(s.bob.client, { change_request: s.cr.id, decision: 'APPROVE' }), 'decision');
    for (const [who, decision] of [
      [s.bob, 'approve'],
      [s.carol, 'comment'],
    ] as const) {
      expectStatus(await postReview(who.client, { change_request: s.cr.id, decision }), 201, decision);
    }
    const reviewer = await actor(svc, 'erin', [
      { object_types: ['change_control.review'], actions: ['add', 'view'] },
      { object_types: ['change_control.changerequest'], actions: ['view'] },
    ]);
    expectStatus(
      await postReview(reviewer.client, { change_request: s.cr.id, decision: 'reject', comment: 'no' }),
      201,
      'reject',
    );
    assert.deepEqual((await reviewsOf(svc, s.cr.id)).map((r) => r.decision).sort(), ['approve', 'comment', 'reject']);
  });

  it('Review field comment: a comment over 65,536 characters is 400; a comment is optional for approve and comment', async () => {
    assertRefused(
      await postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment', comment: 'x'.repeat(65_537) }),
      'comment',
    );
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    assert.equal(r.comment, '');
    assert.equal(r.comment_html, '');
  });

  it('Review custom_fields: a free-form JSON object ({} by default) a write replaces whole (PUT leaving it out clears it), shown in detail, list and changelog; anything else is 400 naming it', async () => {
    await expectCustomFieldsRefused((custom_fields) =>
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment', custom_fields }),
    );
    const r = await created(
      postReview(s.bob.client, {
        change_request: s.cr.id,
        decision: 'comment',
        custom_fields: { checklist: [true, false] },
      }),
    );
    assert.deepEqual(r.custom_fields, { checklist: [true, false] });
    assert.deepEqual(
      (await created(postReview(s.carol.client, { change_request: s.cr.id, decision: 'comment' }))).custom_fields,
      {},
    );
    assert.deepEqual(
      (await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { custom_fields: { checklist: [true, true] } })))
        .custom_fields,
      { checklist: [true, true] },
    );
    assert.deepEqual((await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { comment: 'kept' }))).custom_fields, {
      checklist: [true, true],
    });
    assert.deepEqual((await ok(s.bob.client.get(`${REVIEWS}${r.id}/`))).custom_fields, { checklist: [true, true] });
    assert.deepEqual((await ok(s.bob.client.get(`${REVIEWS}?id=${r.id}`))).results[0].custom_fields, {
      checklist: [true, true],
    });
    assert.deepEqual(
      (await ok(s.bob.client.put(`${REVIEWS}${r.id}/`, { decision: 'comment', comment: 'kept' }))).custom_fields,
      {},
    );
    assert.deepEqual(await customFieldsLog(svc.admin, 'change_control.review', r.id), [
      [undefined, { checklist: [true, false] }],
      [{ checklist: [true, false] }, { checklist: [true, true] }],
      [{ checklist: [true, true] }, { checklist: [true, true] }],
      [{ checklist: [true, true] }, {}],
    ]);
    await expectCustomFieldsRefused((custom_fields) => s.bob.client.patch(`${REVIEWS}${r.id}/`, { custom_fields }));
  });

  it('Review field stale is read-only: sending it on create or edit changes nothing', async () => {
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve', stale: true }));
    assert.equal(r.stale, false);
    const edited = await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { stale: true }));
    assert.equal(edited.stale, false);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
  });

  it('Review field change_request cannot be moved by an edit: the review stays on its request', async () => {
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment' }));
    const edited = await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { change_request: 12345, decision: 'approve' }));
    assert.equal(edited.change_request, s.cr.id);
    assert.equal(edited.decision, 'approve');
  });
});

describe('change control: review rules', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  it("Review rule 1: naming another reviewer is not an error; the review is recorded as the caller's", async () => {
    const s = await scene(w);
    const r = await created(
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve', reviewer: s.carol.id }),
    );
    assert.equal(r.reviewer.id, s.bob.id);
    const rows = await reviewsOf(svc, s.cr.id);
    assert.deepEqual(
      rows.map((x) => x.reviewer.id),
      [s.bob.id],
    );
    // Carol has not reviewed: her own review is still accepted.
    expectStatus(
      await postReview(s.carol.client, { change_request: s.cr.id, decision: 'comment', reviewer: { id: s.bob.id } }),
      201,
    );
    // Naming the requester does not make it a self-review, and naming someone on an edit changes nothing either.
    const edited = await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { reviewer: s.alice.id, comment: 'still me' }));
    assert.equal(edited.reviewer.id, s.bob.id);
    const evaluation = await evaluationOf(s);
    assert.deepEqual(
      evaluation.policies[0].rules[0].approvers.map((u: any) => u.username),
      ['bob'],
    );
  });

  it('Review rule 2 / Errors: a user cannot review their own change request (400)', async () => {
    const s = await scene(w);
    await grant(svc, { users: [s.alice.id] }, { object_types: ['change_control.review'], actions: ['add', 'change'] });
    for (const decision of ['approve', 'comment', 'reject'] as const) {
      assertRefused(
        await postReview(s.alice.client, { change_request: s.cr.id, decision, comment: 'mine' }),
        null,
        /own change request/,
      );
    }
    assert.equal((await reviewsOf(svc, s.cr.id)).length, 0);
    // A superuser is no exception: the admin's own request cannot be reviewed by the admin.
    const b = await created(svc.admin.post(BRANCHES, { name: 'admin-work' }));
    const own = await created(svc.admin.post(REQUESTS, { branch: b.id }));
    assertRefused(await review(svc.admin, own.id, 'approve'), null, /own change request/);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
  });

  it('Review rule 3 / Errors: a second review by the same user is refused (400) and the existing one is edited instead', async () => {
    const s = await scene(w);
    const first = await created(
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment', comment: 'one question' }),
    );
    const second = await postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' });
    assertRefused(second, null, new RegExp(`already reviewed.*review ${first.id}.*edit`));
    assert.deepEqual(
      (await reviewsOf(svc, s.cr.id)).map((r) => [r.id, r.decision]),
      [[first.id, 'comment']],
    );
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');

    const edited = await ok(s.bob.client.patch(`${REVIEWS}${first.id}/`, { decision: 'approve' }));
    assert.equal(edited.id, first.id);
    assert.equal(edited.decision, 'approve');
    assert.equal(edited.comment, 'one question');
    assert.deepEqual(
      (await reviewsOf(svc, s.cr.id)).map((r) => [r.id, r.decision]),
      [[first.id, 'approve']],
    );
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
    // Still refused once the first review has gone stale.
    await editInBranch(s);
    assertRefused(
      await postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }),
      null,
      /already reviewed/,
    );
  });

  it("Review rule 3: PUT replaces the existing review's decision and comment (an omitted comment is cleared)", async () => {
    const s = await scene(w);
    const first = await created(
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: 'rename it' }),
    );
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'rejected');
    assertRefused(await s.bob.client.put(`${REVIEWS}${first.id}/`, { decision: 'reject' }), 'comment');
    const replaced = await ok(s.bob.client.put(`${REVIEWS}${first.id}/`, { decision: 'approve' }));
    assert.equal(replaced.decision, 'approve');
    assert.equal(replaced.comment, '');
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
    assertRefused(await s.bob.client.put(`${REVIEWS}${first.id}/`, { comment: 'no decision' }), 'decision');
  });

  it('Review rule 4: an approval against a draft moves nothing, and counts once the draft is submitted', async () => {
    const s = await scene(w, { submit: false });
    assert.equal(s.cr.status, 'draft');
    const events = recordEvents(svc);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    const held = await detail(s.alice.client, s.cr.id);
    assert.equal(held.status, 'draft');
    assert.equal(held.ready_to_merge, false);
    assert.equal(held.gates_cleared, false);
    assert.match(held.merge_blocked_reason, /draft/);
    assert.ok(
      (await ok(s.alice.client.get(`${REQUESTS}?status=draft&limit=1000`))).results.some((x: any) => x.id === s.cr.id),
    );
    assert.deepEqual(
      events.filter((e) => e.event.startsWith('change_request_')),
      [],
      'no transition',
    );
    // The merge gate refuses the branch.
    expectStatus(await svc.admin.post(`/api/plugins/branching/branches/${s.branchId}/merge/`, { commit: true }), 409);

    const submitted = await ok(act(s.alice.client, s.cr.id, 'submit'));
    assert.equal(submitted.status, 'approved');
    assert.equal(submitted.ready_to_merge, true, submitted.merge_blocked_reason);
    const evaluation = await evaluationOf(s);
    assert.deepEqual(
      evaluation.policies[0].rules[0].approvers.map((u: any) => u.id),
      [s.bob.id],
    );
    assert.equal((await ok(s.bob.client.get(`${REVIEWS}${r.id}/`))).stale, false);
  });

  it('Review rule 4: a rejection against a draft moves nothing, and rejects once the draft is submitted', async () => {
    const s = await scene(w, { submit: false });
    await created(
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: 'Use the naming scheme.' }),
    );
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'draft');
    assert.equal((await ok(act(s.alice.client, s.cr.id, 'submit'))).status, 'rejected');
  });

  it('Review rule 4: a review given after return-to-draft moves nothing until the request is resubmitted', async () => {
    const s = await scene(w);
    await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
    assert.equal((await ok(act(s.alice.client, s.cr.id, 'return-to-draft'))).status, 'draft');
    await created(
      postReview(s.carol.client, { change_request: s.cr.id, decision: 'reject', comment: 'Wait for the window.' }),
    );
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'draft');
    assert.equal((await ok(act(s.alice.client, s.cr.id, 'submit'))).status, 'rejected');
  });

  it('Review rule 5: editing the branch makes the review stale, drops the approval, and the request leaves approved', async () => {
    const s = await scene(w);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve', comment: 'ok' }));
    const before = await detail(s.alice.client, s.cr.id);
    assert.equal(before.status, 'approved');
    assert.equal(before.approved, true);

    await editInBranch(s);
    const stale = await ok(s.bob.client.get(`${REVIEWS}${r.id}/`));
    assert.equal(stale.stale, true);
    assert.equal(stale.decision, 'approve', 'the review itself is kept');
    const after = await detail(s.alice.client, s.cr.id);
    assert.equal(after.status, 'needs-review');
    assert.equal(after.approved, false);
    assert.equal(after.ready_to_merge, false);
    const evaluation = await evaluationOf(s);
    assert.equal(evaluation.policies[0].rules[0].approvals, 0);
    assert.deepEqual(
      evaluation.stale_reviews.map((x: any) => x.id),
      [r.id],
    );
    assert.deepEqual(
      (await ok(s.alice.client.get(`${REVIEWS}?change_request_id=${s.cr.id}&stale=true`))).results.map(
        (x: any) => x.id,
      ),
      [r.id],
    );
    // The merge gate refuses what was approved before the edit.
    expectStatus(await svc.admin.post(`/api/plugins/branching/branches/${s.branchId}/merge/`, { commit: true }), 409);
  });

  it('Review rule 5: the reviewer re-affirming by editing their review makes it count again', async () => {
    const s = await scene(w);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    await editInBranch(s);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
    // An edit that names nothing new is still a fresh decision on the branch as it is now.
    const reaffirmed = await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, {}));
    assert.equal(reaffirmed.stale, false);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
    // Again, with the decision named.
    await editInBranch(s, 1, { status: 'active' });
    assert.equal((await ok(s.bob.client.get(`${REVIEWS}${r.id}/`))).stale, true);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
    await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { decision: 'approve' }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
  });

  it('Review rule 5: a stale rejection stops rejecting; only the branch moving makes a review stale', async () => {
    const s = await scene(w);
    await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: 'wrong status' }));
    const carol = await created(
      postReview(s.carol.client, { change_request: s.cr.id, decision: 'comment', comment: 'hm' }),
    );
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'rejected');
    // Editing the request (not its branch) leaves the reviews live.
    await ok(s.alice.client.patch(`${REQUESTS}${s.cr.id}/`, { description: 'more words' }));
    assert.equal((await reviewsOf(svc, s.cr.id)).filter((r) => r.stale).length, 0);
    await editInBranch(s);
    assert.deepEqual(
      (await reviewsOf(svc, s.cr.id)).map((r) => r.stale),
      [true, true],
    );
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
    await ok(s.carol.client.patch(`${REVIEWS}${carol.id}/`, { decision: 'approve' }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
  });

  it('Review rule 6: only the author of a review may edit it (403 for anyone else, a superuser included)', async () => {
    const s = await scene(w);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: 'no' }));
    for (const [who, client] of [
      ['carol', s.carol.client],
      ['admin', svc.admin],
    ] as const) {
      const patched = await client.patch(`${REVIEWS}${r.id}/`, { decision: 'approve' });
      expectStatus(patched, 403, who);
      assert.match(patched.body.detail, /Only the author/);
      expectStatus(await client.put(`${REVIEWS}${r.id}/`, { decision: 'approve' }), 403, `${who} put`);
    }
    const kept = await ok(svc.admin.get(`${REVIEWS}${r.id}/`));
    assert.equal(kept.decision, 'reject');
    assert.equal(kept.comment, 'no');
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'rejected');
    assert.equal((await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { decision: 'approve' }))).decision, 'approve');
  });

  it('Review: an edit that changes nothing writes nothing (no changelog entry)', async () => {
    const s = await scene(w);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment', comment: 'a' }));
    const changelog = () =>
      ok(
        svc.admin.get(`/api/core/object-changes/?changed_object_type=change_control.review&changed_object_id=${r.id}`),
      );
    assert.equal((await changelog()).count, 1);
    // Each answer is the review as a read right after shows it.
    const read = () => ok(s.bob.client.get(`${REVIEWS}${r.id}/`));
    assert.deepEqual(
      await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { decision: 'comment', comment: 'a' })),
      await read(),
    );
    assert.equal((await changelog()).count, 1);
    assert.deepEqual(await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { comment: 'b' })), await read());
    assert.equal((await changelog()).count, 2);
    const tagged = await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { comment: 'b', tags: [] }));
    assert.deepEqual(tagged, await read());
  });
});

describe('change control: independent approval (who changed the branch cannot approve it)', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));
  before(async () => {
    // Carol may also work on others' branches: she edits devices and holds change_branch.
    await grant(
      svc,
      { users: [w.carol.id] },
      { object_types: ['dcim.device', 'branching.branch'], actions: ['change'] },
    );
  });

  const CONTRIBUTOR_DETAIL =
    'You changed objects on this branch, so your approval would not be independent: an approval must come from someone who did not change the branch. You may still request changes or comment.';
  const schemaOf = async (s: Scene) => (await ok(svc.admin.get(`${BRANCHES}${s.branchId}/`))).schema_id as string;

  it('Independent approval: a reviewer who changed objects on the branch cannot approve it (400 saying why); rejecting and commenting stay allowed', async () => {
    const s = await scene(w);
    await ok(
      s.carol.client.inBranch(await schemaOf(s)).patch(`/api/dcim/devices/${s.devices[0]!.id}/`, { status: 'active' }),
      'carol edits',
    );
    const refused = await postReview(s.carol.client, { change_request: s.cr.id, decision: 'approve', comment: 'lgtm' });
    expectStatus(refused, 400);
    assert.deepEqual(refused.body, { detail: CONTRIBUTOR_DETAIL });
    assert.equal((await reviewsOf(svc, s.cr.id)).length, 0, 'nothing written');
    const comment = await created(
      postReview(s.carol.client, { change_request: s.cr.id, decision: 'comment', comment: 'I moved it to active.' }),
    );
    // Turning the comment into an approval is refused the same way; a rejection is accepted and rejects.
    const edit = await s.carol.client.patch(`${REVIEWS}${comment.id}/`, { decision: 'approve' });
    expectStatus(edit, 400);
    assert.deepEqual(edit.body, { detail: CONTRIBUTOR_DETAIL });
    await ok(
      s.carol.client.patch(`${REVIEWS}${comment.id}/`, { decision: 'reject', comment: 'On second thought, no.' }),
    );
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'rejected');
    // Someone who changed nothing approves as before.
    await ok(s.carol.client.patch(`${REVIEWS}${comment.id}/`, { decision: 'comment' }));
    await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
  });

  it('Independent approval: an approval stops counting the moment its reviewer writes to the branch; approved, ready_to_merge and merge_blocked_reason follow, and the evaluation says why', async () => {
    const s = await scene(w);
    const approval = await created(postReview(s.carol.client, { change_request: s.cr.id, decision: 'approve' }));
    const before = await detail(s.alice.client, s.cr.id);
    assert.equal(before.approved, true);
    assert.equal(before.ready_to_merge, true);

    await ok(
      s.carol.client.inBranch(await schemaOf(s)).patch(`/api/dcim/devices/${s.devices[1]!.id}/`, { status: 'active' }),
      'carol edits',
    );
    const after = await detail(s.alice.client, s.cr.id);
    assert.equal(after.status, 'needs-review');
    assert.equal(after.approved, false);
    assert.equal(after.ready_to_merge, false);
    assert.match(
      after.merge_blocked_reason,
      /Rule "netops" of policy "Devices" has 0 of 1 required approval\. 1 approval does not count: its reviewer changed the branch\./,
    );
    const rule = (await evaluationOf(s)).policies[0].rules[0];
    assert.equal(rule.approvals, 0);
    assert.deepEqual(rule.uncounted_approvals, [
      {
        review: approval.id,
        reviewer: { id: s.carol.id, username: 'carol', display: 'carol' },
        reason: 'contributor',
        detail: 'carol changed objects on this branch; an approval must come from someone who did not.',
      },
    ]);
    assert.deepEqual(
      rule.outstanding_reviewers.map((u: { id: number }) => u.id),
      [s.bob.id],
      'carol no longer owes an approval she cannot give',
    );
    // Re-affirming the approval is refused; the merge gate refuses the branch.
    const reaffirm = await s.carol.client.patch(`${REVIEWS}${approval.id}/`, {});
    expectStatus(reaffirm, 400);
    assert.deepEqual(reaffirm.body, { detail: CONTRIBUTOR_DETAIL });
    expectStatus(await svc.admin.post(`${BRANCHES}${s.branchId}/merge/`, { commit: true }), 409);
    assert.equal(
      (await ok(svc.admin.get(`${REQUESTS}?id=${s.cr.id}`))).results[0].approved,
      false,
      'the list follows too',
    );
  });

  it('Independent approval: the evaluation lists stale approvals per rule as not counted (reason stale) until they are given again', async () => {
    const s = await scene(w);
    const approval = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    assert.deepEqual((await evaluationOf(s)).policies[0].rules[0].uncounted_approvals, []);
    await editInBranch(s);
    assert.deepEqual((await evaluationOf(s)).policies[0].rules[0].uncounted_approvals, [
      {
        review: approval.id,
        reviewer: { id: s.bob.id, username: 'bob', display: 'bob' },
        reason: 'stale',
        detail: 'The branch changed after bob approved; the approval counts again once they review again.',
      },
    ]);
    await ok(s.bob.client.patch(`${REVIEWS}${approval.id}/`, {}));
    const rule = (await evaluationOf(s)).policies[0].rules[0];
    assert.deepEqual(rule.uncounted_approvals, []);
    assert.equal(rule.approvals, 1);
  });

  it('Independent approval: contributors_can_approve restores the plain behaviour', async () => {
    await withService(
      startService({ config: { change_control: { contributors_can_approve: true } } }),
      async (plain) => {
        const pw = await world(plain);
        await grant(
          plain,
          { users: [pw.carol.id] },
          { object_types: ['dcim.device', 'branching.branch'], actions: ['change'] },
        );
        const s = await scene(pw);
        const schema = (await ok(plain.admin.get(`${BRANCHES}${s.branchId}/`))).schema_id;
        await ok(s.carol.client.inBranch(schema).patch(`/api/dcim/devices/${s.devices[0]!.id}/`, { status: 'active' }));
        await created(postReview(s.carol.client, { change_request: s.cr.id, decision: 'approve' }));
        assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
        assert.deepEqual(
          (await ok(s.alice.client.get(`${REQUESTS}${s.cr.id}/evaluation/`))).policies[0].rules[0].uncounted_approvals,
          [],
        );
      },
    );
  });

  it("Independent approval, the attack reported: a user holding only dcim.change_device and add_review cannot edit someone else's branch and then approve it into main", async () => {
    const s = await scene(w);
    const mallory = await actor(svc, `mallory-${s.cr.id}`, [
      { object_types: ['dcim.device'], actions: ['view', 'change'] },
      {
        object_types: ['change_control.review', 'change_control.changerequest', 'branching.branch'],
        actions: ['view', 'add'],
      },
    ]);
    await grant(svc, { users: [mallory.id] }, { object_types: ['change_control.review'], actions: ['add'] });
    const schema = await schemaOf(s);
    const write = await mallory.client
      .inBranch(schema)
      .patch(`/api/dcim/devices/${s.devices[0]!.id}/`, { status: 'compromised' });
    expectStatus(write, 403);
    assert.match(write.body.detail, /You may not write to branch/);
    const changes = (await ok(svc.admin.get(`/api/plugins/branching/changes/?branch_id=${s.branchId}`))).results;
    assert.ok(changes.every((c: { modified: { status?: string } }) => c.modified.status !== 'compromised'));
  });
});

describe('change control: reject (Request changes) needs a comment', () => {
  const svc = suiteService();
  const s = scenePerTest(svc);

  it('Review field comment / Errors: a review with decision reject (Request changes) and no comment is refused (400 naming comment)', async () => {
    for (const body of [{}, { comment: '' }, { comment: '   \n\t' }]) {
      const res = await postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', ...body });
      assertRefused(res, 'comment', /request changes/i);
    }
    assert.equal((await reviewsOf(svc, s.cr.id)).length, 0);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
  });

  it('reject with a comment is accepted, shown as changes requested, and rejects the request', async () => {
    const r = await created(
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: 'Use `core-` names.' }),
    );
    assert.match(r.display, /Changes requested by bob/);
    assert.equal(r.comment_html, '<p>Use <code>core-</code> names.</p>\n');
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'rejected');
    const evaluation = await evaluationOf(s);
    assert.deepEqual(
      evaluation.rejections.map((x: any) => [x.reviewer.username, x.comment_html]),
      [['bob', '<p>Use <code>core-</code> names.</p>\n']],
    );
  });

  it('an edit to reject without a comment, or clearing the comment of a reject, is refused (400)', async () => {
    const approve = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    assertRefused(await s.bob.client.patch(`${REVIEWS}${approve.id}/`, { decision: 'reject' }), 'comment');
    assert.equal((await ok(s.bob.client.get(`${REVIEWS}${approve.id}/`))).decision, 'approve');
    const rejected = await ok(
      s.bob.client.patch(`${REVIEWS}${approve.id}/`, { decision: 'reject', comment: 'On second thought, no.' }),
    );
    assert.equal(rejected.decision, 'reject');
    assertRefused(await s.bob.client.patch(`${REVIEWS}${approve.id}/`, { comment: ' ' }), 'comment');
    assert.equal((await ok(s.bob.client.get(`${REVIEWS}${approve.id}/`))).comment, 'On second thought, no.');
  });
});

describe('change control: review_submitted', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));
  let receiver: Receiver;
  before(async () => {
    receiver = await Receiver.start();
    await hookEvents(svc, receiver.url(), ['review_submitted']);
  });
  after(async () => receiver.close());
  const deliveriesFor = async (crId: number) =>
    (await queuedDeliveries(svc, 'review_submitted')).filter((d) => d.body.data.id === crId);

  it("Events: review_submitted fires once per review write, with the change request as data, delivered by an event rule's webhook", async () => {
    const s = await scene(w);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment', comment: 'q' }));
    assert.equal((await deliveriesFor(s.cr.id)).length, 1);

    const delivered = (await receiver.waitFor(1)).map((d) => JSON.parse(d.body)).find((p) => p.data.id === s.cr.id);
    assert.ok(delivered, 'the receiver got the event');
    assert.equal(delivered.event, 'review_submitted');
    assert.equal(delivered.object_type, 'change_control.changerequest');
    assert.equal(delivered.request.user, 'bob');
    assert.equal(typeof delivered.request.id, 'string');

    // An edit is a write: once more.
    await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { decision: 'approve' }));
    assert.equal((await deliveriesFor(s.cr.id)).length, 2);
    // Refused writes and an edit that changes nothing fire nothing.
    expectStatus(await postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }), 400);
    expectStatus(await postReview(s.alice.client, { change_request: s.cr.id, decision: 'approve' }), 403);
    expectStatus(await s.carol.client.patch(`${REVIEWS}${r.id}/`, { decision: 'reject', comment: 'x' }), 403);
    await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { decision: 'approve' }));
    assert.equal((await deliveriesFor(s.cr.id)).length, 2);
    // Another reviewer's review: once more, for that write.
    await created(postReview(s.carol.client, { change_request: s.cr.id, decision: 'approve' }));
    const all = await deliveriesFor(s.cr.id);
    assert.deepEqual(
      all.map((d) => d.body.request.user),
      ['bob', 'bob', 'carol'],
    );
  });

  it('Events: review_submitted fires once per write in process too, alongside the transition it causes', async () => {
    const s = await scene(w);
    const events = recordEvents(svc);
    await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    const mine = events.filter(
      (e) => e.objectType === 'change_control.changerequest' && e.objectId === s.cr.id && e.event !== 'object_updated',
    );
    assert.deepEqual(
      mine.map((e) => e.event),
      ['review_submitted', 'change_request_approved'],
    );
  });

  it('Events: a review against a draft still fires review_submitted, and no transition', async () => {
    const s = await scene(w, { submit: false });
    const events = recordEvents(svc);
    await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    const mine = events.filter(
      (e) => e.objectType === 'change_control.changerequest' && e.objectId === s.cr.id && e.event !== 'object_updated',
    );
    assert.deepEqual(
      mine.map((e) => e.event),
      ['review_submitted'],
    );
  });
});

describe('change control: parallel reviews', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc, { minReviews: 2 }));

  it('Concurrency: ten parallel reviews by one user on one request create exactly one review (one 201, nine 400)', async () => {
    const s = await scene(w);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postReview(s.bob.client, {
          change_request: s.cr.id,
          decision: i % 2 ? 'approve' : 'comment',
          comment: `try ${i}`,
        }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, ...Array(9).fill(400)], JSON.stringify(answers.map((a) => a.body)));
    for (const refused of answers.filter((a) => a.status === 400))
      assert.match(JSON.stringify(refused.body), /already reviewed/);
    const rows = await reviewsOf(svc, s.cr.id);
    assert.equal(rows.length, 1);
    const winner = answers.find((a) => a.status === 201)!.body;
    assert.equal(rows[0].id, winner.id);
    assert.equal(rows[0].decision, winner.decision);
  });

  it('Concurrency: parallel reviews by different users all land, one each', async () => {
    const s = await scene(w);
    const answers = await Promise.all(
      [s.bob, s.carol, s.bob, s.carol].map((who) =>
        postReview(who.client, { change_request: s.cr.id, decision: 'approve' }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 201, 400, 400]);
    assert.deepEqual((await reviewsOf(svc, s.cr.id)).map((r) => r.reviewer.username).sort(), ['bob', 'carol']);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
  });
});

describe('change control: reviews on closed requests, withdrawing reviews, lists', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  it('Decision: a review on an abandoned request is refused (400), and so are edits and deletions; after reopen they are accepted again', async () => {
    const s = await scene(w);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment', comment: 'hm' }));
    await ok(act(svc.admin, s.cr.id, 'abandon'));
    assertRefused(
      await postReview(s.carol.client, { change_request: s.cr.id, decision: 'approve' }),
      null,
      /abandoned/,
    );
    assertRefused(await s.bob.client.patch(`${REVIEWS}${r.id}/`, { decision: 'approve' }), null, /abandoned/);
    assertRefused(await s.bob.client.delete(`${REVIEWS}${r.id}/`), null, /abandoned/);
    assert.equal((await ok(s.bob.client.get(`${REVIEWS}${r.id}/`))).decision, 'comment');
    await ok(act(svc.admin, s.cr.id, 'reopen'));
    await ok(s.bob.client.patch(`${REVIEWS}${r.id}/`, { decision: 'approve' }));
    expectStatus(await postReview(s.carol.client, { change_request: s.cr.id, decision: 'approve' }), 201);
  });

  it('Decision: a completed request keeps its reviews as history: no new review, no edit, no deletion (400)', async () => {
    const s = await scene(w);
    const r = await created(
      postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve', comment: 'ship it' }),
    );
    await ok(svc.admin.post(`/api/plugins/branching/branches/${s.branchId}/merge/`, { commit: true }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'completed');
    assertRefused(
      await postReview(s.carol.client, { change_request: s.cr.id, decision: 'approve' }),
      null,
      /completed/,
    );
    assertRefused(
      await s.bob.client.patch(`${REVIEWS}${r.id}/`, { decision: 'reject', comment: 'too late' }),
      null,
      /completed/,
    );
    assertRefused(await s.bob.client.put(`${REVIEWS}${r.id}/`, { decision: 'comment' }), null, /completed/);
    assertRefused(await s.bob.client.delete(`${REVIEWS}${r.id}/`), null, /completed/);
    const kept = await ok(s.bob.client.get(`${REVIEWS}${r.id}/`));
    assert.equal(kept.decision, 'approve');
    assert.equal(kept.comment, 'ship it');
  });

  it('Decision: the author withdraws their own review (204); the approval no longer counts', async () => {
    const s = await scene(w);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'approved');
    expectStatus(await s.bob.client.delete(`${REVIEWS}${r.id}/`), 204);
    assert.equal((await s.bob.client.get(`${REVIEWS}${r.id}/`)).status, 404);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
    // Withdrawn, bob may review afresh.
    expectStatus(await postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment' }), 201);
  });

  it('Reviews are records: nobody but its reviewer deletes a review — not another reviewer, not a holder of delete_review, not the requester holding it, not a superuser (403); the reviewer withdraws it', async () => {
    const s = await scene(w);
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: 'no' }));
    const refused = await s.carol.client.delete(`${REVIEWS}${r.id}/`);
    expectStatus(refused, 403);
    assert.match(refused.body.detail, /Only its reviewer may withdraw a review/);
    const moderator = await withPermissions(svc, 'moderator', [
      { object_types: ['change_control.review'], actions: ['delete'] },
    ]);
    await grant(svc, { users: [s.alice.id] }, { object_types: ['change_control.review'], actions: ['delete'] });
    for (const client of [moderator.client, s.alice.client, svc.admin]) {
      const res = await client.delete(`${REVIEWS}${r.id}/`);
      expectStatus(res, 403);
      assert.match(res.body.detail, /accountable override/);
    }
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'rejected', 'the veto stands');
    expectStatus(await s.bob.client.delete(`${REVIEWS}${r.id}/`), 204);
    assert.equal((await detail(s.alice.client, s.cr.id)).status, 'needs-review');
    assert.equal(
      (
        await ok(
          svc.admin.get(
            `/api/core/object-changes/?changed_object_type=change_control.review&changed_object_id=${r.id}&action=delete`,
          ),
        )
      ).count,
      1,
    );
  });

  it('Reviews are records: a user who reviewed or commented is not deleted (409 naming deactivation), so a veto and an open thread stay; deactivating works; a user without records is deleted', async () => {
    await withService(startService(), async (own) => {
      const ow = await world(own);
      const s = await scene(ow);
      await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'reject', comment: 'no' }));
      await created(
        s.carol.client.post(`/api/plugins/change-control/change-comments/`, {
          change_request: s.cr.id,
          change_diff: s.changes[0]!.id,
          text: 'Why this rack?',
        }),
      );
      for (const who of [s.bob, s.carol]) {
        const refused = await own.admin.delete(`/api/users/users/${who.id}/`);
        expectStatus(refused, 409);
        assert.match(refused.body.detail, /kept as records; deactivate the account \(is_active: false\)/);
        assert.doesNotMatch(refused.body.detail, new RegExp(`CHG|${s.cr.id}`));
      }
      assert.equal((await detail(s.alice.client, s.cr.id)).status, 'rejected', 'the veto stands');
      await ok(own.admin.patch(`/api/users/users/${s.bob.id}/`, { is_active: false }));
      expectStatus(await own.admin.delete(`/api/users/users/${s.dave.id}/`), 204);
    });
  });

  it('the request tells the requester they cannot review it, and a reviewer that they can', async () => {
    const s = await scene(w);
    const reviewer = await detail(s.bob.client, s.cr.id);
    assert.deepEqual(reviewer.actions.review, { allowed: true, reason: null });
    const author = await withPermissions(svc, 'erin', [
      ...AUTHOR,
      { object_types: ['change_control.review'], actions: ['add'] },
    ]);
    const { branch: b, inBranch } = await branch(author.client, 'erin-work');
    await device(inBranch, { name: 'erin-router' });
    const own = await openRequest(author.client, b.id);
    const requester = await detail(author.client, own.id);
    assert.equal(requester.actions.review.allowed, false);
    assert.match(requester.actions.review.reason, /own change request/);
  });

  it('the reviews list filters by change_request_id, reviewer_id (me), decision and stale', async () => {
    const s = await scene(w);
    await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    await created(postReview(s.carol.client, { change_request: s.cr.id, decision: 'comment' }));
    const list = async (q: string) =>
      (await ok(s.bob.client.get(`${REVIEWS}?change_request_id=${s.cr.id}&${q}`))).results
        .map((r: any) => r.reviewer.username)
        .sort();
    assert.deepEqual(await list(''), ['bob', 'carol']);
    assert.deepEqual(await list('reviewer_id=me'), ['bob']);
    assert.deepEqual(await list(`reviewer_id=${s.carol.id}`), ['carol']);
    assert.deepEqual(await list('decision=approve'), ['bob']);
    assert.deepEqual(await list('stale=false'), ['bob', 'carol']);
    assert.deepEqual(await list('stale=true'), []);
    expectStatus(await s.bob.client.get(`${REVIEWS}?decision=lgtm`), 400);
    expectStatus(await s.bob.client.get(`${REVIEWS}?change_request_id=x`), 400);
  });
});
