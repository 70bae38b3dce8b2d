import assert from 'node:assert/strict';
import {
  evaluate,
  NO_RULES_REASON,
  type EvalPolicy,
  type EvalReview,
  type EvaluationInput,
} from '../../../../../server/plugins/change-control/evaluation/evaluate';

/** The approval panel as a plain function: who may approve, which approvals count, and why not. */
describe('unit: evaluation (evaluate.ts)', () => {
  const users = new Map([1, 2, 3, 4, 5].map((id) => [id, { id, username: `u${id}`, display: `u${id}` }]));

  function policy(
    rules: Array<{ name?: string; min?: number; users?: number[]; groups?: number[] }>,
    name = 'P',
  ): EvalPolicy {
    return {
      id: 1,
      name,
      matchedObjectTypes: ['dcim.device'],
      checks: [],
      rules: rules.map((r, i) => ({
        id: i + 1,
        policyId: 1,
        name: r.name ?? `r${i + 1}`,
        minReviews: r.min ?? 1,
        userIds: r.users ?? [],
        groupIds: r.groups ?? [],
      })),
    };
  }

  function review(
    id: number,
    reviewerId: number,
    decision: EvalReview['decision'],
    extra: Partial<EvalReview> = {},
  ): EvalReview {
    return { id, reviewerId, decision, stale: false, comment: decision === 'reject' ? 'no' : '', ...extra };
  }

  function run(input: Partial<EvaluationInput>): ReturnType<typeof evaluate> {
    return evaluate({
      requesterId: 1,
      policies: [],
      reviews: [],
      groupMembers: new Map(),
      groupNames: new Map(),
      users,
      ...input,
    });
  }

  it('no governing rule: not approved, "No policy rules apply"', () => {
    const r = run({ policies: [policy([])] });
    assert.equal(r.approved, false);
    assert.deepEqual(r.reasons, [NO_RULES_REASON]);
  });

  it('an approval by a named user satisfies a rule of one; the requester is never eligible', () => {
    const p = policy([{ users: [1, 2] }]);
    assert.deepEqual(run({ policies: [p] }).outstandingReviewerIds, [2]);
    const r = run({ policies: [p], reviews: [review(1, 2, 'approve')] });
    assert.equal(r.approved, true);
    assert.deepEqual(r.policies[0]!.rules[0]!.eligibleUserIds, [2]);
    assert.deepEqual(r.outstandingReviewerIds, []);
    // The requester's own approval never counts.
    assert.equal(run({ policies: [p], reviews: [review(1, 1, 'approve')] }).approved, false);
  });

  it('group members are eligible; an empty group is called out by name and never approves', () => {
    const p = policy([{ groups: [10] }, { name: 'empty', groups: [11], min: 1 }]);
    const r = run({
      policies: [p],
      groupNames: new Map([
        [10, 'netops'],
        [11, 'nobody'],
      ]),
      groupMembers: new Map([[10, [3, 4]]]),
      reviews: [review(1, 3, 'approve')],
    });
    assert.equal(r.policies[0]!.rules[0]!.satisfied, true);
    assert.equal(r.approved, false);
    assert.deepEqual(r.policies[0]!.rules[1]!.emptyGroups, ['nobody']);
    assert.ok(r.reasons.some((x) => x.includes('Group "nobody" of rule "empty"')));
  });

  it('a stale approval does not count and is listed as such', () => {
    const r = run({ policies: [policy([{ users: [2] }])], reviews: [review(7, 2, 'approve', { stale: true })] });
    assert.equal(r.approved, false);
    assert.deepEqual(
      r.staleReviews.map((x) => x.id),
      [7],
    );
    assert.deepEqual(
      r.policies[0]!.rules[0]!.uncounted.map((u) => u.reason),
      ['stale'],
    );
  });

  it("a contributor's approval does not count unless contributors_can_approve; they owe no decision", () => {
    const base = {
      policies: [policy([{ users: [2, 3] }])],
      reviews: [review(1, 2, 'approve')],
      contributorIds: new Set([2]),
    };
    const r = run(base);
    assert.equal(r.approved, false);
    assert.deepEqual(
      r.policies[0]!.rules[0]!.uncounted.map((u) => [u.reviewerId, u.reason]),
      [[2, 'contributor']],
    );
    assert.deepEqual(r.outstandingReviewerIds, [3]);
    assert.match(r.reasons.join(' '), /1 approval does not count: its reviewer changed the branch/);
    assert.equal(run({ ...base, contributorsCanApprove: true }).approved, true);
  });

  it('a live rejection by an eligible reviewer rejects; one by someone not eligible does not', () => {
    const p = policy([{ users: [2, 3] }]);
    const r = run({ policies: [p], reviews: [review(1, 2, 'reject'), review(2, 3, 'approve')] });
    assert.equal(r.rejected, true);
    assert.deepEqual(r.reasons.slice(-1), ['Changes requested by u2.']);
    assert.equal(run({ policies: [p], reviews: [review(1, 5, 'reject')] }).rejected, false);
    assert.equal(run({ policies: [p], reviews: [review(1, 2, 'reject', { stale: true })] }).rejected, false);
  });

  it('min_reviews counts distinct approvers; a comment is no decision', () => {
    const p = policy([{ users: [2, 3, 4], min: 2 }]);
    const r = run({ policies: [p], reviews: [review(1, 2, 'approve'), review(2, 3, 'comment')] });
    assert.equal(r.policies[0]!.rules[0]!.approvals, 1);
    assert.deepEqual(r.outstandingReviewerIds, [3, 4]);
    assert.match(r.reasons[0]!, /Rule "r1" of policy "P" has 1 of 2 required approvals\./);
    assert.equal(run({ policies: [p], reviews: [review(1, 2, 'approve'), review(2, 4, 'approve')] }).approved, true);
    // min_reviews 0 is satisfied without anyone.
    assert.equal(run({ policies: [policy([{ users: [2], min: 0 }])] }).approved, true);
  });
});
