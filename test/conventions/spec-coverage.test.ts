// docs/spec-coverage.md is generated from the tests' titles (scripts/spec-coverage.ts): a test
// added, renamed or removed without running `npm run spec-coverage` fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { coverageMarkdown, COVERAGE_FILE, ruleOf, testTitles } from '../../scripts/spec-coverage';

describe('conventions: the specification coverage table', () => {
  it('docs/spec-coverage.md is what npm run spec-coverage writes from the tests as they are', () => {
    assert.ok(
      readFileSync(COVERAGE_FILE, 'utf8') === coverageMarkdown(testTitles()),
      'docs/spec-coverage.md is out of date: run npm run spec-coverage',
    );
  });

  it('a rule id is the start of a title up to its first colon, when it begins with a capital letter or a contract section', () => {
    assert.equal(ruleOf('General rule 1: a failing check blocks'), 'General rule 1');
    assert.equal(ruleOf('ChangeRequest branch_name: is read-only'), 'ChangeRequest branch_name');
    assert.equal(ruleOf('contract 4.1: the list answers 200'), 'contract 4.1');
    assert.equal(ruleOf('answers 404: nothing there'), null);
    assert.equal(ruleOf('No colon here'), null);
  });

  it('the check can fail: a new test naming a rule changes the table', () => {
    const titles = testTitles();
    const more = [...titles, { file: 'test/x.test.ts', title: 'Invented rule 99: holds' }];
    assert.notEqual(coverageMarkdown(more), coverageMarkdown(titles));
    assert.match(coverageMarkdown(more), /\| Invented rule 99 \| x\.test\.ts: holds \|/);
  });
});
