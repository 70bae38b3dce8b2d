import { readyBranchesChanging, type Ctx, type EmittedEvent, type Host } from '../../../host';
import { requestRefresh } from '../change-requests/refresh';
import { openChangeRequestIdsOfBranches } from '../change-requests/repository';

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
  const branchIds = await readyBranchesChanging(ctx, event.objectType, event.objectId);
  for (const id of await openChangeRequestIdsOfBranches(ctx, branchIds))
    await requestRefresh(ctx, id, { rematch: false, checks: true });
}

export function registerCheckTriggers(host: Host): void {
  host.events.subscribe(mainObjectMoved);
}
