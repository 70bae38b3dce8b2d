// The two READMEs: the extension package's own (extension/README.md, the page VS Code shows for
// the installed extension) and the repository's, which shows the screenshots.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const PACKAGE_README = 'extension/README.md';

/** The targets of a Markdown text's links and images that are not absolute URLs or anchors. */
function relativeTargets(markdown: string): string[] {
  const targets = [...markdown.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
  return targets.filter((target) => !/^(https?:|mailto:|#)/.test(target));
}

describe("extension package: the README it carries, and the repository's", () => {
  it("packages extension/README.md as the extension's README, never the repository's", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.match(pkg.scripts.package, new RegExp(`vsce package .*--readme-path ${PACKAGE_README}( |$)`));
    const ignore = readFileSync(join(ROOT, '.vscodeignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    assert.ok(!ignore.includes('!README.md'), "the repository README would be packaged beside the extension's");
  });

  it("has no relative links in the package's README (vsce refuses to package what it cannot resolve)", () => {
    assert.deepEqual(relativeTargets(readFileSync(join(ROOT, PACKAGE_README), 'utf8')), []);
  });

  it("shows the screenshots in the repository's README, and every relative link there resolves", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const targets = relativeTargets(readme);
    for (const image of [
      'docs/images/review-in-editor.png',
      'docs/images/review-page.png',
      'docs/images/review-page-400px.png',
    ]) {
      assert.ok(new RegExp(`!\\[[^\\]]+\\]\\(${image}\\)`).test(readme), `${image} is not shown as an image`);
    }
    assert.ok(targets.includes(PACKAGE_README), "the README links the extension's guide");
    for (const target of targets)
      assert.ok(existsSync(join(dirname(join(ROOT, 'README.md')), target.split('#')[0]!)), `${target} does not exist`);
  });
});
