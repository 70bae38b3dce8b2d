import assert from 'node:assert/strict';
import type { BranchActionResult } from '../../contract/api/branching';
import { syncConfirmation } from '../../extension/core/sync-plan';

type Change = BranchActionResult['changes'][number];
const change = (id: number, repr: string, effect: Change['effect'], conflicts: string[] | null = null): Change => ({
  id,
  object_type: 'dcim.device',
  object_id: id,
  object_repr: repr,
  action: 'update',
  effect,
  conflicts,
});
const dryRun = (changes: Change[]) => ({ commit: false, changes }) as unknown as BranchActionResult;

describe('extension: Sync Branch with Main asks with the dry run first', () => {
  it('says what the sync would rebase, drop and leave in conflict, and offers to sync', () => {
    const ask = syncConfirmation(
      'move-sw1',
      dryRun([change(1, 'sw1', 'rebased'), change(2, 'sw2', 'dropped'), change(3, 'sw3', 'conflict', ['rack'])]),
    );
    assert.equal(ask.message, 'Sync branch move-sw1 with main?');
    assert.equal(ask.confirm, 'Sync Branch');
    assert.match(ask.detail, /1 change is rebased on main as it is now: sw1\./);
    assert.match(ask.detail, /1 change leaves the branch \(main already has it\): sw2\./);
    assert.match(ask.detail, /Still in conflict afterwards: sw3 \(rack\)\./);
  });

  it("names the conflicts the sync settles in the branch's favour (main's value now, the branch's), not those still in conflict afterwards", () => {
    const rack = {
      objectType: 'dcim.device',
      attribute: 'rack',
      main: 'R3',
      branch: 'R2',
      mainGone: false,
      branchDeletes: false,
    };
    const ask = syncConfirmation(
      'move-sw1',
      dryRun([change(1, 'sw1', 'rebased'), change(3, 'sw3', 'conflict', ['rack'])]),
      [
        { ...rack, object: 'sw1' },
        { ...rack, object: 'sw3' },
      ],
    );
    assert.match(
      ask.detail,
      /The sync keeps the branch's value where main changed it too; afterwards it is no conflict, and merging replaces main's value without asking:\n• sw1 \(dcim\.device\) · rack: main now R3 → the branch's R2/,
    );
    assert.doesNotMatch(ask.detail, /• sw3/);
    assert.doesNotMatch(
      syncConfirmation('move-sw1', dryRun([change(1, 'sw1', 'rebased')])).detail,
      /keeps the branch's/,
    );
  });

  it('offers nothing to confirm when main brings nothing', () => {
    const ask = syncConfirmation('move-sw1', dryRun([]));
    assert.equal(ask.confirm, null);
    assert.equal(ask.message, 'Branch move-sw1 is in step with main.');
  });
});
