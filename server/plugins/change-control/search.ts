import { type Ctx, grantAllows, type SearchHit, type VisibleIds } from '../../host';
import { visibleRequestIds } from './change-requests/visibility-repository';
import { matchingRows, type RowOf, type SearchTable } from './search-repository';
import { displayOfChangeRequest, snapshotChangeRequest } from './change-requests/snapshot';
import { snapshotCheck } from './checks/present';
import { snapshotComment, visibleCommentRows } from './comments/repository';
import { ChangeVisibility } from '../branching';
import {
  CHANGE_COMMENT_TYPE,
  CHANGE_REQUEST_TYPE,
  MERGE_CHECK_TYPE,
  MODELS,
  POLICY_RULE_TYPE,
  POLICY_TYPE,
  REVIEW_TYPE,
} from './names';
import { presentPolicy, presentRule } from './policies/repository';
import { snapshotReview } from './reviews/repository';

/**
 * `/api/search/` over the plugin's models: change request ref, title, branch name and
 * description; policy and rule names; review and comment texts; check name, label and
 * summary. Only objects the caller may view are returned.
 */
function pattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function excerpt(value: string, q: string): string {
  const at = value.toLowerCase().indexOf(q.toLowerCase());
  if (value.length <= 200) return value;
  const start = Math.max(0, at - 60);
  return `${start > 0 ? '…' : ''}${value.slice(start, start + 200)}${start + 200 < value.length ? '…' : ''}`;
}

interface Source<T extends SearchTable> {
  objectType: string;
  table: T;
  fields: Array<keyof RowOf<T> & string>;
  display(row: RowOf<T>): string;
  object(ctx: Ctx, row: RowOf<T>): Record<string, unknown>;
  /** Rows that show a changed object: only those whose object the caller may see. */
  visible?(ctx: Ctx, rows: RowOf<T>[], visibility: ChangeVisibility): Promise<RowOf<T>[]>;
  /** The column naming the change request a row is (`id`) or belongs to: only those the caller may view (SQL). */
  request?: string;
}

/** One source, its row type kept inside: what the search loop needs of any table. */
interface AnySource {
  objectType: string;
  fields: readonly string[];
  judged: boolean;
  /** The rows are change requests: their view permission, constraints included, is applied in SQL. */
  requests: boolean;
  page(
    ctx: Ctx,
    like: string,
    offset: number,
    count: number,
    visibility: ChangeVisibility,
    requests: VisibleIds | null,
  ): Promise<{
    fetched: number;
    rows: Array<{ id: number; display: string; value(field: string): string; object(): Record<string, unknown> }>;
  }>;
}

function source<T extends SearchTable>(def: Source<T>): AnySource {
  return {
    objectType: def.objectType,
    fields: def.fields,
    judged: def.visible !== undefined,
    requests: def.objectType === CHANGE_REQUEST_TYPE,
    async page(ctx, like, offset, count, visibility, requests) {
      const visibleIn =
        requests === null || def.request === undefined ? undefined : { column: def.request, ids: requests };
      const fetched = await matchingRows(ctx, def.table, def.fields, like, offset, count, visibleIn);
      const rows = def.visible && !visibility.unrestricted ? await def.visible(ctx, fetched, visibility) : fetched;
      return {
        fetched: fetched.length,
        rows: rows.map((row) => ({
          id: row.id,
          display: def.display(row),
          value: (field) => String((row as Record<string, unknown>)[field] ?? ''),
          object: () => def.object(ctx, row),
        })),
      };
    },
  };
}

const SOURCES: AnySource[] = [
  source({
    objectType: CHANGE_REQUEST_TYPE,
    table: 'cc_change_requests',
    fields: ['ref', 'title', 'branch_name', 'description'],
    display: (r) => displayOfChangeRequest(r),
    object: (ctx, r) => snapshotChangeRequest(ctx, r),
    request: 'id',
  }),
  source({
    objectType: POLICY_TYPE,
    table: 'cc_policies',
    fields: ['name'],
    display: (r) => r.name,
    object: (ctx, r) => presentPolicy(ctx, r),
  }),
  source({
    objectType: POLICY_RULE_TYPE,
    table: 'cc_policy_rules',
    fields: ['name'],
    display: (r) => r.name,
    object: (ctx, r) => presentRule(ctx, r),
  }),
  source({
    objectType: REVIEW_TYPE,
    table: 'cc_reviews',
    fields: ['comment'],
    display: (r) => `Review ${r.id}`,
    object: (ctx, r) => snapshotReview(ctx, r),
    request: 'change_request_id',
  }),
  source({
    objectType: CHANGE_COMMENT_TYPE,
    table: 'cc_change_comments',
    fields: ['text'],
    display: (r) => `Comment on ${r.change_label}`,
    object: (ctx, r) => snapshotComment(ctx, r),
    visible: async (ctx, rows, visibility) => visibleCommentRows(ctx, rows, visibility),
    request: 'change_request_id',
  }),
  source({
    objectType: MERGE_CHECK_TYPE,
    table: 'cc_merge_checks',
    fields: ['name', 'label', 'summary'],
    display: (r) => r.label || r.name,
    object: (ctx, r) => snapshotCheck(ctx, r),
    request: 'change_request_id',
  }),
];

const PATHS: Record<string, string> = {
  [CHANGE_REQUEST_TYPE]: MODELS.changeRequest.path,
  [POLICY_TYPE]: MODELS.policy.path,
  [POLICY_RULE_TYPE]: MODELS.policyRule.path,
  [REVIEW_TYPE]: MODELS.review.path,
  [CHANGE_COMMENT_TYPE]: MODELS.changeComment.path,
  [MERGE_CHECK_TYPE]: MODELS.mergeCheck.path,
};

/** Rows looked at per query when permission constraints are checked in code. */
const BATCH = 200;

export async function searchChangeControl(ctx: Ctx, q: string, limit: number): Promise<SearchHit[]> {
  if (!ctx.user) return [];
  const user = ctx.user;
  const perms = await ctx.host.permissions.forUser(user, ctx.db);
  const needle = q.toLowerCase();
  // `%` and `_` in the query are plain characters: they are escaped, and LIKE is told the escape.
  const like = pattern(q);
  const hits: SearchHit[] = [];
  const visibility = await ChangeVisibility.load(ctx);
  // Reviews, comments and checks only of requests the caller may view, and those requests: in SQL.
  const requests = await visibleRequestIds(ctx);
  for (const source of SOURCES) {
    const own = perms.grant(source.objectType, 'view');
    if (own === false) continue;
    // A request's own view constraints are applied in SQL with the rest.
    const grant = source.requests ? true : own;
    // Rows judged on their changed object are looked at batch by batch, like constrained ones.
    const judged = source.judged && !visibility.unrestricted;
    // Unconstrained: one query. Constrained: page on until enough visible hits or no more rows.
    for (let offset = 0; ; offset += BATCH) {
      const size = grant === true && !judged ? limit - hits.length : BATCH;
      const { fetched, rows } = await source.page(ctx, like, offset, size, visibility, requests);
      for (const row of rows) {
        if (grant !== true && !grantAllows(grant, row.object(), user)) continue;
        const field = source.fields.find((f) => row.value(f).toLowerCase().includes(needle)) ?? source.fields[0]!;
        hits.push({
          object_type: source.objectType,
          id: row.id,
          display: row.display,
          url: `${ctx.baseUrl}${PATHS[source.objectType]}${row.id}/`,
          field,
          value: excerpt(row.value(field), q),
        });
        if (hits.length >= limit) return hits;
      }
      if ((grant === true && !judged) || fetched < size) break;
    }
  }
  return hits;
}
