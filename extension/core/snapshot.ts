// Loads everything the change request webview shows. The request itself must load; the other
// parts load side by side and a part that fails is named in `problems` instead of failing all.
import { CHANGE_REQUEST_TYPE } from '../../contract/api/paths';
import * as z from 'zod';
import type { ChangeRequestSnapshot, LifecycleMove } from '../../contract/webview/protocol';
import type { ApiClient } from './api-client';
import { asApiError } from './api-error';
import type { CurrentUser } from '../../contract/api/host';
import { CHANGE_REQUEST_STATUSES } from '../../contract/api/vocabulary';
import { sortChecks } from '../../contract/checks';

type SnapshotClient = Pick<
  ApiClient,
  'getChangeRequest' | 'getEvaluation' | 'listChecks' | 'listReviews' | 'listComments' | 'listChanges' | 'request'
>;

/** Status moves kept for the timeline (the latest ones). */
export const HISTORY_LIMIT = 200;

const changelogPage = z.object({
  results: z.array(
    z.object({
      id: z.number().int(),
      time: z.string(),
      user_name: z.string().nullable().optional(),
      action: z.string(),
      prechange_data: z.record(z.string(), z.unknown()).nullable(),
      postchange_data: z.record(z.string(), z.unknown()).nullable(),
    }),
  ),
});
type ChangelogEntry = z.infer<typeof changelogPage>['results'][number];

const statusOf = (data: Record<string, unknown> | null) => {
  const s = data?.status;
  return (CHANGE_REQUEST_STATUSES as readonly unknown[]).includes(s) ? (s as LifecycleMove['to']) : null;
};

/** The creation and status moves among a request's changelog entries, oldest first. */
export function lifecycleMoves(entries: readonly ChangelogEntry[]): LifecycleMove[] {
  const out: LifecycleMove[] = [];
  for (const e of [...entries].sort((a, b) => a.time.localeCompare(b.time) || a.id - b.id)) {
    const to = statusOf(e.postchange_data);
    if (!to) continue;
    const from = e.action === 'create' ? null : statusOf(e.prechange_data);
    if (e.action !== 'create' && (from === null || from === to)) continue;
    out.push({ id: e.id, time: e.time, user: e.user_name || null, from, to });
  }
  return out;
}

/** The request's status moves from the changelog; null when the caller may not read it (or it cannot be read). */
async function loadHistory(client: SnapshotClient, changeRequestId: number): Promise<LifecycleMove[] | null> {
  const query = new URLSearchParams({
    changed_object_type: CHANGE_REQUEST_TYPE,
    changed_object_id: String(changeRequestId),
    ordering: '-time',
    limit: String(HISTORY_LIMIT),
  });
  try {
    const page = changelogPage.safeParse(await client.request('GET', `/api/core/object-changes/?${query}`));
    return page.success ? lifecycleMoves(page.data.results) : null;
  } catch {
    return null;
  }
}

export async function loadSnapshot(
  client: SnapshotClient,
  changeRequestId: number,
  me: Pick<CurrentUser, 'id' | 'username' | 'display'>,
  now: () => Date = () => new Date(),
): Promise<ChangeRequestSnapshot> {
  const cr = await client.getChangeRequest(changeRequestId);
  const problems: string[] = [];
  const part = async <T>(what: string, load: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await load();
    } catch (e) {
      problems.push(`${what} could not be loaded: ${asApiError(e).message}`);
      return fallback;
    }
  };
  const branchId = cr.branch_deleted ? null : cr.branch;
  const [evaluation, checks, reviews, comments, changes, history] = await Promise.all([
    part('The approval panel', () => client.getEvaluation(cr.id), null),
    part('Checks', () => client.listChecks(cr.id), []),
    part('Reviews', () => client.listReviews(cr.id), []),
    part('Comments', () => client.listComments(cr.id), []),
    branchId === null ? Promise.resolve([]) : part('Changes', () => client.listChanges(branchId), []),
    loadHistory(client, cr.id),
  ]);
  return {
    me: { id: me.id, username: me.username, display: me.display },
    changeRequest: cr,
    evaluation,
    // The order the Checks view shows them in too.
    checks: sortChecks(checks),
    changes: [...changes].sort(
      (a, b) => a.object_type.localeCompare(b.object_type) || a.object_repr.localeCompare(b.object_repr) || a.id - b.id,
    ),
    comments: [...comments].sort((a, b) => a.created.localeCompare(b.created) || a.id - b.id),
    reviews: [...reviews].sort((a, b) => a.created.localeCompare(b.created) || a.id - b.id),
    history,
    problems,
    loadedAt: now().toISOString(),
  };
}
