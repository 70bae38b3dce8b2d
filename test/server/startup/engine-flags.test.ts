import assert from 'node:assert/strict';
import { engineFlags, HEAP_GROWING_PERCENT } from '../../../server/engine-flags';

describe("the engine's flags the service sets for itself", () => {
  it("bounds the heap's growth and schedules no young-generation collection as a task of its own", () => {
    assert.deepEqual(engineFlags([]), [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, '--no-minor-gc-task']);
    assert.deepEqual(engineFlags(['--max-semi-space-size=8', '']), [
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
      '--no-minor-gc-task',
    ]);
  });

  it('leaves each to what Node was given, in either spelling', () => {
    assert.deepEqual(engineFlags(['--heap-growing-percent=100']), ['--no-minor-gc-task']);
    assert.deepEqual(engineFlags(['--heap_growing_percent=20', '--minor-gc-task']), []);
    assert.deepEqual(engineFlags(['--no-scavenge-task']), [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    assert.deepEqual(engineFlags(['--minor_gc_task']), [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });
});
