// A refresh sent as what changed: the host's encoder and the panel's side of it.
import assert from 'node:assert/strict';
import { applyDelta, SnapshotEncoder } from '../../contract/webview/delta';
import type { ChangeRequestSnapshot, SnapshotDelta } from '../../contract/webview/protocol';
import { initialState, reduce } from '../../webview/state';
import { makeCheck, makeComment } from '../extension/fixtures';
import { largeReviewSnapshot } from '../support/review-snapshot';

describe('webview: refreshes sent as what changed', () => {
  const base = largeReviewSnapshot(200);

  function edited(): ChangeRequestSnapshot {
    const next = structuredClone(base);
    next.changes[3] = { ...next.changes[3]!, modified: { ...next.changes[3]!.modified, status: 'offline' } };
    next.changes.splice(7, 1);
    next.comments.push(makeComment({ id: 90_000, change_diff: 1 }));
    next.checks = [makeCheck({ id: 1, name: 'ci/build', status: 'success' })];
    next.loadedAt = '2026-11-01T12:00:00.000Z';
    return next;
  }

  it('sends the first snapshot whole, then only the parts and items that differ', () => {
    const encoder = new SnapshotEncoder();
    const first = encoder.encode(base);
    assert.equal(first.type, 'snapshot');
    const second = encoder.encode(edited());
    assert.equal(second.type, 'snapshotDelta');
    const delta = (second as { delta: SnapshotDelta }).delta;
    assert.deepEqual([delta.baseSeq, delta.seq], [1, 2]);
    assert.deepEqual(Object.keys(delta.parts).sort(), ['checks', 'loadedAt']);
    assert.deepEqual(
      delta.changes!.items.map((c) => c.id),
      [4],
    );
    assert.equal(delta.changes!.ids.length, 199);
    assert.deepEqual(
      delta.comments!.items.map((c) => c.id),
      [90_000],
    );
    assert.ok(JSON.stringify(delta).length < JSON.stringify(base).length / 50, `${JSON.stringify(delta).length} bytes`);
    const same = encoder.encode(edited());
    assert.deepEqual((same as { delta: SnapshotDelta }).delta.parts, {}, 'nothing differs: an empty delta');
    assert.equal((same as { delta: SnapshotDelta }).delta.changes, undefined);
  });

  it('starts over with a whole snapshot after a reset or for another request', () => {
    const encoder = new SnapshotEncoder();
    encoder.encode(base);
    encoder.reset();
    assert.equal(encoder.encode(base).type, 'snapshot');
    const other = structuredClone(base);
    other.changeRequest = { ...other.changeRequest, id: 2 };
    assert.equal(encoder.encode(other).type, 'snapshot');
  });

  it('rebuilds the new snapshot from the old one and the delta, keeping every unchanged object', () => {
    const encoder = new SnapshotEncoder();
    encoder.encode(base);
    const next = edited();
    const { delta } = encoder.encode(next) as { delta: SnapshotDelta };
    const applied = applyDelta(base, delta)!;
    assert.deepEqual(applied, next);
    assert.equal(applied.changes[0], base.changes[0]);
    assert.equal(applied.evaluation, base.evaluation);
    assert.equal(applied.comments[0], base.comments[0]);
    assert.equal(
      applyDelta({ ...base, changes: base.changes.slice(0, 3) }, delta),
      null,
      'an unknown unchanged item: it does not fit',
    );
  });

  it('applies a delta only to the snapshot it was made against', () => {
    const encoder = new SnapshotEncoder();
    const first = encoder.encode(base) as { type: 'snapshot'; snapshot: ChangeRequestSnapshot; seq: number };
    const { delta } = encoder.encode(edited()) as { delta: SnapshotDelta };
    const ready = reduce(initialState, first);
    const after = reduce(ready, { type: 'snapshotDelta', delta });
    assert.equal(after.seq, 2);
    assert.equal(after.snapshot!.checks[0]!.status, 'success');
    assert.equal(reduce(after, { type: 'snapshotDelta', delta }), after, 'already applied: ignored');
  });
});
