import { ChangeVisibility, type ChangedObjectRef } from '../../branching';
import {
  branchChangesByIds,
  briefObject,
  type Ctx,
  existingBranchChangeIds,
  getMainObjects,
  objectUrl,
  tableRows,
  valuesTable,
} from '../../../host';
import type { ChangeComment } from '../../../../contract/api/change-control';
import { ccDb, toBool } from '../db/database';
import type { ChangeCommentRow } from '../db/tables';
import { loadUsers } from '../evaluation/load';
import { renderMarkdown } from '../markdown';
import { MODELS } from '../names';
import { isOutdated, isSuggestionOutdated } from './comment-rules';

/** A comment's suggestion as stored (the `suggestion` column, JSON). */
export interface StoredSuggestion {
  attribute: string;
  value: unknown;
  previous: { value?: unknown };
}

export function parseSuggestion(text: string | null): StoredSuggestion | null {
  return text === null ? null : (JSON.parse(text) as StoredSuggestion);
}

/**
 * The comments the caller may see: a comment shows a changed object (its label, its anchor),
 * so it is visible only when that change is (its branch and its object, `ChangeVisibility`).
 * A comment whose change is gone is judged on main's state of the object now, and in the
 * request's branch when that still exists.
 */
export async function visibleCommentRows<
  R extends Pick<
    ChangeCommentRow,
    'id' | 'change_request_id' | 'change_diff_id' | 'change_object_type' | 'change_object_id' | 'created'
  >,
>(ctx: Ctx, rows: readonly R[], known?: ChangeVisibility): Promise<R[]> {
  if (rows.length === 0) return [];
  const visibility = known ?? (await ChangeVisibility.load(ctx));
  if (visibility.unrestricted) return [...rows];
  const changes = new Map(
    (
      await branchChangesByIds(
        ctx,
        rows.flatMap((r) => (r.change_diff_id === null ? [] : [r.change_diff_id])),
      )
    ).map((c) => [c.id, c]),
  );
  const gone = rows.filter((r) => !changes.has(r.change_diff_id ?? -1));
  const requests = new Map(
    gone.length === 0
      ? []
      : (
          await ccDb(ctx)
            .selectFrom('cc_change_requests')
            .select(['id', 'branch_id'])
            .where('id', 'in', (eb) =>
              eb
                .selectFrom(valuesTable(ctx.db, [...new Set(gone.map((r) => r.change_request_id))]).as('j'))
                .select('j.value'),
            )
            .execute()
        ).map((r) => [r.id, r.branch_id]),
  );
  const mains =
    gone.length === 0 ? new Map() : await getMainObjects(ctx, [...new Set(gone.map((r) => r.change_object_id))]);
  const refs: Array<ChangedObjectRef & { row: R }> = [];
  for (const row of rows) {
    const change = changes.get(row.change_diff_id ?? -1);
    if (change) {
      refs.push({ ...change, row });
      continue;
    }
    const main = mains.get(row.change_object_id);
    const state = main && main.objectType === row.change_object_type ? main : undefined;
    refs.push({
      row,
      branchId: requests.get(row.change_request_id) ?? null,
      objectType: row.change_object_type,
      objectId: row.change_object_id,
      action: state ? 'update' : 'delete',
      original: null,
      modified: state?.attrs ?? null,
      created: state?.created ?? row.created,
      lastUpdated: state?.lastUpdated ?? row.created,
    });
  }
  return (await visibility.filter(refs)).map((r) => r.row);
}

/** Comments by id: read, insert (answering the stored row), update, delete. */
export const commentTable = tableRows(ccDb, 'cc_change_comments');

/** The replies to a thread's root comment. */
export function repliesTo(ctx: Ctx, rootId: number): Promise<ChangeCommentRow[]> {
  return ccDb(ctx).selectFrom('cc_change_comments').selectAll().where('parent_id', '=', rootId).execute();
}

interface ChangeSides {
  action: string;
  original: unknown;
  modified: unknown;
}

/**
 * The anchored changes of these comments that still exist, by id, with their two states parsed
 * only where a thread names an attribute (a whole-object thread needs existence alone). A few
 * queries for any number of comments, none per comment.
 */
async function anchoredChanges(ctx: Ctx, rows: readonly ChangeCommentRow[]): Promise<Map<number, ChangeSides>> {
  const withAttribute = new Set<number>();
  const withoutAttribute = new Set<number>();
  for (const row of rows) {
    if (row.change_diff_id === null) continue;
    (row.attribute === null && row.suggestion === null ? withoutAttribute : withAttribute).add(row.change_diff_id);
  }
  for (const id of withAttribute) withoutAttribute.delete(id);
  const out = new Map<number, ChangeSides>();
  for (const c of await branchChangesByIds(ctx, withAttribute))
    out.set(c.id, { action: c.action, original: c.original, modified: c.modified });
  for (const id of await existingBranchChangeIds(ctx, withoutAttribute))
    out.set(id, { action: 'update', original: null, modified: null });
  return out;
}

