// The benchmark's percentiles are nearest-rank: a p99 of 1,000 values leaves ten above it.
import assert from 'node:assert/strict';
import { percentile } from '../../bench/stats';

describe('bench percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 1..100, unsorted

  it('is the value at index ceil(n·p/100) − 1 of the sorted values', () => {
    assert.equal(percentile(hundred, 50), 50);
    assert.equal(percentile(hundred, 99), 99);
    assert.equal(percentile(hundred, 100), 100);
    assert.equal(percentile(hundred, 1), 1);
  });

  it('leaves the ten slowest of 1,000 above the p99', () => {
    const thousand = Array.from({ length: 1000 }, (_, i) => i + 1);
    assert.equal(percentile(thousand, 99), 990);
    assert.equal(thousand.filter((v) => v > percentile(thousand, 99)).length, 10);
  });

  it('answers 0 for no values and the only value for one, and leaves its input unsorted', () => {
    assert.equal(percentile([], 99), 0);
    assert.equal(percentile([7], 0), 7);
    assert.equal(percentile([7], 99), 7);
    const input = [3, 1, 2];
    percentile(input, 50);
    assert.deepEqual(input, [3, 1, 2]);
  });
});
