// Compare with Main Now and the conflict marks: main now against main as the merge would leave it
// (never against the branch, which would show main's later changes as undone), and a warning on
// the line of each conflicting attribute.
import assert from 'node:assert/strict';
import {
  attributeSpans,
  diffSides,
  lineOfAttribute,
  mergedState,
  serializeState,
  sideState,
  singleSide,
} from '../../extension/core/change-documents';
import { conflictMarks } from '../../extension/core/conflict-marks';
import { makeChange } from './fixtures';

// The branch moved sw1 to rack R2 and set it planned; main later moved it to R3 and renamed its
// site: the rack conflicts, the site is main's own change.
const sw1 = makeChange({
  id: 11,
  object_repr: 'sw1',
  original: { name: 'sw1', rack: 'R1', site: 'dc1', status: 'active', tags: ['a'] },
  modified: { name: 'sw1', rack: 'R2', site: 'dc1', status: 'planned' },
  current: { name: 'sw1', rack: 'R3', site: 'dc1-north', status: 'active', tags: ['a'] },
  conflicts: ['rack'],
});

describe('extension: opening a change', () => {
  it('opens a created object from the branch alone and a deleted one from the baseline alone (no empty side shown as deleted); an update as a diff', () => {
    assert.equal(singleSide(makeChange({ id: 1, action: 'create' })), 'modified');
    assert.equal(singleSide(makeChange({ id: 1, action: 'delete' })), 'original');
    assert.equal(singleSide(sw1), null);
    assert.deepEqual(diffSides('change'), ['original', 'modified']);
  });
});

describe('extension: Compare with Main Now', () => {
  it("compares main now with main after the merge: main's own later changes are on both sides, only what the merge does differs", () => {
    assert.deepEqual(diffSides('main'), ['current', 'merged']);
    assert.deepEqual(mergedState(sw1), {
      name: 'sw1',
      rack: 'R2',
      site: 'dc1-north',
      status: 'planned',
    });
    assert.deepEqual(sideState(sw1, 'merged'), mergedState(sw1));
    const create = makeChange({ id: 12, action: 'create', original: null, current: null, modified: { name: 'sw2' } });
    assert.deepEqual(mergedState(create), { name: 'sw2' });
    const del = makeChange({ id: 13, action: 'delete', modified: null });
    assert.equal(mergedState(del), null);
  });

  it("marks the line of each conflicting attribute on the branch's side, main's, and after the merge, saying both values; never on the baseline", () => {
    for (const side of ['modified', 'current', 'merged'] as const) {
      const [mark, ...rest] = conflictMarks(sw1, side);
      assert.equal(rest.length, 0);
      assert.equal(mark!.attribute, 'rack');
      assert.equal(mark!.line, lineOfAttribute(attributeSpans(serializeState(sideState(sw1, side))), 'rack').line);
      assert.equal(
        mark!.message,
        "rack conflicts with main: main changed it to R3 after the branch was made; the branch has R2. Merging overwrites main's value.",
      );
    }
    assert.deepEqual(conflictMarks(sw1, 'original'), []);
    assert.deepEqual(conflictMarks({ ...sw1, conflicts: null }, 'modified'), []);
  });
});
