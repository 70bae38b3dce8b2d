import type { z } from 'zod';
import {
  journalEntry as journalOutput,
  journalEntryCreate,
  journalEntryUpdate,
  type JournalEntry,
} from '../../../../contract/api/change-control';
import { type Ctx, type Host, type ApiObject, ValidationError } from '../../../host';
import { registerResource } from '../../../host/http';
import { changeRequestNamedInBody } from '../change-requests/repository';
import { mayViewRequestId } from '../change-requests/visibility-repository';
import { journalList } from './list';
import {
  deleteJournalEntry,
  getJournalRow,
  insertJournalEntry,
  JOURNAL_ENTRY_TYPE,
  JOURNAL_PATH,
  presentJournalEntries,
  updateJournalEntry,
} from './repository';

type EntryOut = JournalEntry & ApiObject;
type CreateInput = z.infer<typeof journalEntryCreate>;
type UpdateInput = z.infer<typeof journalEntryUpdate>;

/** An entry the caller may see (they may view its change request), else undefined. */
async function getEntry(ctx: Ctx, id: number): Promise<EntryOut | undefined> {
  const row = await getJournalRow(ctx, id);
  if (!row || !(await mayViewRequestId(ctx, row.assigned_object_id))) return undefined;
  return (await presentJournalEntries(ctx, [row]))[0] as EntryOut;
}

/**
 * The change request a body names, when the caller may view it: otherwise 400 "does not exist"
 * on `assigned_object_id`, exactly as for an id no request has.
 */
async function requestNamed(ctx: Ctx, id: number): Promise<number> {
  try {
    return (await changeRequestNamedInBody(ctx, id)).id;
  } catch (err) {
    if (err instanceof ValidationError)
      throw ValidationError.field('assigned_object_id', `Change request ${id} does not exist.`);
    throw err;
  }
}

/**
 * `/api/extras/journal-entries/` (permissions `extras.*_journalentry`): notes on change requests,
 * as NetBox keeps them. The author is always the caller; only holders of the journal permissions
 * edit or delete (constraints apply); an entry stays on the request it was written on.
 */
export function registerJournalRoutes(host: Host): void {
  host.objectTypes.register({ appLabel: 'extras', model: 'journalentry', display: 'Journal entry' });
  registerResource(host.routes, {
    tag: 'extras',
    objectType: JOURNAL_ENTRY_TYPE,
    path: JOURNAL_PATH,
    output: journalOutput,
    list: journalList,
    get: getEntry,
    create: {
      body: journalEntryCreate,
      run: async (ctx, input: CreateInput) =>
        insertJournalEntry(ctx, {
          changeRequestId: await requestNamed(ctx, input.assigned_object_id),
          kind: input.kind,
          comments: input.comments,
        }),
    },
    update: {
      body: journalEntryUpdate,
      run: async (ctx, existing, input: UpdateInput) => {
        if (input.assigned_object_id !== undefined && input.assigned_object_id !== existing.assigned_object_id) {
          throw ValidationError.field(
            'assigned_object_id',
            'A journal entry stays on the change request it was written on.',
          );
        }
        await updateJournalEntry(ctx, existing.id, {
          ...(input.kind !== undefined ? { kind: input.kind } : {}),
          ...(input.comments !== undefined ? { comments: input.comments } : {}),
        });
      },
    },
    remove: async (ctx, existing) => deleteJournalEntry(ctx, existing.id),
    snapshot: (o) => ({ ...o, created_by: o.created_by.id, comments_html: undefined }),
  });
}
