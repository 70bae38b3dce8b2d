import { listOf } from '../../../../contract/api/common';
import { mergeQueueEntry, type MergeQueueEntry } from '../../../../contract/api/freezes';
import { grantAllows, ValidationError, type Host } from '../../../host';
import { ccDb } from '../db/database';
import { changeRequestUrl, displayOfChangeRequest, snapshotChangeRequest } from '../change-requests/snapshot';
import { API_ROOT, APP_LABEL, CHANGE_REQUEST_TYPE } from '../names';
import { queuePage } from './queue-repository';

const KNOWN = new Set(['limit', 'offset', 'format']);
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

function count(raw: string | undefined, name: string, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw ValidationError.field(name, 'A non-negative integer is required.');
  return Math.min(Number(raw), max);
}

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
    summary: 'The merge queue: ready requests set to merge automatically, in the order they merge (only those the caller may view; positions count the whole queue)',
    tag: 'change-control',
    query: [
      { name: 'limit', description: `How many entries (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).` },
      { name: 'offset', description: 'How many visible entries to skip.' },
    ],
    response: listOf(mergeQueueEntry),
    handler: async ({ ctx, query, url }) => {
      for (const name of Object.keys(query)) if (!KNOWN.has(name)) throw ValidationError.field(name, `Unknown parameter "${name}".`);
      const limit = count(query.limit?.[0], 'limit', DEFAULT_LIMIT, MAX_LIMIT);
      const offset = count(query.offset?.[0], 'offset', 0, Number.MAX_SAFE_INTEGER);
      const perms = await ctx.host.permissions.forUser(ctx.user!, ctx.db);
      const grant = perms.grant(CHANGE_REQUEST_TYPE, 'view');
      const { rows } = await queuePage(ctx, MAX_LIMIT * 10, 0);
      const requests = rows.length
        ? new Map((await ccDb(ctx).selectFrom('cc_change_requests').selectAll().where('id', 'in', rows.map((r) => r.change_request_id)).execute()).map((r) => [r.id, r]))
        : new Map();
      const visible: MergeQueueEntry[] = [];
      rows.forEach((job, i) => {
        const cr = requests.get(job.change_request_id);
        if (!cr || !grantAllows(grant, snapshotChangeRequest(ctx, cr), ctx.user!)) return;
        visible.push({
          position: i + 1,
          change_request: { id: cr.id, url: changeRequestUrl(ctx, cr.id), display: displayOfChangeRequest(cr) },
          branch: job.branch_id,
          state: job.state === 'running' ? 'running' : 'pending',
          queued: job.created,
        });
      });
      const page = visible.slice(offset, offset + limit);
      const link = (o: number) => {
        const u = new URL(url.toString());
        u.searchParams.set('limit', String(limit));
        u.searchParams.set('offset', String(o));
        return u.toString();
      };
      return {
        count: visible.length,
        next: offset + limit < visible.length ? link(offset + limit) : null,
        previous: offset > 0 ? link(Math.max(0, offset - limit)) : null,
        results: page,
      };
    },
  });
}
