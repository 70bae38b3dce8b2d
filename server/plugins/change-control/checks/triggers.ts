import type { Ctx, EmittedEvent, Host } from '../../../host';
import { requestRefresh } from '../change-requests/refresh';
import { ccDb } from '../db/database';

/**
 * Refresh trigger 6 from main's side: a branch diff shows main's current state of each object
 * it touches (`current`) and its conflicts with main. A write on main (a direct write, another
 * branch's merge or revert) of an object that open requests' branches also change moves those
 * diffs, so their checks run again (`no-conflicts` among them) and no merge relies on a result
 * computed against an older main.
 */
async function mainObjectMoved(ctx: Ctx, event: EmittedEvent): Promise<void> {
  if (ctx.branch !== null || !ctx.host.objectTypes.get(event.objectType)?.sourceOfTruth) return;
  if (event.event !== 'object_updated' && event.event !== 'object_deleted' && event.event !== 'object_created') return;
  const affected = await ccDb(ctx)
    .selectFrom('branch_changes')
    .innerJoin('branches', 'branches.id', 'branch_changes.branch_id')
    .innerJoin('cc_change_requests', 'cc_change_requests.branch_id', 'branch_changes.branch_id')
    .select('cc_change_requests.id as id')
    .where('branch_changes.object_type', '=', event.objectType)
    .where('branch_changes.object_id', '=', event.objectId)
    .where('branches.status', '=', 'ready')
    .where('cc_change_requests.status', 'not in', ['completed', 'abandoned'])
    .execute();
  for (const { id } of affected) await requestRefresh(ctx, id, { rematch: false, checks: true });
}

export function registerCheckTriggers(host: Host): void {
  host.events.subscribe(mainObjectMoved);
}
