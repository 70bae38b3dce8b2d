import { type ApiObject, type Ctx, defineList, createdRange, lastUpdatedRange } from '../../../host';
import type { JournalEntry } from '../../../../contract/api/change-control';
import { ccDb } from '../db/database';
import { presentJournalEntries } from './repository';
import { rowsOfVisibleRequests } from '../change-requests/visibility-repository';

/** `/api/extras/journal-entries/`: filters, `q` over the comments, ordering (newest first by default). */
export const journalList = defineList({
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_journal_entries').selectAll(),
  columnFilters: {
    assigned_object_type: { type: 'string', description: 'The object type ("change_control.changerequest").' },
    assigned_object_id: { type: 'int', description: "The change request's id." },
    kind: { type: 'string', description: 'info, success, warning or danger (several: any of them).' },
    created_by_id: { type: 'int', allowMe: true, description: 'Author user id, or "me".' },
    created: createdRange,
    last_updated: lastUpdatedRange,
  },
  ordering: { id: 'id', created: 'created', last_updated: 'last_updated', kind: 'kind' },
  defaultOrdering: [
    { field: 'created', desc: true },
    { field: 'id', desc: true },
  ],
  search: ['comments'],
  // An entry of a change request the caller may not view does not exist for them.
  visible: rowsOfVisibleRequests('cc_journal_entries.assigned_object_id'),
  present: async (ctx, rows) => (await presentJournalEntries(ctx, rows)) as Array<JournalEntry & ApiObject>,
});
