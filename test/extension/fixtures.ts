// Objects as the service sends them, parsed with the contract's schemas so that a fixture that
// drifts from the contract fails loudly.
import { changeDiff, type ChangeDiff } from '../../contract/api/branching';
import {
  CALLER_ACTIONS,
  changeComment,
  changeRequest,
  evaluation,
  mergeCheck,
  review,
  type CallerAction,
  type ChangeComment,
  type ChangeRequest,
  type Evaluation,
  type MergeCheck,
  type Review,
} from '../../contract/api/change-control';
import type { ChangeRequestSnapshot } from '../../contract/webview/protocol';
import { currentUser, type CurrentUser } from '../../contract/api/host';

export const ALICE = { id: 2, username: 'alice', display: 'Alice' };
export const BOB = { id: 3, username: 'bob', display: 'Bob' };

const base = (id: number, kind: string, time = '2026-11-01T09:00:00.000Z') => ({
  id,
  url: `http://127.0.0.1:8000/api/${kind}/${id}/`,
  display: `${kind} ${id}`,
  created: time,
  last_updated: time,
});

/** `allowed` lists the actions the caller may take; the others carry a reason. */
export function actions(
  allowed: CallerAction[] = [],
  reasons: Partial<Record<CallerAction, string>> = {},
): ChangeRequest['actions'] {
  return Object.fromEntries(
    CALLER_ACTIONS.map((a) => [
      a,
      allowed.includes(a)
        ? { allowed: true, reason: null }
        : {
            allowed: false,
            // As the service says it to most callers: the override names the permission they lack.
            reason:
              reasons[a] ??
              (a === 'override'
                ? 'You need change_control.override_gate to override the merge gate of this change request.'
                : `${a} is not possible now.`),
          },
    ]),
  ) as ChangeRequest['actions'];
}

export function makeChangeRequest(over: Partial<ChangeRequest> & { id: number }): ChangeRequest {
  return changeRequest.parse({
    ...base(over.id, 'plugins/change-control/change-requests'),
    title: `Change ${over.id}`,
    description: '',
    ref: `CR-${over.id}`,
    status: 'needs-review',
    priority: 'medium',
    requester: BOB,
    branch: 100 + over.id,
    branch_name: `branch-${over.id}`,
    branch_deleted: false,
    approved: false,
    ready_to_merge: false,
    merge_blocked_reason: 'Rule "Network team" needs 1 more approval.',
    has_conflicts: false,
    gates_cleared: false,
    override: null,
    digest: null,
    scheduled_start: null,
    scheduled_end: null,
    auto_merge: false,
    comments: '',
    policies: [],
    actions: actions(),
    ...over,
  });
}

export function makeCheck(over: Partial<MergeCheck> & { id: number }): MergeCheck {
  return mergeCheck.parse({
    ...base(over.id, 'plugins/change-control/checks'),
    change_request: 1,
    name: `check-${over.id}`,
    label: `Check ${over.id}`,
    status: 'pending',
    summary: '',
    details_url: '',
    required: true,
    blocks_merge: true,
    completed: null,
    digest: null,
    outdated: false,
    ...over,
  });
}

export function makeReview(over: Partial<Review> & { id: number }): Review {
  return review.parse({
    ...base(over.id, 'plugins/change-control/reviews'),
    change_request: 1,
    decision: 'approve',
    comment: '',
    comment_html: '',
    reviewer: ALICE,
    stale: false,
    digest: null,
    ...over,
  });
}

export function makeComment(over: Partial<ChangeComment> & { id: number }): ChangeComment {
  return changeComment.parse({
    ...base(
      over.id,
      'plugins/change-control/change-comments',
      `2026-11-01T10:00:${String(over.id % 60).padStart(2, '0')}.000Z`,
    ),
    change_request: 1,
    change_diff: 11,
    change_label: 'dcim.device sw1',
    text: `Comment ${over.id}`,
    text_html: '',
    author: ALICE,
    parent: null,
    resolved: false,
    ...over,
  });
}

export function makeChange(over: Partial<ChangeDiff> & { id: number }): ChangeDiff {
  return changeDiff.parse({
    url: `http://127.0.0.1:8000/api/plugins/branching/changes/${over.id}/`,
    display: `change ${over.id}`,
    branch: 101,
    object_type: 'dcim.device',
    object_id: 5,
    object_repr: 'sw1',
    action: 'update',
    original: { name: 'sw1', status: 'planned', vlan: 10 },
    modified: { name: 'sw1', status: 'active', vlan: 10 },
    current: { name: 'sw1', status: 'planned', vlan: 20 },
    conflicts: null,
    last_updated: '2026-11-01T09:30:00.000Z',
    ...over,
  });
}

export function makeEvaluation(over: Partial<Evaluation> = {}): Evaluation {
  return evaluation.parse({
    change_request: 1,
    status: 'needs-review',
    approved: false,
    policies: [
      {
        id: 1,
        name: 'Core network',
        matched_object_types: ['dcim.device'],
        checks: ['has-changes'],
        enforcement: 'active',
        blocking_reasons: ['Rule "Network team" of policy "Core network" has 1 of 2 required approvals.'],
        rules: [
          {
            id: 7,
            name: 'Network team',
            min_reviews: 2,
            approvals: 1,
            satisfied: false,
            approvers: [ALICE],
            eligible_users: [ALICE],
            eligible_groups: [
              { id: 4, name: 'netops', empty: false },
              { id: 5, name: 'ghosts', empty: true },
            ],
            empty_groups: ['ghosts'],
            outstanding_reviewers: [{ id: 9, username: 'carol', display: 'Carol' }],
          },
        ],
      },
    ],
    stale_reviews: [{ id: 30, reviewer: { id: 9, username: 'carol', display: 'Carol' }, decision: 'approve' }],
    rejections: [],
    reasons: ['Rule "Network team" needs 1 more approval.'],
    ...over,
  });
}

export function makeSnapshot(over: Partial<ChangeRequestSnapshot> = {}): ChangeRequestSnapshot {
  return {
    me: ALICE,
    changeRequest: makeChangeRequest({
      id: 1,
      actions: actions(['review', 'comment', 'abandon', 'return_to_draft', 'run_checks']),
    }),
    evaluation: makeEvaluation(),
    checks: [
      makeCheck({ id: 1, name: 'has-changes', label: 'Branch has changes', status: 'success', blocks_merge: false }),
      makeCheck({ id: 2, name: 'ci', label: 'CI', details_url: 'https://ci.example/run/1' }),
    ],
    changes: [
      makeChange({ id: 11 }),
      makeChange({
        id: 12,
        object_repr: 'sw2',
        action: 'create',
        original: null,
        current: null,
        modified: { name: 'sw2', status: 'active' },
      }),
    ],
    comments: [],
    reviews: [],
    history: null,
    problems: [],
    loadedAt: '2026-11-01T11:00:00.000Z',
    ...over,
  };
}

/** The signed-in user as `users/me/` answers. */
export function makeUser(over: Partial<CurrentUser> & { id: number; username: string }): CurrentUser {
  return currentUser.parse({
    url: `http://127.0.0.1:8000/api/users/users/${over.id}/`,
    display: over.username,
    created: '2026-11-01T09:00:00Z',
    last_updated: '2026-11-01T09:00:00Z',
    first_name: '',
    last_name: '',
    email: '',
    is_superuser: false,
    is_active: true,
    groups: [],
    ...over,
  });
}
