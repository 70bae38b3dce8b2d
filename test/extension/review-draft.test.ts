// Request Changes written in an editor tab: the guide it opens with is never sent, and a request
// for changes needs words.
import assert from 'node:assert/strict';
import { reviewDraftProblem, reviewDraftTemplate, reviewDraftText } from '../../extension/core/review-draft';

describe('extension: the review comment written in an editor', () => {
  it('opens with a guide that is not sent; sends the rest, several lines of Markdown, trimmed', () => {
    const template = reviewDraftTemplate('reject', 'Move sw1 --> R2');
    assert.match(
      template,
      /^<!-- Request changes on "Move sw1 {2}R2"\. Write what must change \(Markdown, required\) below/,
    );
    assert.equal(reviewDraftText(template, template), '');
    const written = `${template}Use rack R3:\n\n- R2 is full\n- see the cabling plan\n\n`;
    assert.equal(reviewDraftText(written, template), 'Use rack R3:\n\n- R2 is full\n- see the cabling plan');
    assert.equal(reviewDraftText(`Use R3${template}`, template), 'Use R3', 'written before the guide');
    assert.equal(reviewDraftText('guide deleted', template), 'guide deleted');
  });

  it('refuses to send a request for changes without words; other decisions may have none', () => {
    assert.equal(reviewDraftProblem('reject', ''), 'Requesting changes needs a comment saying what must change.');
    assert.equal(reviewDraftProblem('reject', 'x'), null);
    assert.equal(reviewDraftProblem('approve', ''), null);
  });
});
