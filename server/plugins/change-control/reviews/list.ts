import { type Ctx, defineList, createdRange, lastUpdatedRange } from '../../../host';
import { REVIEW_DECISIONS } from '../../../../contract/api/change-control';
import { ccDb } from '../db/database';
import { presentReviewRows } from './repository';
import { taggedWith } from '../db/tags';
import { REVIEW_TYPE } from '../names';
import { rowsOfVisibleRequests } from '../change-requests/visibility-repository';

/** `reviews/`: filters, `q` over the review's comment, ordering; only reviews of requests the caller may view. */
export const reviewList = defineList({
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_reviews').selectAll(),
  columnFilters: {
    change_request_id: 'int',
    reviewer_id: { type: 'int', allowMe: true, description: 'Reviewer user id, or "me".' },
    decision: { type: 'choice', choices: REVIEW_DECISIONS },
    stale: 'bool',
    created: createdRange,
    last_updated: lastUpdatedRange,
  },
  filters: {
    author_id: {
      type: 'int',
      allowMe: true,
      description: 'The review\'s author (its reviewer), or "me".',
      column: 'reviewer_id',
    },
    tag: {
      type: 'string',
      description: 'Reviews carrying this tag (its slug; several values: any of them).',
      where: (slugs) => taggedWith(REVIEW_TYPE, slugs as string[]),
    },
  },
  ordering: { id: 'id', created: 'created', last_updated: 'last_updated', decision: 'decision' },
  search: ['comment'],
  visible: rowsOfVisibleRequests('cc_reviews.change_request_id'),
  present: presentReviewRows,
});
