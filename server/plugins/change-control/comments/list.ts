import { ChangeVisibility } from '../../branching';
import { type ApiObject, type Ctx, defineList, createdRange, lastUpdatedRange } from '../../../host';
import type { ChangeComment } from '../../../../contract/api/change-control';
import { ccDb } from '../db/database';
import { presentComments, visibleCommentRows } from './repository';
import { rowsOfVisibleRequests } from '../change-requests/visibility-repository';

/**
 * `comments/`: filters, `q` over the text, ordering. Comments show the changed object they are
 * anchored to: a caller whose view of changes is restricted gets only those they may see it for
 * (judged in code, before the page is cut), and only of requests the caller may view (SQL).
 */
export const commentList = defineList({
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_change_comments').selectAll(),
  columnFilters: {
    change_request_id: 'int',
    change_diff_id: 'int',
    author_id: { type: 'int', allowMe: true, description: 'Author user id, or "me".' },
    parent_id: { type: 'int', description: 'Replies in the thread of this root comment.' },
    created: createdRange,
    last_updated: lastUpdatedRange,
    attribute: {
      type: 'string',
      description: 'Comments about this attribute of their change (a dot path; several values: any of them).',
    },
  },
  filters: {
    is_root: { type: 'bool', description: 'Only thread roots (true) or only replies (false).', isNull: 'parent_id' },
    resolved: {
      type: 'bool',
      description: 'Thread roots that are (not) resolved.',
      where: (values) => (eb) =>
        eb.and([
          eb('parent_id', 'is', null),
          eb(
            'resolved',
            'in',
            values.map((v) => (v ? 1 : 0)),
          ),
        ]),
    },
    thread: {
      type: 'int',
      description: 'Every comment of the thread whose root has this id (the root and its replies).',
      where: (ids) => (eb) => eb.or([eb('id', 'in', ids as number[]), eb('parent_id', 'in', ids as number[])]),
    },
    attribute__isnull: {
      type: 'bool',
      description: 'Comments about the whole object (true) or about one attribute (false).',
      isNull: 'attribute',
    },
  },
  ordering: { id: 'id', created: 'created', last_updated: 'last_updated' },
  search: ['text'],
  visible: rowsOfVisibleRequests('cc_change_comments.change_request_id'),
  admit: async (ctx) => {
    const visibility = await ChangeVisibility.load(ctx);
    return visibility.unrestricted ? null : (rows) => visibleCommentRows(ctx, rows, visibility);
  },
  present: async (ctx, rows) => (await presentComments(ctx, rows)) as Array<ChangeComment & ApiObject>,
});
