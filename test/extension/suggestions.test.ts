// Suggested changes as the editor shows them: a diff of the attribute (old → new), their state,
// whether they may be applied now, and a value written as text and read back.
import assert from 'node:assert/strict';
import type { CommentSuggestion } from '../../contract/api/change-control';
import {
  applicableSuggestions,
  isApplicable,
  parseValue,
  suggestionBlock,
  suggestionContext,
  suggestionDiff,
  suggestionMarkdown,
  valueAsInput,
} from '../../extension/core/suggestions';
import { ALICE, makeComment } from './fixtures';

const suggestion = (over: Partial<CommentSuggestion> = {}): CommentSuggestion => ({
  attribute: 'rack',
  value: 'R3',
  previous: 'R2',
  previous_absent: false,
  outdated: false,
  applied_by: null,
  applied_at: null,
  ...over,
});

describe('extension: suggested changes', () => {
  it('shows a suggestion as a diff of its attribute: the value it replaces, then the proposed one (only the new one for an attribute that did not exist)', () => {
    assert.equal(suggestionDiff(suggestion()), '- rack: R2\n+ rack: R3');
    assert.equal(suggestionDiff(suggestion({ previous: null, previous_absent: true })), '+ rack: R3');
    assert.equal(
      suggestionDiff(suggestion({ attribute: 'config', previous: { mtu: 1500 }, value: { mtu: 9000, vlan: 10 } })),
      '- config:\n-   mtu: 1500\n+ config:\n+   mtu: 9000\n+   vlan: 10',
    );
    const md = suggestionMarkdown(suggestion());
    assert.match(md, /^\*\*Suggested change\*\* to `rack`\n```diff\n- rack: R2\n\+ rack: R3\n```\n_Not applied yet._$/);
    assert.match(suggestionMarkdown(suggestion({ outdated: true })), /_Outdated: the attribute changed/);
    assert.match(
      suggestionMarkdown(suggestion({ applied_by: ALICE, applied_at: '2026-11-03T10:00:00Z' })),
      /_Applied by Alice on 2026-11-03._/,
    );
  });

  it('lets a suggestion be applied only when the request allows it and it is neither applied nor outdated; menus read that from the context value', () => {
    const waiting = makeComment({ id: 1, suggestion: suggestion() });
    const outdated = makeComment({ id: 2, suggestion: suggestion({ outdated: true }) });
    const applied = makeComment({
      id: 3,
      suggestion: suggestion({ applied_at: '2026-11-03T10:00:00Z', applied_by: ALICE }),
    });
    const plain = makeComment({ id: 4 });
    assert.deepEqual(
      [waiting, outdated, applied, plain].map((c) => isApplicable(c, true)),
      [true, false, false, false],
    );
    assert.equal(isApplicable(waiting, false), false);
    assert.deepEqual(
      applicableSuggestions([applied, waiting, plain, outdated], true).map((c) => c.id),
      [1],
    );
    assert.deepEqual(
      [waiting, outdated, applied, plain].map((c) => suggestionContext(c, true)),
      ['suggestion;applicable;', 'suggestion;outdated;', 'suggestion;applied;', ''],
    );
    assert.equal(suggestionContext(waiting, false), 'suggestion;');
  });

  it('writes the current value as one line to edit and reads a typed value back as YAML (strings, numbers, lists, null)', () => {
    assert.equal(valueAsInput('R2'), 'R2');
    assert.equal(valueAsInput('42'), '"42"', 'a string that reads as a number stays a string');
    assert.equal(valueAsInput(42), '42');
    assert.equal(valueAsInput(null), 'null');
    assert.equal(valueAsInput({ mtu: 9000 }), '{"mtu":9000}');
    assert.equal(valueAsInput('a\nb'), '"a\\nb"');
    for (const value of ['R2', '42', 42, null, true, { mtu: 9000 }, [1, 'a'], 'a\nb', 'yes'])
      assert.deepEqual(parseValue(valueAsInput(value)), { ok: true, value }, JSON.stringify(value));
    assert.deepEqual(parseValue(''), { ok: true, value: null });
    assert.equal(parseValue('[1, 2').ok, false);
  });

  it("reads GitHub's suggestion block out of a comment's text: the words, and the value between the fences", () => {
    assert.deepEqual(suggestionBlock('Use R3 here.\n```suggestion\nR3\n```'), {
      text: 'Use R3 here.',
      valueText: 'R3',
    });
    assert.deepEqual(suggestionBlock('```suggestion\nmtu: 9000\nvlan: 10\n```\nthanks'), {
      text: 'thanks',
      valueText: 'mtu: 9000\nvlan: 10',
    });
    assert.equal(suggestionBlock('no block\n```yaml\nR3\n```'), null);
  });
});
