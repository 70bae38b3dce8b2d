import { briefObject, type Ctx } from '../../../host';
import { JOURNAL_OBJECT_TYPE, type JournalEntry } from '../../../../contract/api/change-control';
import { ccDb, nowIso } from '../db/database';
import type { JournalEntryRow } from '../db/tables';
import { loadUsers } from '../evaluation/load';
import { renderMarkdown } from '../markdown';

export const JOURNAL_ENTRY_TYPE = 'extras.journalentry';
export const JOURNAL_PATH = '/api/extras/journal-entries/';

export async function getJournalRow(ctx: Ctx, id: number): Promise<JournalEntryRow | undefined> {
  return ccDb(ctx).selectFrom('cc_journal_entries').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertJournalEntry(
  ctx: Ctx,
  values: { changeRequestId: number; kind: string; comments: string },
): Promise<number> {
  const now = nowIso(ctx);
  const row = await ccDb(ctx)
    .insertInto('cc_journal_entries')
    .values({
      assigned_object_type: JOURNAL_OBJECT_TYPE,
      assigned_object_id: values.changeRequestId,
      kind: values.kind,
      comments: values.comments,
      created_by_id: ctx.user!.id,
      created: now,
      last_updated: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateJournalEntry(
  ctx: Ctx,
  id: number,
  set: { kind?: string; comments?: string },
): Promise<void> {
  await ccDb(ctx)
    .updateTable('cc_journal_entries')
    .set({ ...set, last_updated: nowIso(ctx) })
    .where('id', '=', id)
    .execute();
}

export async function deleteJournalEntry(ctx: Ctx, id: number): Promise<void> {
  await ccDb(ctx).deleteFrom('cc_journal_entries').where('id', '=', id).execute();
}

/** Entries as the API shows them: the Markdown as written and rendered safely. */
export async function presentJournalEntries(ctx: Ctx, rows: readonly JournalEntryRow[]): Promise<JournalEntry[]> {
  const users = await loadUsers(
    ctx,
    rows.map((r) => r.created_by_id),
  );
  return rows.map((row) => {
    const author = users.get(row.created_by_id) ?? {
      id: row.created_by_id,
      username: `user ${row.created_by_id}`,
      display: `user ${row.created_by_id}`,
    };
    return {
      ...briefObject(ctx, JOURNAL_PATH, row.id, `${row.created.slice(0, 16).replace('T', ' ')} (${row.kind})`),
      assigned_object_type: row.assigned_object_type,
      assigned_object_id: row.assigned_object_id,
      kind: row.kind as JournalEntry['kind'],
      comments: row.comments,
      comments_html: renderMarkdown(row.comments),
      created_by: author,
      created: row.created,
      last_updated: row.last_updated,
    };
  });
}
