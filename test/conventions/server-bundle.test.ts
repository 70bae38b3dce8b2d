// The service's bundle is ASCII only (esbuild.config.mjs): V8 keeps a script's source for the
// life of the process, at one byte per character when every character is Latin-1 and at two
// otherwise, so a few dozen characters left in comments doubled the 3.9 MB the bundle holds.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';

const ROOT = resolve(__dirname, '../..');

interface BuildConfig {
  buildTarget(name: string, outdir?: string): Promise<void>;
  asciiOnly(code: string): string;
}

const buildConfig = async (): Promise<BuildConfig> =>
  (await import(pathToFileURL(join(ROOT, 'esbuild.config.mjs')).href)) as BuildConfig;

describe("conventions: the service's bundle", () => {
  it('is ASCII only, built as npm start builds it', async function () {
    this.timeout(120_000);
    const { buildTarget } = await buildConfig();
    const dir = mkdtempSync(join(tmpdir(), 'cc-bundle-'));
    try {
      await buildTarget('server', dir);
      const text = readFileSync(join(dir, 'server.js'), 'latin1');
      assert.ok(text.length > 100_000);
      const outside = /[^\x00-\x7f]/.exec(text);
      assert.equal(
        outside,
        null,
        `non-ASCII at ${outside?.index}: ${text.slice((outside?.index ?? 0) - 60, (outside?.index ?? 0) + 20)}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes what esbuild leaves outside ASCII (comments, regular expressions) as escapes of the same characters', async () => {
    const { asciiOnly } = await buildConfig();
    const code = String.raw`/* «quoted» */ JSON.stringify([/([?!])…/g.exec('a?…')?.[1], /\…/.test('…'), /\\…/.test('\\…'), /[«»]/u.test('»'), /^😀$/u.test('😀'), /^😀$/.test('😀'), 'ß'.length])`;
    const escaped = asciiOnly(code);
    assert.equal(/[^\x00-\x7f]/.exec(escaped), null, escaped);
    assert.equal(runInNewContext(escaped), runInNewContext(code));
    assert.equal(runInNewContext(escaped), JSON.stringify(['?', true, true, true, true, true, 1]));
  });
});
