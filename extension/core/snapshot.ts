// Loads everything the change request webview shows. The request itself must load; the other
// parts load side by side and a part that fails is named in `problems` instead of failing all.
import type { ChangeRequestSnapshot } from '../../webview/protocol';
import type { ApiClient } from './api-client';
import { asApiError } from './api-error';
import type { CurrentUser } from '../../server/contract/host';

type SnapshotClient = Pick<ApiClient, 'getChangeRequest' | 'getEvaluation' | 'listChecks' | 'listReviews' | 'listComments' | 'listChanges'>;

export async function loadSnapshot(client: SnapshotClient, changeRequestId: number, me: Pick<CurrentUser, 'id' | 'username' | 'display'>, now: () => Date = () => new Date()): Promise<ChangeRequestSnapshot> {
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
  const [evaluation, checks, reviews, comments, changes] = await Promise.all([
    part('The approval panel', () => client.getEvaluation(cr.id), null),
    part('Checks', () => client.listChecks(cr.id), []),
    part('Reviews', () => client.listReviews(cr.id), []),
    part('Comments', () => client.listComments(cr.id), []),
    branchId === null ? Promise.resolve([]) : part('Changes', () => client.listChanges(branchId), []),
  ]);
  return {
    me: { id: me.id, username: me.username, display: me.display },
    changeRequest: cr,
    evaluation,
    checks: [...checks].sort((a, b) => Number(b.blocks_merge) - Number(a.blocks_merge) || Number(b.required) - Number(a.required) || a.name.localeCompare(b.name)),
    changes: [...changes].sort((a, b) => a.object_type.localeCompare(b.object_type) || a.object_repr.localeCompare(b.object_repr) || a.id - b.id),
    comments: [...comments].sort((a, b) => a.created.localeCompare(b.created) || a.id - b.id),
    reviews: [...reviews].sort((a, b) => a.created.localeCompare(b.created) || a.id - b.id),
    problems,
    loadedAt: now().toISOString(),
  };
}
