import { type Ctx, defineList } from '../../../host';
import { CHECK_STATUSES } from '../../../../contract/api/change-control';
import { ccDb } from '../db/database';
import { presentCheckRows } from './present';

/** `checks/`: filters, `q` over name, label and summary, ordering. */
export const checkList = defineList({
  name: 'checks',
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_merge_checks').selectAll(),
  filters: {
    id: { type: 'int', column: 'id' },
    change_request_id: { type: 'int', column: 'change_request_id' },
    name: { type: 'string', column: 'name' },
    status: { type: 'choice', choices: CHECK_STATUSES, column: 'status' },
  },
  ordering: { id: 'id', name: 'name', status: 'status', completed: 'completed', created: 'created', last_updated: 'last_updated' },
  search: ['name', 'label', 'summary'],
  present: presentCheckRows,
});
