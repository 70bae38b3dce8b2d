import { sql } from 'kysely';
import { CHANGE_REQUEST_STATUSES, CHECK_STATUSES, PRIORITIES } from '../../../../contract/api/change-control';
import { ChangeVisibility } from '../../branching';
import {
  type Ctx,
  type DeclaredList,
  type ListOptions,
  defineList,
  createdRange,
  foldedLike,
  likePattern,
  textContains,
} from '../../../host';
import { visibleCommentRows } from '../comments/repository';
import { computations } from '../computations';
import { nextFreezeChange } from '../freezes/calendar';
import { enabledFreezes } from '../freezes/repository';
import { ccDb } from '../db/database';
import type { ChangeRequestRow, MergeCheckRow } from '../db/tables';
import { presentChangeRequestList, type ChangeRequestOut } from './present';
import { taggedWith } from '../db/tags';
import { CHANGE_REQUEST_TYPE } from '../names';
import { requestViewCondition } from './visibility-repository';

const PRIORITY_RANK = sql<number>`case "priority" when 'low' then 0 when 'medium' then 1 when 'high' then 2 else 3 end`;

/**
 * Requests with an open (unresolved) thread the caller may see. Unrestricted callers: SQL. A
 * caller whose view of changes is restricted: the open thread roots are read and judged in code
 * (bounded by the number of open threads, not of requests), so a thread on a change they may not
 * see never counts.
 */
async function withOpenThreads(ctx: Ctx): Promise<number[] | null> {
  const visibility = await ChangeVisibility.load(ctx);
  if (visibility.unrestricted) return null;
  const roots = await ccDb(ctx)
    .selectFrom('cc_change_comments')
    .select(['id', 'change_request_id', 'change_diff_id', 'change_object_type', 'change_object_id', 'created'])
    .where('parent_id', 'is', null)
    .where('resolved', '=', 0)
    .execute();
  return [...new Set((await visibleCommentRows(ctx, roots, visibility)).map((r) => r.change_request_id))];
}

/**
 * What a page of requests is computed from (the page, its count and every function presenting
 * it): the requests, who may see what (identity, permissions, visible branches), each request's
 * requester, attached policies, tags, branch, queue position, and the freezes; and what the
 * filters given read. A check report, a review or a comment writes none of these: the page
 * stays cached across them. Requests with open threads: any table (the caller's view of the
 * changes decides).
 */
export function pageReads(options: ListOptions): readonly string[] | undefined {
  const named = new Set(Object.keys(options.filters).map((f) => f.split('__')[0]!));
  if (named.has('has_open_threads')) return undefined;
  return [
    ...PAGE_TABLES,
    ...(named.has('check_status') ? ['cc_merge_checks'] : []),
    ...(named.has('has_reviews') ? ['cc_reviews'] : []),
    ...(named.has('reviewer') ? ['cc_outstanding_reviewers'] : []),
    ...(named.has('advisory_reviewer') ? ['cc_trial_reviewers'] : []),
  ];
}

const PAGE_TABLES: readonly string[] = [
  'cc_change_requests',
  'users',
  'user_groups',
  'groups',
  'permissions',
  'branches',
  'cc_change_request_policies',
  'cc_policies',
  'tagged_items',
  'tags',
  'cc_merge_jobs',
  'cc_freezes',
];

