import assert from 'node:assert/strict';
import { CALLER_ACTIONS } from '../../contract/api/change-control';
import {
  allowedActions,
  availability,
  changeRequestContextValue,
  mergeBlockedReason,
  whenActionAllowed,
} from '../../extension/core/availability';
import { branchPicks, changeRequestPicks, whyNoneAllowed, withLiveMergeState } from '../../extension/core/pick-items';
import { actions, makeChangeRequest } from './fixtures';

describe("extension: command availability from the service's actions", () => {
  it('reads allowed and the reason from `actions`, never from the status', () => {
    const cr = makeChangeRequest({
      id: 1,
      status: 'draft',
      actions: actions(['abandon'], { submit: 'You may not submit this request.' }),
    });
    assert.deepEqual(availability(cr, 'abandon'), { allowed: true, reason: '' });
    assert.deepEqual(availability(cr, 'submit'), { allowed: false, reason: 'You may not submit this request.' });
    assert.deepEqual(allowedActions(cr), ['abandon']);
  });

  it('treats an action the service did not mention as not allowed, with a reason', () => {
    const cr = makeChangeRequest({ id: 1 });
    const partial = { ...cr, actions: { submit: { allowed: true, reason: null } } as typeof cr.actions };
    assert.equal(availability(partial, 'merge').allowed, false);
    assert.match(availability(partial, 'merge').reason, /does not offer/);
    assert.equal(
      availability({ ...cr, actions: { ...cr.actions, merge: { allowed: false, reason: null } } }, 'merge').reason
        .length > 0,
      true,
    );
  });

  it("encodes allowed actions in the context value that the menus' when clauses match", () => {
    const cr = makeChangeRequest({ id: 1, actions: actions(['submit', 'return_to_draft', 'merge']) });
    const value = changeRequestContextValue(cr);
    assert.equal(value, 'changeRequest;submit;return_to_draft;merge;');
    for (const action of CALLER_ACTIONS) {
      const pattern = /viewItem =~ \/(.*)\/$/.exec(whenActionAllowed(action))![1];
      assert.equal(new RegExp(pattern).test(value), allowedActions(cr).includes(action), action);
    }
    assert.equal(changeRequestContextValue(makeChangeRequest({ id: 2 })), 'changeRequest;');
  });

  it("explains a refused merge: the gate's reason, and the caller's own when it differs", () => {
    const pending = 'Required check "ci" is pending.';
    const gateOnly = makeChangeRequest({
      id: 1,
      merge_blocked_reason: pending,
      actions: actions([], { merge: pending }),
    });
    assert.equal(mergeBlockedReason(gateOnly), pending);
    const both = makeChangeRequest({
      id: 2,
      merge_blocked_reason: pending,
      actions: actions([], { merge: 'You do not have permission to merge branches.' }),
    });
    assert.equal(mergeBlockedReason(both), `${pending} You do not have permission to merge branches.`);
    const readyButNotMine = makeChangeRequest({
      id: 3,
      ready_to_merge: true,
      merge_blocked_reason: '',
      actions: actions([], { merge: 'You do not have permission to merge branches.' }),
    });
    assert.equal(mergeBlockedReason(readyButNotMine), 'You do not have permission to merge branches.');
    const cr = makeChangeRequest({ id: 4, merge_blocked_reason: 'Outside the change window.' });
    assert.equal(
      mergeBlockedReason({ ...cr, actions: { ...cr.actions, merge: { allowed: false, reason: null } } }),
      'Outside the change window.',
    );
    const silent = makeChangeRequest({ id: 5, ready_to_merge: true, merge_blocked_reason: '' });
    assert.match(
      mergeBlockedReason({ ...silent, actions: { ...silent.actions, merge: { allowed: false, reason: null } } }),
      /does not offer/,
    );
  });

  it('offers in a QuickPick only the requests that allow the action; Merge also lists blocked ones with the reason', () => {
    const a = makeChangeRequest({ id: 1, title: 'A', actions: actions(['submit']), status: 'draft' });
    const b = makeChangeRequest({
      id: 2,
      title: 'B',
      actions: actions(['merge']),
      ready_to_merge: true,
      status: 'approved',
    });
    const c = makeChangeRequest({
      id: 3,
      title: 'C',
      actions: actions([], { merge: 'Check "ci" is pending.' }),
      merge_blocked_reason: 'Check "ci" is pending.',
      status: 'needs-review',
    });
    const d = makeChangeRequest({ id: 4, title: 'D', status: 'completed' });
    assert.deepEqual(
      changeRequestPicks([a, b, c, d], 'submit').map((p) => p.value.id),
      [1],
    );
    const merge = changeRequestPicks([a, b, c, d], 'merge');
    assert.deepEqual(
      merge.map((p) => p.value.id),
      [2, 3],
    );
    assert.equal(merge[1].detail, '$(circle-slash) Blocked: Check "ci" is pending.');
    assert.equal(changeRequestPicks([a, b, c, d]).length, 4);
    assert.equal(merge[0].label, '$(pass) B');
  });

  it("says why no change request allows an action: the service's reason of each open request, in the message when there is one", () => {
    const draft = makeChangeRequest({
      id: 1,
      title: 'Move sw1',
      status: 'draft',
      actions: actions([], { review: 'A draft cannot be reviewed.' }),
    });
    const mine = makeChangeRequest({
      id: 2,
      title: 'Add VLAN 20',
      status: 'needs-review',
      priority: 'high',
      actions: actions([], { review: 'You cannot review your own change request.' }),
    });
    const closed = makeChangeRequest({ id: 3, status: 'completed' });
    const two = whyNoneAllowed([draft, mine, closed], 'review', 'Review');
    assert.equal(two.message, 'No change request allows Review for you now. Why, for each open change request:');
    assert.deepEqual(
      two.rows.map((r) => [r.value.id, r.detail]),
      [
        [2, '$(circle-slash) You cannot review your own change request.'],
        [1, '$(circle-slash) A draft cannot be reviewed.'],
      ],
    );
    assert.equal(
      whyNoneAllowed([draft], 'review', 'Review').message,
      'No change request allows Review for you now. "Move sw1": A draft cannot be reviewed.',
    );
    assert.equal(
      whyNoneAllowed([closed], 'merge', 'Merge Branch').message,
      'No change request allows Merge Branch for you now: there is no open change request.',
    );
  });

  it('reads the live merge state of the blocked candidates of Merge (bounded), keeping the list copy on failure', async () => {
    const cached = 'Approvals or required checks were outstanding at the last refresh.';
    const blocked = (id: number, priority: 'high' | 'low' = 'low') =>
      makeChangeRequest({
        id,
        priority,
        status: 'approved',
        merge_blocked_reason: cached,
        actions: actions([], { merge: cached }),
      });
    const crs = [
      makeChangeRequest({ id: 1, status: 'draft' }),
      makeChangeRequest({ id: 2, status: 'approved', ready_to_merge: true, actions: actions(['merge']) }),
      blocked(3),
      blocked(4, 'high'),
      blocked(5),
    ];
    const asked: number[] = [];
    const client = {
      getChangeRequest: async (id: number) => {
        asked.push(id);
        if (id === 5) throw new Error('gone');
        const live = 'Required check "ci/build" is pending.';
        return {
          ...crs.find((cr) => cr.id === id)!,
          merge_blocked_reason: live,
          actions: actions([], { merge: live }),
        };
      },
    };
    const live = await withLiveMergeState(client, crs, 2);
    assert.deepEqual(asked.sort(), [4, 5], 'the two most urgent blocked ones (priority, then the newest)');
    assert.deepEqual(
      live.map((cr) => cr.id),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual(
      live.map((cr) => (cr.merge_blocked_reason.startsWith('Required') ? 'live' : 'list')),
      ['list', 'list', 'list', 'live', 'list'],
    );
    const all = await withLiveMergeState(client, crs);
    assert.equal(all.find((cr) => cr.id === 5)!.merge_blocked_reason, cached, 'a failed read keeps the list copy');
    assert.equal(
      changeRequestPicks(all, 'merge').find((p) => p.value.id === 3)!.detail,
      '$(circle-slash) Blocked: Required check "ci/build" is pending.',
    );
  });

  it('names the change request of each branch in the branch QuickPick', () => {
    const branches = [
      {
        id: 101,
        url: '',
        display: 'b',
        created: '',
        last_updated: '',
        name: 'zeta',
        description: '',
        status: 'ready' as const,
        schema_id: 'abcdefgh',
        owner: 1,
        last_sync: null,
        merged_time: null,
        merged_by: null,
      },
      {
        id: 102,
        url: '',
        display: 'a',
        created: '',
        last_updated: '',
        name: 'alpha',
        description: '',
        status: 'ready' as const,
        schema_id: 'abcdefgi',
        owner: 1,
        last_sync: null,
        merged_time: null,
        merged_by: null,
      },
    ];
    const picks = branchPicks(branches, [
      makeChangeRequest({ id: 1, branch: 101, title: 'Zeta work', status: 'draft' }),
    ]);
    assert.deepEqual(
      picks.map((p) => p.label),
      ['$(git-branch) alpha', '$(git-branch) zeta'],
    );
    assert.match(picks[0].detail!, /No change request yet/);
    assert.equal(picks[1].detail, 'Change request: Zeta work (Draft)');
  });
});
