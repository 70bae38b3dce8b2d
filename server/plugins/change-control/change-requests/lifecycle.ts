import type { ChangeRequestStatus, LifecycleAction } from '../../../../contract/api/change-control';
import { PERMISSIONS } from '../names';

/**
 * The four person-driven moves, as data (the states table of the specification). Anything
 * else that moves a status is evaluation (`status.ts`) or the merge (`completed`).
 */
export interface LifecycleMove {
  /** States the move applies in; elsewhere it is refused with 409. */
  from: readonly ChangeRequestStatus[];
  permission: string;
  /** The state it lands on; `derived` means evaluation decides (submit). */
  to: ChangeRequestStatus | 'derived';
  /** Needs the branch to still exist. */
  needsBranch: boolean;
  /** Past tense, for messages. */
  done: string;
}

export const LIFECYCLE: { readonly [A in LifecycleAction]: LifecycleMove } = {
  submit: { from: ['draft'], permission: PERMISSIONS.submit, to: 'derived', needsBranch: true, done: 'submitted' },
  'return-to-draft': {
    from: ['needs-review', 'approved', 'rejected'],
    permission: PERMISSIONS.returnToDraft,
    to: 'draft',
    needsBranch: false,
    done: 'returned to draft',
  },
  abandon: {
    from: ['draft', 'needs-review', 'approved', 'rejected'],
    permission: PERMISSIONS.abandon,
    to: 'abandoned',
    needsBranch: false,
    done: 'abandoned',
  },
  reopen: { from: ['abandoned'], permission: PERMISSIONS.reopen, to: 'draft', needsBranch: false, done: 'reopened' },
};

const STATE_WORDS: Record<ChangeRequestStatus, string> = {
  draft: 'a draft',
  'needs-review': 'under review',
  approved: 'approved',
  rejected: 'rejected (changes requested)',
  completed: 'completed',
  abandoned: 'abandoned',
};

/** Why `action` does not apply in `status` (the 409 `detail`), or null when it does. */
export function lifecycleRefusal(
  action: LifecycleAction,
  status: ChangeRequestStatus,
  branchExists: boolean,
): string | null {
  const move = LIFECYCLE[action];
  if (!move.from.includes(status)) {
    const allowed = move.from.map((s) => `"${s}"`).join(', ');
    return `Cannot ${action.replace(/-/g, ' ')} a change request that is ${STATE_WORDS[status]}; "${action}" applies only to ${allowed}.`;
  }
  if (move.needsBranch && !branchExists)
    return `Cannot ${action.replace(/-/g, ' ')}: the branch of this change request has been deleted.`;
  return null;
}
