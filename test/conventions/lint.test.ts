// ESLint (typescript-eslint, eslint.config.mjs) and Prettier (.prettierrc.json) over the whole
// project: a lint error or a file Prettier would change fails here, and so fails CI.
// `npx eslint --fix . && npx prettier --write .` repairs most of what these report.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const ESLINT = 'node_modules/eslint/bin/eslint.js';
const PRETTIER = 'node_modules/prettier/bin/prettier.cjs';

function run(bin: string, args: string[], input?: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [join(ROOT, bin), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    input,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('conventions: lint and format', function () {
  this.timeout(120_000);

  it('ESLint reports nothing', () => {
    const { status, output } = run(ESLINT, ['--max-warnings', '0', '.']);
    assert.equal(status, 0, output);
  });

  it('every file is formatted by Prettier', () => {
    const { status, output } = run(PRETTIER, ['--check', '.']);
    assert.equal(status, 0, output);
  });

  it('the checks can fail: an unused, badly formatted declaration is reported by both', () => {
    const source = 'const   unused = 1\n';
    const lint = run(ESLINT, ['--stdin', '--stdin-filename', 'server/probe.ts'], source);
    assert.equal(lint.status, 1, lint.output);
    assert.match(lint.output, /no-unused-vars/);
    const format = run(PRETTIER, ['--check', '--stdin-filepath', 'server/probe.ts'], source);
    assert.notEqual(format.status, 0, format.output);
  });
});
