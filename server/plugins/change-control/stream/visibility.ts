import { BRANCH_TYPE, findBranch, presentBranch } from '../../branching';
import { type AuthUser, type Ctx, grantAllows, type UserPermissions } from '../../../host';
import { presentCheckRows } from '../checks/present';
import { readCheckRow } from '../checks/repository';
import { commentTable, snapshotComment } from '../comments/repository';
import { getChangeRequestRow } from '../change-requests/repository';
import { snapshotChangeRequest } from '../change-requests/snapshot';
import type { StreamEventRow } from '../db/tables';
import { CHANGE_COMMENT_TYPE, CHANGE_REQUEST_TYPE, MERGE_CHECK_TYPE, REVIEW_TYPE } from '../names';
import { reviewTable, snapshotReview } from '../reviews/repository';
import { ccDb } from '../db/database';
import { visibleRequestIds } from '../change-requests/visibility-repository';
import { FREEZE_SCOPE, viewsRequestOfFreezeScope } from './stream-repository';

/**
 * Who receives an event: a caller who may view the change request it names and the object it
 * names (view permission with its constraints), decided when the event is sent, against the
 * objects as they are then. A deletion is judged against the removed object's stored fields.
 * An object gone since (and not by this event) is not judged at all: its event is not sent to a
 * caller whose permission has constraints (its deletion follows).
 */
type Subject = Record<string, unknown>;
type Loader = (ctx: Ctx, id: number) => Promise<Subject | null>;

const LOADERS: Record<string, Loader> = {
  [CHANGE_REQUEST_TYPE]: async (ctx, id) => {
    const row = await getChangeRequestRow(ctx, id);
    return row ? snapshotChangeRequest(ctx, row) : null;
  },
  [CHANGE_COMMENT_TYPE]: async (ctx, id) => {
    const row = await commentTable.byId(ctx, id);
    return row ? snapshotComment(ctx, row) : null;
  },
  [REVIEW_TYPE]: async (ctx, id) => {
    const row = await reviewTable.byId(ctx, id);
    return row ? snapshotReview(ctx, row) : null;
  },
  [MERGE_CHECK_TYPE]: async (ctx, id) => {
    const row = await readCheckRow(ctx, id);
    return row ? ((await presentCheckRows(ctx, [row]))[0] ?? null) : null;
  },
  [BRANCH_TYPE]: async (ctx, id) => {
    const row = await findBranch(ctx, id);
    return row ? presentBranch(ctx, row) : null;
  },
};

const DELETIONS = new Set(['change_request_deleted', 'review_deleted', 'comment_deleted', 'check_deleted']);

/**
 * Objects loaded for the constraints of one round of sending, shared by every open stream (a
 * round starts at each commit signal, so nothing older than the last commit is reused).
 */
export class SubjectCache {
  private readonly entries = new Map<string, Promise<Subject | null>>();
  private static readonly LIMIT = 20_000;

  get(ctx: Ctx, objectType: string, id: number): Promise<Subject | null> {
    const key = `${objectType}:${id}`;
    let entry = this.entries.get(key);
    if (!entry) {
      if (this.entries.size >= SubjectCache.LIMIT) this.entries.clear();
      const loader = LOADERS[objectType];
      entry = loader ? loader(ctx, id) : Promise.resolve(null);
      this.entries.set(key, entry);
    }
    return entry;
  }
}

async function admits(
  ctx: Ctx,
  perms: UserPermissions,
  user: AuthUser,
  objectType: string,
  id: number,
  deleted: Subject | null,
  cache: SubjectCache,
): Promise<boolean> {
  const grant = perms.grant(objectType, 'view');
  if (grant === true || grant === false) return grant;
  const subject = deleted ?? (await cache.get(ctx, objectType, id));
  return subject !== null && grantAllows(grant, subject, user);
}

/** Whether this caller may receive this event now. */
export async function mayReceive(
  ctx: Ctx,
  perms: UserPermissions,
  user: AuthUser,
  row: StreamEventRow,
  cache: SubjectCache,
  among: readonly number[] | null = null,
): Promise<boolean> {
  if (row.change_request_id === FREEZE_SCOPE) {
    // A freeze's change reaches whoever may view an open request it applies to (one event, not one per request).
    const scope = row.subject ? (JSON.parse(row.subject) as { policy?: number | null }) : {};
    return viewsRequestOfFreezeScope(ccDb(ctx), scope.policy ?? null, await visibleRequestIds(ctx), among);
  }
  const deleted = DELETIONS.has(row.event) && row.subject ? (JSON.parse(row.subject) as Subject) : null;
  const ownEvent = row.object_type === CHANGE_REQUEST_TYPE;
  if (!(await admits(ctx, perms, user, CHANGE_REQUEST_TYPE, row.change_request_id, ownEvent ? deleted : null, cache)))
    return false;
  if (ownEvent) return true;
  return admits(ctx, perms, user, row.object_type, row.object_id, deleted, cache);
}
