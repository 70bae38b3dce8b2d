// What an update touches: structural sharing of snapshots, and the region and list plans.
import assert from 'node:assert/strict';
import { planList, planRegions, type ListPlan } from '../../webview/plan';
import { sameInputs, shareEqual } from '../../contract/webview/share';

/** Applies a plan to a list of keys as the view applies it to the DOM. */
function apply(rendered: string[], plan: ListPlan): string[] {
  let out = rendered.filter((k) => !plan.remove.includes(k));
  for (const { key, before } of plan.place) {
    out = out.filter((k) => k !== key);
    const at = before === null ? out.length : out.indexOf(before);
    out.splice(at, 0, key);
  }
  return out;
}

describe('webview: incremental update planning', () => {
  it('shares every unchanged part of a new snapshot with the old one', () => {
    const prev = { a: { x: [1, 2], y: 'k' }, b: [{ id: 1 }, { id: 2 }], c: 3 };
    const next = { a: { x: [1, 2], y: 'k' }, b: [{ id: 1 }, { id: 3 }], c: 3 };
    const shared = shareEqual(prev, next);
    assert.equal(shared.a, prev.a);
    assert.notEqual(shared.b, prev.b);
    assert.equal(shared.b[0], prev.b[0]);
    assert.deepEqual(shared.b[1], { id: 3 });
    assert.equal(shareEqual(prev, structuredClone(prev)), prev, 'equal throughout: the old value itself');
    assert.notEqual(shareEqual({ a: 1 }, { a: 1, b: 2 }), undefined);
    assert.deepEqual(shareEqual({ a: 1, b: 2 }, { a: 1 }), { a: 1 }, 'a dropped key is dropped');
    assert.deepEqual(shareEqual([1, 2, 3], [1, 2]), [1, 2]);
    assert.equal(shareEqual(null, 0), 0);
  });

  it('compares region inputs item by item, and lists one level deep', () => {
    const o = {};
    assert.equal(sameInputs([o, 1, 'a'], [o, 1, 'a']), true);
    assert.equal(sameInputs([{}], [{}]), false);
    assert.equal(sameInputs([[o, 1]], [[o, 1]]), true);
    assert.equal(sameInputs([[o, 1]], [[o, 2]]), false);
    assert.equal(sameInputs(undefined, []), false);
    assert.equal(sameInputs([1], [1, 2]), false);
  });

  it('plans only the regions whose inputs changed', () => {
    const snap = {};
    const previous = new Map<string, unknown[]>([
      ['header', [snap, false]],
      ['checks', [[1]]],
      ['timeline', [2]],
    ]);
    const next = new Map<string, unknown[]>([
      ['header', [snap, false]],
      ['checks', [[1]]],
      ['timeline', [3]],
      ['gate', [snap]],
    ]);
    assert.deepEqual(planRegions(previous, next), ['timeline', 'gate']);
  });

  it('keeps rendered items that stay, renders again only the changed ones, removes and inserts the rest', () => {
    const plan = planList(['1', '2', '3', '4'], ['3', '4', '5', '6'], (k) => k === '4');
    assert.deepEqual(plan.remove, ['1', '2']);
    assert.deepEqual(plan.update, ['4']);
    assert.deepEqual(plan.place, [
      { key: '6', before: null },
      { key: '5', before: '6' },
    ]);
    assert.deepEqual(apply(['1', '2', '3', '4'], plan), ['3', '4', '5', '6']);
  });

  it('does nothing when the window and the items are unchanged', () => {
    assert.deepEqual(
      planList(['1', '2'], ['1', '2'], () => false),
      { remove: [], place: [], update: [] },
    );
  });

  it('moves items whose order changed, and builds a list from nothing', () => {
    for (const [from, to] of [
      [
        ['a', 'b', 'c'],
        ['c', 'b', 'a'],
      ],
      [
        ['a', 'b', 'c'],
        ['b', 'c', 'a'],
      ],
      [[], ['x', 'y']],
      [['x', 'y'], []],
      [
        ['a', 'b'],
        ['b', 'z', 'a'],
      ],
    ]) {
      const plan = planList(from, to, () => false);
      assert.deepEqual(apply(from, plan), to, `${from} -> ${to}`);
    }
  });
});
