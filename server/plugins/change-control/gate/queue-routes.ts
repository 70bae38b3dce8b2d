import { listOf } from '../../../../contract/api/common';
import { mergeQueueEntry, type MergeQueueEntry } from '../../../../contract/api/freezes';
import { grantAllows, type Host } from '../../../host';
import {
  envelope,
  parseOrdering,
  parsePage,
  parseSearch,
  parseShape,
  rejectUnknownParams,
  shapeObject,
} from '../../../host/http';
import { changeRequestRowsByIds } from '../change-requests/repository';
import { changeRequestUrl, displayOfChangeRequest, snapshotChangeRequest } from '../change-requests/snapshot';
import { API_ROOT, APP_LABEL, CHANGE_REQUEST_TYPE } from '../names';
import { queuePage } from './queue-repository';
import { freezesHolding } from './queue-freezes';

/** How much of the queue is read at most (it holds only ready requests set to merge automatically). */
const MAX_QUEUE = 10_000;

/**
 * GET `merge-queue/`: the merge queue, head first, as far as the caller may see it. Only
 * requests the caller may view are listed; each keeps its position in the whole queue, so a
 * gap says that requests the caller cannot see are ahead (how many, nothing else about them):
 * what an author needs to know of when theirs will go.
 */
export function registerMergeQueueRoute(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: `${API_ROOT}merge-queue/`,
    access: { permission: `${APP_LABEL}.view_changerequest` },
    summary:
      'The merge queue: ready requests set to merge automatically, in the order they merge (only those the caller may view; positions count the whole queue)',
    tag: 'change-control',
    query: [
      { name: 'q', description: "Entries whose change request's display contains this text." },
      { name: 'ordering', description: '"position" (the default) or "-position".' },
    ],
    response: listOf(mergeQueueEntry),
    handler: async ({ ctx, query, url }) => {
      rejectUnknownParams(query, []);
      const page = parsePage(query);
      const order = parseOrdering(query, ['position'], [{ field: 'position', desc: false }]);
      const terms = parseSearch(query).map((t) => t.toLowerCase());
      const shape = parseShape(query);
      const perms = await ctx.host.permissions.forUser(ctx.user!, ctx.db);
      const grant = perms.grant(CHANGE_REQUEST_TYPE, 'view');
      const { rows } = await queuePage(ctx, MAX_QUEUE, 0);
      const requests = await changeRequestRowsByIds(
        ctx,
        rows.map((r) => r.change_request_id),
      );
      const held = await freezesHolding(
        ctx,
        rows.map((r) => r.change_request_id),
      );
      const visible: MergeQueueEntry[] = [];
      rows.forEach((job, i) => {
        const cr = requests.get(job.change_request_id);
        if (!cr || !grantAllows(grant, snapshotChangeRequest(ctx, cr), ctx.user!)) return;
        // A request that completed another way (an override, a merge by hand) has left the queue.
        if (cr.status === 'completed' || cr.status === 'abandoned') return;
        const display = displayOfChangeRequest(cr);
        if (!terms.every((t) => display.toLowerCase().includes(t))) return;
        visible.push({
          id: cr.id,
          url: changeRequestUrl(ctx, cr.id),
          display,
          position: i + 1,
          branch: job.branch_id,
          state: job.state === 'running' ? 'running' : 'pending',
          queued: job.created,
          waiting_for_freeze: held.get(cr.id) ?? null,
        });
      });
      if (order[0]?.desc) visible.reverse();
      return envelope(
        visible.slice(page.offset, page.offset + page.limit).map((e) => shapeObject(e, shape)),
        visible.length,
        page,
        url,
      );
    },
  });
}
