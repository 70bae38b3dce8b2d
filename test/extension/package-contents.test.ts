// One .vsix for every platform: what `npm run package` puts in the package (vsce's own listing,
// with .vscodeignore and the package script's options), the manifest, and the service's bundle.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** Everything the package may hold: the manifest, the extension's README, its icons, the bundles. */
const ICON = /^extension\/media\/[\w-]+\.svg$/;
const ALLOWED = new Set([
  'package.json',
  'extension/README.md',
  'dist/extension.js',
  'dist/webview.js',
  'dist/webview.css',
  'dist/server.js',
]);

/** Files that tie a package to a platform: native modules and libraries, executables. */
const PLATFORM_SPECIFIC = /\.(node|so|dylib|dll|exe)$|(^|\/)(node_modules|prebuilds|build\/Release)\//;

describe('extension: the .vsix', () => {
  it('is one package for every platform: no native module, no node_modules, nothing platform-specific, only the manifest, its README and icons, and the bundles', async function () {
    this.timeout(60_000);
    const script = String(manifest.scripts.package);
    assert.match(script, /vsce package .*--no-dependencies/, 'no dependency folder is packaged');
    assert.doesNotMatch(script, /--target\b/, 'no platform-specific package');
    assert.equal(manifest.os, undefined);
    assert.equal(manifest.cpu, undefined);
    const vsce = join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
    const readme = /--readme-path\s+(\S+)/.exec(script)?.[1];
    assert.equal(readme, 'extension/README.md');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      // Listed with the dependencies vsce would add without --no-dependencies: .vscodeignore lets none in either.
      [vsce, 'ls', '--readme-path', readme],
      { cwd: ROOT, encoding: 'utf8' },
    );
    const files = stdout.split('\n').filter((line) => line.trim() !== '');
    assert.ok(files.includes('package.json') && files.includes('extension/README.md'), files.join('\n'));
    assert.deepEqual(
      files.filter((f) => PLATFORM_SPECIFIC.test(f)),
      [],
    );
    assert.deepEqual(
      files.filter((f) => !ALLOWED.has(f) && !ICON.test(f)),
      [],
    );
  });
});
