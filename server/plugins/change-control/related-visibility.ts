import { ChangeVisibility } from '../branching';
import type { Ctx, Host } from '../../host';
import { visibleCommentRows } from './comments/repository';
import { visibleRequestIds } from './change-requests/visibility-repository';
import { JOURNAL_ENTRY_TYPE } from './journal/repository';
import {
  CHANGE_COMMENT_TYPE,
  CHANGE_REQUEST_TYPE,
  FREEZE_TYPE,
  MERGE_CHECK_TYPE,
  POLICY_RULE_TYPE,
  POLICY_TYPE,
  REVIEW_TYPE,
} from './names';

/** The change request a recorded review, check, comment (`change_request`) or journal entry (`assigned_object_id`) belongs to. */
function requestOf(state: Record<string, unknown>): number | null {
  const id = state.change_request ?? state.assigned_object_id;
  return typeof id === 'number' ? id : null;
}

const owner = { objectType: CHANGE_REQUEST_TYPE, visibleIds: visibleRequestIds, idOf: requestOf };

/**
 * Comments recorded in the changelog, judged as the comments list judges them: a comment shows a
 * changed object (its label), so only callers who may see that change see it. A record without
 * the object it was anchored to (kept before the changelog recorded it) shows to callers whose
 * view of changes is unrestricted only.
 */
async function admitComments(
  ctx: Ctx,
): Promise<((states: ReadonlyArray<Record<string, unknown>>) => Promise<boolean[]>) | null> {
  const visibility = await ChangeVisibility.load(ctx);
  if (visibility.unrestricted) return null;
  return async (states) => {
    const rows = states.flatMap((s, i) =>
      typeof s.change_object_type === 'string' &&
      typeof s.change_object_id === 'number' &&
      typeof s.change_request === 'number'
        ? [
            {
              id: i,
              change_request_id: s.change_request,
              change_diff_id: typeof s.change_diff === 'number' ? s.change_diff : null,
              change_object_type: s.change_object_type,
              change_object_id: s.change_object_id,
              created: typeof s.created === 'string' ? s.created : '',
            },
          ]
        : [],
    );
    const visible = new Set((await visibleCommentRows(ctx, rows, visibility)).map((r) => r.id));
    return states.map((_, i) => visible.has(i));
  };
}

/**
 * What the host's changelog and notifications show of the plugin's object types: a change request
 * and what belongs to it (reviews, checks, comments, journal entries) only to callers who may view
 * that request; each type only to holders of its view permission; comments only where their
 * change is visible; policies, rules and freezes by their own view permission.
 */
export function registerRelatedVisibility(host: Host): void {
  host.relatedVisibility.register({ objectTypes: [REVIEW_TYPE, MERGE_CHECK_TYPE, JOURNAL_ENTRY_TYPE], owner });
  host.relatedVisibility.register({ objectTypes: [CHANGE_COMMENT_TYPE], owner, admit: admitComments });
  host.relatedVisibility.register({ objectTypes: [POLICY_TYPE, POLICY_RULE_TYPE, FREEZE_TYPE] });
}
