import { sql } from 'kysely';
import { type Ctx, grantAllows, type SearchHit } from '../../host';
import { snapshotChangeRequest } from './change-requests/snapshot';
import { snapshotCheck } from './checks/present';
import { snapshotComment, visibleCommentRows } from './comments/repository';
import { ChangeVisibility } from '../branching';
import { ccDb } from './db/database';
import { CHANGE_COMMENT_TYPE, CHANGE_REQUEST_TYPE, MERGE_CHECK_TYPE, MODELS, POLICY_RULE_TYPE, POLICY_TYPE, REVIEW_TYPE } from './names';
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

interface Source<R> {
  objectType: string;
  table: 'cc_change_requests' | 'cc_policies' | 'cc_policy_rules' | 'cc_reviews' | 'cc_change_comments' | 'cc_merge_checks';
  fields: string[];
  display(row: R): string;
  object(ctx: Ctx, row: R): Record<string, unknown>;
  /** Rows that show a changed object: only those whose object the caller may see. */
  visible?(ctx: Ctx, rows: R[], visibility: ChangeVisibility): Promise<R[]>;
}

const SOURCES: Array<Source<Record<string, unknown>>> = [
  {
    objectType: CHANGE_REQUEST_TYPE,
    table: 'cc_change_requests',
    fields: ['ref', 'title', 'branch_name', 'description'],
    display: (r) => (r.ref ? `${r.ref}: ${r.title}` : String(r.title)),
    object: (ctx, r) => snapshotChangeRequest(ctx, r as never),
  },
  { objectType: POLICY_TYPE, table: 'cc_policies', fields: ['name'], display: (r) => String(r.name), object: (ctx, r) => presentPolicy(ctx, r as never) },
  { objectType: POLICY_RULE_TYPE, table: 'cc_policy_rules', fields: ['name'], display: (r) => String(r.name), object: (ctx, r) => presentRule(ctx, r as never) },
  { objectType: REVIEW_TYPE, table: 'cc_reviews', fields: ['comment'], display: (r) => `Review ${r.id}`, object: (ctx, r) => snapshotReview(ctx, r as never) },
  {
    objectType: CHANGE_COMMENT_TYPE,
    table: 'cc_change_comments',
    fields: ['text'],
    display: (r) => `Comment on ${r.change_label}`,
    object: (ctx, r) => snapshotComment(ctx, r as never),
    visible: async (ctx, rows, visibility) => visibleCommentRows(ctx, rows as never[], visibility),
  },
  { objectType: MERGE_CHECK_TYPE, table: 'cc_merge_checks', fields: ['name', 'label', 'summary'], display: (r) => String(r.label || r.name), object: (ctx, r) => snapshotCheck(ctx, r as never) },
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
  for (const source of SOURCES) {
    const grant = perms.grant(source.objectType, 'view');
    if (grant === false) continue;
    // Rows judged on their changed object are looked at batch by batch, like constrained ones.
    const judged = source.visible !== undefined && !visibility.unrestricted;
    const matching = (offset: number, count: number) =>
      ccDb(ctx)
        .selectFrom(source.table)
        .selectAll()
        .where((eb) => eb.or(source.fields.map((f) => sql<boolean>`unicode_lower(${sql.ref(f)}) like ${like} escape '\\'`)))
        .orderBy('id', 'desc')
        .limit(count)
        .offset(offset)
        .execute() as Promise<Array<Record<string, unknown>>>;
    // Unconstrained: one query. Constrained: page on until enough visible hits or no more rows.
    for (let offset = 0; ; offset += BATCH) {
      const size = grant === true && !judged ? limit - hits.length : BATCH;
      const fetched = await matching(offset, size);
      const rows = judged ? await source.visible!(ctx, fetched, visibility) : fetched;
      for (const row of rows) {
        if (grant !== true && !grantAllows(grant, source.object(ctx, row), user)) continue;
        const field = source.fields.find((f) => String(row[f] ?? '').toLowerCase().includes(needle)) ?? source.fields[0]!;
        hits.push({
          object_type: source.objectType,
          id: row.id as number,
          display: source.display(row),
          url: `${ctx.baseUrl}${PATHS[source.objectType]}${row.id}/`,
          field,
          value: excerpt(String(row[field] ?? ''), q),
        });
        if (hits.length >= limit) return hits;
      }
      if ((grant === true && !judged) || fetched.length < size) break;
    }
  }
  return hits;
}
