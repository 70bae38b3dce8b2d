import assert from 'node:assert/strict';
import { branchAlert, branchPanelPlacement, DEFAULT_PLACEMENT } from '../../extension/core/panel-placement';
import { actions, makeChangeRequest } from './fixtures';

describe("extension: where a branch's change request shows (branch_page_placement)", () => {
  it('maps right_page to a panel beside the editor and alerts to a notification', () => {
    assert.deepEqual(branchPanelPlacement(['right_page']), { beside: true, alert: false });
    assert.deepEqual(branchPanelPlacement(['alerts']), { beside: false, alert: true });
    assert.deepEqual(branchPanelPlacement(['both']), { beside: true, alert: true });
    assert.deepEqual(branchPanelPlacement(['right_page', 'alerts']), { beside: true, alert: true });
    assert.deepEqual(branchPanelPlacement([]), { beside: false, alert: false });
  });

  it("falls back to the service's default (right_page) when the settings could not be read", () => {
    assert.deepEqual(DEFAULT_PLACEMENT, ['right_page']);
    assert.deepEqual(branchPanelPlacement(null), { beside: true, alert: false });
    assert.deepEqual(branchPanelPlacement(undefined), branchPanelPlacement(DEFAULT_PLACEMENT));
  });

  it('alerts with the merge state: a warning with the reason while blocked, information otherwise', () => {
    const blocked = makeChangeRequest({
      id: 4,
      title: 'Move sw1',
      status: 'approved',
      ready_to_merge: false,
      merge_blocked_reason: 'Required check "ci/build" is pending.',
      has_conflicts: true,
      actions: actions([], { merge: 'Required check "ci/build" is pending.' }),
    });
    assert.deepEqual(branchAlert('move-sw1', blocked), {
      severity: 'warning',
      message:
        'Branch move-sw1: change request "Move sw1" is Approved; merge blocked: Required check "ci/build" is pending. The branch conflicts with main.',
    });
    const ready = makeChangeRequest({
      id: 4,
      title: 'Move sw1',
      status: 'approved',
      ready_to_merge: true,
      merge_blocked_reason: '',
      actions: actions(['merge']),
    });
    assert.deepEqual(branchAlert('move-sw1', ready), {
      severity: 'info',
      message: 'Branch move-sw1: change request "Move sw1" is Approved; ready to merge.',
    });
    const done = makeChangeRequest({ id: 4, title: '', status: 'completed' });
    assert.deepEqual(branchAlert('move-sw1', done), {
      severity: 'info',
      message: 'Branch move-sw1: change request "move-sw1" is Completed.',
    });
  });
});
