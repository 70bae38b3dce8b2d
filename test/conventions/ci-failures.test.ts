// .ci/run ends with the failures of every run gathered above its totals (.ci/failures): the
// names must show when a run failed, and a clean run must still reach its totals (the script
// runs under set -e and pipefail, where a grep that matches nothing stops everything).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(__dirname, '../../.ci/failures');

function failures(logs: Record<string, string>): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cc-ci-failures-'));
  try {
    for (const [name, text] of Object.entries(logs)) writeFileSync(join(dir, `${name}.log`), text);
    const run = spawnSync('bash', [SCRIPT, dir], { encoding: 'utf8' });
    return { status: run.status, out: run.stdout + run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CLEAN = '  suite\n    ✔ a test\n\n  1 passing (2ms)\n\n1 passed, 0 failed\n';

describe('CI: the failures gathered above the totals', () => {
  it('says nothing of clean runs, and exits 0', () => {
    assert.deepEqual(failures({ unit: CLEAN, e2e: '[e2e] PASS a scenario (1.0 s)\n1 passed, 0 failed\n' }), {
      status: 0,
      out: '',
    });
  });

  it("names each failing test under its run: mocha's failing section and the end-to-end FAIL lines", () => {
    const unit =
      '  suite\n    ✔ a test\n    1) a rule\n\n  1 passing (2ms)\n  1 failing\n\n  1) suite\n       a rule:\n     AssertionError: 2 !== 1\n\n1 passed, 1 failed\n';
    const e2e = '[e2e] RUN  review\n[e2e] FAIL review: no notification within 30000 ms\n0 passed, 1 failed\n';
    const { status, out } = failures({ unit, e2e, postgres: CLEAN });
    assert.equal(status, 0);
    assert.match(out, /^failures in e2e:\n\[e2e\] FAIL review: no notification within 30000 ms\n/);
    assert.match(out, /failures in unit:\n {2}1 failing\n\n {2}1\) suite\n {7}a rule:\n {5}AssertionError: 2 !== 1\n/);
    assert.doesNotMatch(out, /postgres|passed, 1 failed/);
  });

  it('keeps 60 lines of a run with many failures, and still exits 0', () => {
    const many = Array.from({ length: 500 }, (_, i) => `  ${i + 1}) test ${i + 1}`).join('\n');
    const { status, out } = failures({ unit: `  500 failing\n\n${many}\n` });
    assert.equal(status, 0);
    assert.equal(out.trimEnd().split('\n').length, 61);
  });
});
