import type { Ctx } from '../../core/context';
import type { ChangeComment } from '../../contract/change-control';
import { ccDb, toBool } from '../db';
import type { ChangeCommentRow } from '../db/tables';
import { loadUsers } from '../evaluation/load';
import { renderMarkdown } from '../markdown';
import { MODELS } from '../names';

export async function getCommentRow(ctx: Ctx, id: number): Promise<ChangeCommentRow | undefined> {
  return ccDb(ctx).selectFrom('cc_change_comments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function presentComments(ctx: Ctx, rows: readonly ChangeCommentRow[]): Promise<ChangeComment[]> {
  const users = await loadUsers(ctx, rows.map((r) => r.author_id));
  return rows.map((row) => {
    const author = users.get(row.author_id) ?? { id: row.author_id, username: `user ${row.author_id}`, display: `user ${row.author_id}` };
    return {
      id: row.id,
      url: `${ctx.baseUrl}${MODELS.changeComment.path}${row.id}/`,
      display: `Comment by ${author.username} on ${row.change_label}`,
      change_request: row.change_request_id,
      change_diff: row.change_diff_id,
      change_label: row.change_label,
      text: row.text,
      text_html: renderMarkdown(row.text),
      author,
      parent: row.parent_id,
      resolved: row.parent_id === null ? toBool(row.resolved) : false,
      attribute: null,
      outdated: false,
      created: row.created,
      last_updated: row.last_updated,
    };
  });
}

/** What the changelog keeps of a comment. */
export function snapshotComment(ctx: Ctx, row: ChangeCommentRow): Record<string, unknown> {
  return {
    id: row.id,
    url: `${ctx.baseUrl}${MODELS.changeComment.path}${row.id}/`,
    change_request: row.change_request_id,
    change_diff: row.change_diff_id,
    change_label: row.change_label,
    text: row.text,
    author: row.author_id,
    parent: row.parent_id,
    resolved: row.parent_id === null ? toBool(row.resolved) : false,
    created: row.created,
    last_updated: row.last_updated,
  };
}