/**
 * Comments as the API shows them. `outdated` is computed now, from the anchored changes as they
 * are: a thread whose change is gone, or whose attribute no longer differs, is outdated.
 */
export async function presentComments(ctx: Ctx, rows: readonly ChangeCommentRow[]): Promise<ChangeComment[]> {
  const users = await loadUsers(ctx, [
    ...rows.map((r) => r.author_id),
    ...rows.flatMap((r) => (r.applied_by_id === null ? [] : [r.applied_by_id])),
  ]);
  const changes = await anchoredChanges(ctx, rows);
  return rows.map((row) => {
    const author = users.get(row.author_id) ?? {
      id: row.author_id,
      username: `user ${row.author_id}`,
      display: `user ${row.author_id}`,
    };
    const change = row.change_diff_id === null ? undefined : changes.get(row.change_diff_id);
    return {
      ...briefObject(ctx, MODELS.changeComment.path, row.id, `Comment by ${author.username} on ${row.change_label}`),
      change_request: row.change_request_id,
      change_diff: row.change_diff_id,
      change_label: row.change_label,
      text: row.text,
      text_html: renderMarkdown(row.text),
      author,
      parent: row.parent_id,
      resolved: row.parent_id === null ? toBool(row.resolved) : false,
      attribute: row.attribute,
      edited: toBool(row.edited),
      outdated: isOutdated(row.attribute, change),
      suggestion: presentSuggestion(row, change, users),
      created: row.created,
      last_updated: row.last_updated,
    };
  });
}

function presentSuggestion(
  row: ChangeCommentRow,
  change: ChangeSides | undefined,
  users: Map<number, { id: number; username: string; display: string }>,
): ChangeComment['suggestion'] {
  const stored = parseSuggestion(row.suggestion);
  if (!stored) return null;
  const applied = row.applied_at !== null;
  return {
    attribute: stored.attribute,
    value: stored.value,
    previous: 'value' in stored.previous ? stored.previous.value : null,
    previous_absent: !('value' in stored.previous),
    outdated: isSuggestionOutdated(stored, change, applied),
    applied_by: row.applied_by_id === null ? null : (users.get(row.applied_by_id) ?? null),
    applied_at: row.applied_at,
  };
}

/** What the changelog keeps of a comment. */
export function snapshotComment(ctx: Ctx, row: ChangeCommentRow): Record<string, unknown> {
  return {
    id: row.id,
    url: objectUrl(ctx, MODELS.changeComment.path, row.id),
    change_request: row.change_request_id,
    change_diff: row.change_diff_id,
    change_object_type: row.change_object_type,
    change_object_id: row.change_object_id,
    change_label: row.change_label,
    text: row.text,
    author: row.author_id,
    parent: row.parent_id,
    attribute: row.attribute,
    resolved: row.parent_id === null ? toBool(row.resolved) : false,
    suggestion: parseSuggestion(row.suggestion),
    applied_by: row.applied_by_id,
    applied_at: row.applied_at,
    created: row.created,
    last_updated: row.last_updated,
  };
}

/** Comments by id (unknown ids are left out): a few queries for any number. */
export async function commentsByIds(ctx: Ctx, ids: readonly number[]): Promise<ChangeCommentRow[]> {
  const wanted = [...new Set(ids)];
  const out: ChangeCommentRow[] = [];
  for (let i = 0; i < wanted.length; i += 500) {
    out.push(
      ...(await ccDb(ctx)
        .selectFrom('cc_change_comments')
        .selectAll()
        .where('id', 'in', wanted.slice(i, i + 500))
        .orderBy('id')
        .execute()),
    );
  }
  return out;
}

/** Marks suggestions applied by `userId` at `now`, and resolves these thread roots, in two statements per batch. */
export async function markSuggestionsApplied(
  ctx: Ctx,
  applied: readonly number[],
  roots: readonly number[],
  userId: number,
  now: string,
): Promise<void> {
  for (let i = 0; i < applied.length; i += 500) {
    await ccDb(ctx)
      .updateTable('cc_change_comments')
      .set({ applied_by_id: userId, applied_at: now, last_updated: now })
      .where('id', 'in', applied.slice(i, i + 500))
      .execute();
  }
  for (let i = 0; i < roots.length; i += 500) {
    await ccDb(ctx)
      .updateTable('cc_change_comments')
      .set({ resolved: 1, last_updated: now })
      .where('id', 'in', roots.slice(i, i + 500))
      .execute();
  }
}
