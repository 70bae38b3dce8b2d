import assert from 'node:assert/strict';
import {
  closedRequestRefusal,
  contributorApprovalRefusal,
  editorRefusal,
  rejectNeedsComment,
  secondReviewRefusal,
  selfReviewRefusal,
} from '../../../../../server/plugins/change-control/reviews/review-rules';

/** The review rules as plain functions: each gives the refusal, or null. */
describe('unit: review rules (review-rules.ts)', () => {
  it('Review rule 2: nobody reviews their own request', () => {
    assert.match(selfReviewRefusal(4, 4)!, /own change request/);
    assert.equal(selfReviewRefusal(4, 5), null);
    assert.equal(selfReviewRefusal(4, null), null);
  });

  it('Review rule 3: a second review is refused, naming the first', () => {
    assert.equal(secondReviewRefusal(undefined), null);
    assert.match(secondReviewRefusal(12)!, /review 12/);
  });

  it('a rejection needs a comment; blank is none; other decisions need none', () => {
    assert.match(rejectNeedsComment('reject', '')!, /comment is required/);
    assert.match(rejectNeedsComment('reject', '  \n')!, /comment is required/);
    assert.equal(rejectNeedsComment('reject', 'fix the VLAN'), null);
    assert.equal(rejectNeedsComment('approve', ''), null);
    assert.equal(rejectNeedsComment('comment', ''), null);
  });

  it('completed and abandoned requests take no more reviews', () => {
    assert.match(closedRequestRefusal('completed')!, /completed/);
    assert.match(closedRequestRefusal('abandoned')!, /abandoned/);
    for (const s of ['draft', 'needs-review', 'approved', 'rejected'] as const)
      assert.equal(closedRequestRefusal(s), null);
  });

  it('independent approval: a contributor may not approve unless contributors_can_approve; rejecting stays open', () => {
    assert.match(contributorApprovalRefusal('approve', true, false)!, /not be independent/);
    assert.equal(contributorApprovalRefusal('approve', true, true), null);
    assert.equal(contributorApprovalRefusal('reject', true, false), null);
    assert.equal(contributorApprovalRefusal('approve', false, false), null);
  });

  it('Review rule 6: only the author of a review edits it', () => {
    assert.equal(editorRefusal(3, 3), null);
    assert.match(editorRefusal(3, 4)!, /Only the author/);
  });
});