const declared = defineList({
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_change_requests').selectAll(),
  columnFilters: {
    status: {
      type: 'choice',
      choices: CHANGE_REQUEST_STATUSES,
      description: 'Status value (several values: any of them).',
    },
    gates_cleared: {
      type: 'bool',
      description:
        'Cached: the policies and every required check were satisfied at the last refresh (the change window excluded).',
    },
    has_conflicts: { type: 'bool', description: 'Cached: the branch conflicted with main at the last refresh.' },
    priority: { type: 'choice', choices: PRIORITIES },
    branch_id: 'int',
    branch_name: 'string',
    auto_merge: 'bool',
    branch_deleted: 'bool',
    scheduled_start: {
      type: 'datetime',
      description: 'Window start (with __gte, __lte, __gt, __lt: a range).',
      range: true,
    },
    scheduled_end: {
      type: 'datetime',
      description: 'Window end (with __gte, __lte, __gt, __lt: a range).',
      range: true,
    },
    created: createdRange,
  },
  filters: {
    check_status: {
      type: 'choice',
      choices: CHECK_STATUSES,
      description: 'Change requests having a check with that status.',
      where: (statuses) => (eb) =>
        eb(
          'id',
          'in',
          eb
            .selectFrom('cc_merge_checks')
            .select('change_request_id')
            .where('status', 'in', statuses as MergeCheckRow['status'][]),
        ),
    },
    ref: {
      type: 'string',
      description: 'Partial, case-insensitive match on the external reference; several values combine as OR.',
      // Case folded beyond ASCII; `\` escapes % and _ in the pattern, so they match literally.
      where: (refs, ctx) => (eb) =>
        eb.or(refs.map((r) => foldedLike(ctx.db, sql.ref('ref'), likePattern(r as string)))),
    },
    requester: { type: 'int', allowMe: true, description: 'Requester user id, or "me".', column: 'requester_id' },
    title: {
      type: 'string',
      description: 'Case-insensitive substring of the title (several values: any of them).',
      where: (v) => (eb) => eb.or(v.map((t) => textContains('title', t as string))),
    },
    description: {
      type: 'string',
      description: 'Case-insensitive substring of the description (several values: any of them).',
      where: (v) => (eb) => eb.or(v.map((t) => textContains('description', t as string))),
    },
    branch: {
      type: 'string',
      description: "The branch's name (kept after the branch is deleted).",
      column: 'branch_name',
    },
    tag: {
      type: 'string',
      description: 'Requests carrying this tag (its slug; several values: any of them).',
      where: (slugs) => taggedWith(CHANGE_REQUEST_TYPE, slugs as string[]),
    },
    policy_id: {
      type: 'int',
      description: 'Requests this policy governs now (attached).',
      where: (ids) => (eb) =>
        eb(
          'id',
          'in',
          eb
            .selectFrom('cc_change_request_policies')
            .select('change_request_id')
            .where('policy_id', 'in', ids as number[]),
        ),
    },
    has_reviews: {
      type: 'bool',
      description: 'Requests with (true) or without (false) any review.',
      where: (v) => (eb) =>
        eb.or(v.map((has) => eb('id', has ? 'in' : 'not in', eb.selectFrom('cc_reviews').select('change_request_id')))),
    },
    has_open_threads: {
      type: 'bool',
      description: 'Requests with (true) or without (false) an unresolved comment thread the caller may see.',
      where: async (v, ctx) => {
        const visible = await withOpenThreads(ctx);
        return (eb) =>
          eb.or(
            v.map((has) => {
              if (visible === null) {
                const open = eb
                  .selectFrom('cc_change_comments')
                  .select('change_request_id')
                  .where('parent_id', 'is', null)
                  .where('resolved', '=', 0);
                return eb('id', has ? 'in' : 'not in', open);
              }
              if (visible.length === 0) return has ? sql<boolean>`1 = 0` : sql<boolean>`1 = 1`;
              return eb('id', has ? 'in' : 'not in', visible);
            }),
          );
      },
    },
    has_window: {
      type: 'bool',
      description: 'Requests with (true) or without (false) a change window (scheduled_start or scheduled_end set).',
      where: (v) => (eb) =>
        eb.or(
          v.map((has) =>
            has
              ? eb.or([eb('scheduled_start', 'is not', null), eb('scheduled_end', 'is not', null)])
              : eb.and([eb('scheduled_start', 'is', null), eb('scheduled_end', 'is', null)]),
          ),
        ),
    },
    reviewer: {
      type: 'int',
      allowMe: true,
      description:
        'Submitted open requests waiting for this user\'s (or "me"\'s) review: an eligible reviewer of an unsatisfied rule who has not reviewed since the last change, whatever others decided.',
      where: (users) => (eb) =>
        eb.and([
          eb('status', 'in', ['needs-review', 'approved', 'rejected']),
          eb(
            'id',
            'in',
            eb
              .selectFrom('cc_outstanding_reviewers')
              .select('change_request_id')
              .where('user_id', 'in', users as number[]),
          ),
        ]),
    },
    advisory_reviewer: {
      type: 'int',
      allowMe: true,
      description:
        'Submitted open requests waiting for an advisory review of this user (or "me"): only a policy on trial (enforcement "evaluate") names them, on a rule it finds unsatisfied; such a review counts for no decision.',
      where: (users) => (eb) =>
        eb.and([
          eb('status', 'in', ['needs-review', 'approved', 'rejected']),
          eb(
            'id',
            'in',
            eb
              .selectFrom('cc_trial_reviewers')
              .select('change_request_id')
              .where('waiting', '=', 1)
              .where('user_id', 'in', users as number[]),
          ),
        ]),
    },
  },
  ordering: {
    id: 'id',
    created: 'created',
    last_updated: 'last_updated',
    title: 'title',
    status: 'status',
    priority: PRIORITY_RANK,
    scheduled_start: 'scheduled_start',
    scheduled_end: 'scheduled_end',
    ref: 'ref',
    branch: 'branch_name',
  },
  defaultOrdering: [{ field: 'id', desc: true }],
  search: ['title', 'description', 'ref', 'branch_name'],
  // The view permission with its constraints, in SQL (`registerResource` is told: listAppliesViewGrant).
  visible: async (ctx) => {
    const condition = await requestViewCondition(ctx);
    return condition === null ? null : () => condition;
  },
  memoCount: 'change-requests',
  reads: pageReads,
  present: presentChangeRequestList,
});

/**
 * The first instant after `now` at which an enabled freeze shows differently on the requests it
 * applies to (a period begins or ends, or comes within the notice days); null when none will.
 */
async function nextFreezeInstant(ctx: Ctx, now: Date): Promise<number | null> {
  const instants = (await enabledFreezes(ctx))
    .map((f) => nextFreezeChange(f.schedule, now)?.getTime())
    .filter((t): t is number => t !== undefined);
  return instants.length === 0 ? null : Math.min(...instants);
}

/**
 * `change-requests/`. Pages read again while none of the tables they are computed from moved
 * (`pageReads`) are reused, within one stretch of time between two instants a freeze changes
 * what it shows (the key names the next one: time alone moves a frozen request's readiness), and
 * never when a request on the page has a change window (its readiness moves with time).
 */
export const changeRequestList: DeclaredList<ChangeRequestOut> = {
  ...declared,
  run: async (ctx, options) => {
    const until = await nextFreezeInstant(ctx, ctx.host.clock.now());
    const key = `change-request-page|${until ?? ''}|${ctx.user?.id ?? ''}|${ctx.baseUrl}|${JSON.stringify(options)}`;
    const answer = await ctx.host.readMemo.get(
      ctx,
      key,
      async () => {
        computations(ctx.host).pages++;
        const page = await declared.run(ctx, options);
        return { ...page, timeless: page.items.every((r) => r.scheduled_start === null && r.scheduled_end === null) };
      },
      pageReads(options),
    );
    return answer.timeless ? answer : declared.run(ctx, options);
  },
};

export type { ChangeRequestRow };
