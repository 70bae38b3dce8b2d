// The virtual window of the list of changes, from item heights and the screen's position.
import assert from 'node:assert/strict';
import { computeWindow, HeightCache, indexAt, prefixSums, sameWindow } from '../../webview/virtual';

describe('webview: virtual window', () => {
  const offsets = prefixSums(Array.from({ length: 2000 }, () => 100));

  it('sums heights into offsets and finds the item at a position', () => {
    assert.deepEqual([...prefixSums([10, 20, 30])], [0, 10, 30, 60]);
    const o = prefixSums([10, 20, 30]);
    assert.deepEqual(
      [indexAt(o, -5), indexAt(o, 0), indexAt(o, 9.9), indexAt(o, 10), indexAt(o, 59), indexAt(o, 500)],
      [0, 0, 0, 1, 2, 2],
    );
    assert.equal(indexAt(prefixSums([]), 10), 0);
  });

  it('renders the items on screen plus the overscan, standing in for the rest with padding', () => {
    const w = computeWindow({ offsets, top: 50_000, height: 800, overscan: 300 });
    assert.deepEqual(w, { start: 497, end: 511, padTop: 49_700, padBottom: 200_000 - 51_100 });
    assert.equal(w.padTop + (w.end - w.start) * 100 + w.padBottom, 200_000, 'the list keeps its full height');
  });

  it('renders the first items when the list starts on screen, and none while it is far below', () => {
    assert.deepEqual(computeWindow({ offsets, top: -300, height: 800, overscan: 200 }), {
      start: 0,
      end: 7,
      padTop: 0,
      padBottom: 199_300,
    });
    assert.deepEqual(computeWindow({ offsets, top: -5000, height: 800, overscan: 200 }), {
      start: 0,
      end: 0,
      padTop: 0,
      padBottom: 200_000,
    });
  });

  it('stops at the end of the list and copes with an empty one', () => {
    assert.deepEqual(computeWindow({ offsets, top: 199_900, height: 800, overscan: 200 }), {
      start: 1997,
      end: 2000,
      padTop: 199_700,
      padBottom: 0,
    });
    assert.deepEqual(computeWindow({ offsets: prefixSums([]), top: 0, height: 800, overscan: 200 }), {
      start: 0,
      end: 0,
      padTop: 0,
      padBottom: 0,
    });
  });

  it('does not render an item that only touches the bottom edge', () => {
    const w = computeWindow({ offsets: prefixSums([100, 100, 100]), top: 0, height: 200, overscan: 0 });
    assert.deepEqual([w.start, w.end], [0, 2]);
  });

  it('compares windows by their items', () => {
    const a = computeWindow({ offsets, top: 1000, height: 750, overscan: 0 });
    assert.equal(sameWindow(a, computeWindow({ offsets, top: 1040, height: 750, overscan: 0 })), true);
    assert.equal(sameWindow(a, computeWindow({ offsets, top: 1200, height: 750, overscan: 0 })), false);
    assert.equal(sameWindow(null, a), false);
  });

  it('keeps measured heights over estimates, ignoring a zero (not laid out) measurement', () => {
    const cache = new HeightCache();
    assert.equal(
      cache.get('11:d', () => 120),
      120,
    );
    assert.equal(cache.set('11:d', 0), false);
    assert.equal(cache.set('11:d', 240), true);
    assert.equal(cache.set('11:d', 240.2), false, 'the same height, give or take a rounding');
    assert.equal(
      cache.get('11:d', () => 120),
      240,
    );
    cache.forget('11:d');
    assert.equal(cache.has('11:d'), false);
    cache.set('12:d', 50);
    cache.forgetAll();
    assert.equal(
      cache.get('12:d', () => 7),
      7,
    );
  });
});
