import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('extension package: the README it carries', () => {
  it('has no relative links (vsce refuses to package a README whose relative links it cannot resolve)', () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    const relative = links.filter((target) => !/^(https?:|mailto:|#)/.test(target));
    assert.deepEqual(relative, []);
  });
});
