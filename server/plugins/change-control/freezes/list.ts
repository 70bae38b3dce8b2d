import { type Ctx, defineList } from '../../../host';
import { ccDb } from '../db/database';
import { presentFreeze } from './repository';

/** `freezes/`: filters, `q` over name and description, ordering. */
export const freezeList = defineList({
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_freezes').selectAll(),
  columnFilters: {
    name: 'string',
    enabled: 'bool',
    kind: { type: 'string', description: '"once" or "recurring".' },
    policy_id: { type: 'int', description: 'Freezes of this policy.' },
  },
  filters: {
    global: {
      type: 'bool',
      description: 'true: freezes of every request (no policy); false: freezes of a policy.',
      isNull: 'policy_id',
    },
  },
  ordering: {
    id: 'id',
    name: 'name',
    kind: 'kind',
    start: 'start_at',
    created: 'created',
    last_updated: 'last_updated',
  },
  search: ['name', 'description'],
  present: async (ctx, rows) => rows.map((r) => presentFreeze(ctx, r)),
});
