import { sql } from 'kysely';
import { CHANGE_REQUEST_STATUSES, CHECK_STATUSES, PRIORITIES } from '../../../../contract/api/change-control';
import { type Ctx, type DeclaredList, defineList, foldedLike, likePattern } from '../../../host';
import { ccDb } from '../db/database';
import type { ChangeRequestRow, MergeCheckRow } from '../db/tables';
import { presentChangeRequestList, type ChangeRequestOut } from './present';

const PRIORITY_RANK = sql<number>`case "priority" when 'low' then 0 when 'medium' then 1 when 'high' then 2 else 3 end`;

const declared = defineList({
  name: 'change-requests',
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_change_requests').selectAll(),
  filters: {
    id: { type: 'int', column: 'id' },
    status: { type: 'choice', choices: CHANGE_REQUEST_STATUSES, description: 'Status value (several values: any of them).', column: 'status' },
    check_status: {
      type: 'choice',
      choices: CHECK_STATUSES,
      description: 'Change requests having a check with that status.',
      where: (statuses) => (eb) => eb('id', 'in', eb.selectFrom('cc_merge_checks').select('change_request_id').where('status', 'in', statuses as MergeCheckRow['status'][])),
    },
    ref: {
      type: 'string',
      description: 'Partial, case-insensitive match on the external reference; several values combine as OR.',
      // Case folded beyond ASCII; `\` escapes % and _ in the pattern, so they match literally.
      where: (refs, ctx) => (eb) => eb.or(refs.map((r) => foldedLike(ctx.db, sql.ref('ref'), likePattern(r as string)))),
    },
    gates_cleared: { type: 'bool', description: 'Cached: the policies and every required check were satisfied at the last refresh (the change window excluded).', column: 'gates_cleared' },
    has_conflicts: { type: 'bool', description: 'Cached: the branch conflicted with main at the last refresh.', column: 'has_conflicts' },
    priority: { type: 'choice', choices: PRIORITIES, column: 'priority' },
    branch_id: { type: 'int', column: 'branch_id' },
    branch_name: { type: 'string', column: 'branch_name' },
    requester: { type: 'int', allowMe: true, description: 'Requester user id, or "me".', column: 'requester_id' },
    reviewer: {
      type: 'int',
      allowMe: true,
      description: 'Requests under review on which this user (or "me") is an outstanding eligible reviewer.',
      where: (users) => (eb) =>
        eb.and([eb('status', '=', 'needs-review'), eb('id', 'in', eb.selectFrom('cc_outstanding_reviewers').select('change_request_id').where('user_id', 'in', users as number[]))]),
    },
  },
  ordering: { id: 'id', created: 'created', last_updated: 'last_updated', title: 'title', status: 'status', priority: PRIORITY_RANK, scheduled_start: 'scheduled_start', ref: 'ref' },
  defaultOrdering: [{ field: 'id', desc: true }],
  search: ['title', 'description', 'ref', 'branch_name'],
  memoCount: true,
  present: presentChangeRequestList,
});

/**
 * `change-requests/`. Pages read again while the database is unchanged are reused, unless a
 * request on the page has a change window (its readiness moves with time).
 */
export const changeRequestList: DeclaredList<ChangeRequestOut> = {
  ...declared,
  run: async (ctx, options) => {
    const key = `change-request-page|${ctx.user?.id ?? ''}|${ctx.baseUrl}|${JSON.stringify(options)}`;
    const answer = await ctx.host.readMemo.get(ctx, key, async () => {
      const page = await declared.run(ctx, options);
      return { ...page, timeless: page.items.every((r) => r.scheduled_start === null && r.scheduled_end === null) };
    });
    return answer.timeless ? answer : declared.run(ctx, options);
  },
};

export type { ChangeRequestRow };
