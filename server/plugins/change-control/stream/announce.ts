import { BRANCH_TYPE } from '../../branching';
import { LIFECYCLE_EVENTS, type LifecycleEvent, type StreamEventType } from '../../../../contract/api/change-control';
import type { Ctx, EmittedEvent, Host } from '../../../host';
import { CHANGE_COMMENT_TYPE, CHANGE_REQUEST_TYPE, FREEZE_TYPE, MERGE_CHECK_TYPE, REVIEW_TYPE } from '../names';
import { announce, changeRequestIdOfBranch, FREEZE_SCOPE, type Announcement } from './stream-repository';

/**
 * Which writes the stream announces. Every write of the plugin's models goes through the
 * changelog and emits an object event; the lifecycle events go through the same pipeline. So
 * the stream follows the event pipeline (inside the writing transaction), plus two sources that
 * emit no object event: what a refresh writes of a change request without a changelog entry
 * (cached fields, attached policies, outstanding reviewers), and writes in a request's branch.
 *
 * - the six lifecycle events, as they fire (naming the change request);
 * - `change_request_created` / `_updated` / `_deleted` (updated at most once per transaction);
 * - `review_deleted` (a review written fires the lifecycle event `review_submitted`);
 * - `comment_created` / `_updated` / `_deleted`;
 * - `check_updated` (a check row created or changed, reported or computed) / `check_deleted`;
 * - `changes_updated` (naming the branch) when the branch of a request gets a write: an object
 *   written in it, a sync, a merge or a revert; at most once per transaction per request.
 */
type Action = 'create' | 'update' | 'delete';

const OBJECT_ACTIONS: Record<string, Action> = {
  object_created: 'create',
  object_updated: 'update',
  object_deleted: 'delete',
};

const BY_TYPE: Record<string, Partial<Record<Action, StreamEventType>>> = {
  [CHANGE_REQUEST_TYPE]: {
    create: 'change_request_created',
    update: 'change_request_updated',
    delete: 'change_request_deleted',
  },
  [REVIEW_TYPE]: { delete: 'review_deleted' },
  [CHANGE_COMMENT_TYPE]: { create: 'comment_created', update: 'comment_updated', delete: 'comment_deleted' },
  [MERGE_CHECK_TYPE]: { create: 'check_updated', update: 'check_updated', delete: 'check_deleted' },
};

/** The stream event an emitted event makes, or null. */
export function announcementOf(
  e: Pick<EmittedEvent, 'event' | 'objectType' | 'objectId' | 'prechange' | 'postchange'>,
): Announcement | null {
  if ((LIFECYCLE_EVENTS as readonly string[]).includes(e.event)) {
    return {
      event: e.event as LifecycleEvent,
      changeRequestId: e.objectId,
      objectType: CHANGE_REQUEST_TYPE,
      objectId: e.objectId,
    };
  }
  const action = OBJECT_ACTIONS[e.event];
  const event = action ? BY_TYPE[e.objectType]?.[action] : undefined;
  if (!action || !event) return null;
  if (e.objectType === CHANGE_REQUEST_TYPE) {
    return {
      event,
      changeRequestId: e.objectId,
      objectType: e.objectType,
      objectId: e.objectId,
      subject: action === 'delete' ? e.prechange : null,
      oncePerTransaction: action === 'update',
    };
  }
  const fields = (action === 'delete' ? e.prechange : e.postchange) ?? {};
  const changeRequestId = fields.change_request;
  if (typeof changeRequestId !== 'number') return null;
  return {
    event,
    changeRequestId,
    objectType: e.objectType,
    objectId: e.objectId,
    subject: action === 'delete' ? e.prechange : null,
  };
}

/**
 * A refresh wrote what shows with a request but has no changelog entry: its cached fields
 * (approved, gates, conflicts), its attached policies, or who waits to review it.
 */
export async function announceRequestCacheWritten(ctx: Ctx, changeRequestId: number): Promise<void> {
  await announce(ctx, {
    event: 'change_request_updated',
    changeRequestId,
    objectType: CHANGE_REQUEST_TYPE,
    objectId: changeRequestId,
    oncePerTransaction: true,
  });
}

/** Time moved this request's gate (its change window opened or closed): `gate_changed`, once per transaction. */
export async function announceGateChanged(ctx: Ctx, changeRequestId: number): Promise<void> {
  await announce(ctx, {
    event: 'gate_changed',
    changeRequestId,
    objectType: CHANGE_REQUEST_TYPE,
    objectId: changeRequestId,
    oncePerTransaction: true,
  });
}

/**
 * A freeze began, ended, comes within notice, or was written: one `gate_changed` naming the
 * freeze, for every open request it applies to (its scope, `{policy}`, decides who receives it),
 * rather than one event per request.
 */
export async function announceFreezeChanged(ctx: Ctx, freezeId: number, policyId: number | null): Promise<void> {
  await announce(ctx, {
    event: 'gate_changed',
    changeRequestId: FREEZE_SCOPE,
    objectType: FREEZE_TYPE,
    objectId: freezeId,
    subject: { policy: policyId },
  });
}

async function announceChangesUpdated(ctx: Ctx, branchId: number): Promise<void> {
  const changeRequestId = await changeRequestIdOfBranch(ctx, branchId);
  if (changeRequestId === undefined) return;
  await announce(ctx, {
    event: 'changes_updated',
    changeRequestId,
    objectType: BRANCH_TYPE,
    objectId: branchId,
    oncePerTransaction: true,
  });
}

export function registerStreamAnnouncements(host: Host): void {
  host.events.subscribe(async (ctx, e) => {
    const a = announcementOf(e);
    if (a) await announce(ctx, a);
  });
  for (const hook of ['changesMoved', 'synced', 'merged', 'reverted'] as const) {
    host.branchHooks.on(hook, async (ctx, { branch }) => announceChangesUpdated(ctx, branch.id));
  }
}
