// Segmentation of one attribute's change: line diff, character highlights, folded context.
import assert from 'node:assert/strict';
import { charSegments, diffValues, fold, valueText, type DiffLine, type DiffRow } from '../../webview/diff';

/** A diff as short strings: "-old", "+new", " same", "…3"; changed characters in [brackets]. */
function show(rows: DiffRow[]): string[] {
  return rows.map((r) => {
    if (r.kind === 'gap') return `…${r.count}`;
    const sign = r.kind === 'removed' ? '-' : r.kind === 'added' ? '+' : ' ';
    return sign + r.segments.map((s) => (s.changed ? `[${s.text}]` : s.text)).join('');
  });
}

describe('webview: diff segmentation', () => {
  it('shows a changed single-line value as a removed and an added line with the changed characters', () => {
    assert.deepEqual(show(diffValues('R1', 'R2')), ['-R[1]', '+R[2]']);
    assert.deepEqual(show(diffValues(10, 30)), ['-[1]0', '+[3]0']);
  });

  it('shows two unrelated values whole, without character highlights', () => {
    assert.deepEqual(show(diffValues('planned', 'active')), ['-planned', '+active']);
  });

  it('diffs multi-line values by line, pairing changed lines for character highlights', () => {
    const before = 'interface eth0\n  mtu 1500\n  shutdown\nend';
    const after = 'interface eth0\n  mtu 9000\nend\n';
    assert.deepEqual(
      show(diffValues(before, after)),
      [' interface eth0', '-  mtu [1500]', '-  shutdown', '+  mtu [9000]', ' end'],
      'a short unchanged run between changes counts as changed; the final newline does not matter',
    );
  });

  it('numbers lines on each side', () => {
    const rows = diffValues('a\nb\nc', 'a\nB\nc\nd').filter((r): r is DiffLine => r.kind !== 'gap');
    assert.deepEqual(
      rows.map((r) => [r.kind, r.oldNo, r.newNo]),
      [
        ['context', 1, 1],
        ['removed', 2, null],
        ['added', null, 2],
        ['context', 3, 3],
        ['added', null, 4],
      ],
    );
  });

  it('folds unchanged lines beyond three around each change into gaps', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `l${i}`);
    const changed = [...lines];
    changed[5] = 'l5x';
    changed[25] = 'l25x';
    assert.deepEqual(show(diffValues(lines.join('\n'), changed.join('\n'))), [
      '…2',
      ' l2',
      ' l3',
      ' l4',
      '-l5',
      '+l5[x]',
      ' l6',
      ' l7',
      ' l8',
      '…13',
      ' l22',
      ' l23',
      ' l24',
      '-l25',
      '+l25[x]',
      ' l26',
      ' l27',
      ' l28',
      '…1',
    ]);
    assert.deepEqual(show(fold([], 3)), []);
  });

  it('shows a create as added lines only and a delete as removed lines only; an empty value as one empty line', () => {
    assert.deepEqual(show(diffValues(undefined, 'sw2')), ['+sw2']);
    assert.deepEqual(show(diffValues('a\nb', undefined)), ['-a', '-b']);
    assert.deepEqual(show(diffValues('', 'x')), ['-', '+x']);
    assert.deepEqual(show(diffValues('same', 'same')), [' same']);
  });

  it('diffs objects and lists as indented JSON with sorted keys', () => {
    assert.equal(
      valueText({ b: 1, a: [1, { d: 2, c: 3 }] }),
      '{\n  "a": [\n    1,\n    {\n      "c": 3,\n      "d": 2\n    }\n  ],\n  "b": 1\n}',
    );
    assert.deepEqual(show(diffValues({ owner: 'netops', site: 'A' }, { site: 'A', owner: 'noc' })), [
      ' {',
      '-  "owner": "n[etops]",',
      '+  "owner": "n[oc]",',
      '   "site": "A"',
      ' }',
    ]);
    assert.equal(valueText(null), 'null');
    assert.equal(valueText(undefined), null);
  });

  it('gives up on character highlights for very long lines', () => {
    const long = 'x'.repeat(2001);
    assert.equal(charSegments(long, `${long}y`), null);
    assert.deepEqual(charSegments('abc', 'abd'), {
      removed: [
        { text: 'ab', changed: false },
        { text: 'c', changed: true },
      ],
      added: [
        { text: 'ab', changed: false },
        { text: 'd', changed: true },
      ],
    });
  });
});
