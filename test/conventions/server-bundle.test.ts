// The service's bundle: ASCII only (esbuild.config.mjs: V8 keeps a script's source for the life of
// the process, at one byte per character when every character is Latin-1 and at two otherwise,
// so a few dozen characters left in comments doubled the 3.9 MB the bundle holds), and loading no
// native module of its own accord (the .vsix holds the bundle alone).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import { nodeSqlite } from '../../server/host/db/sqlite-node';

const ROOT = resolve(__dirname, '../..');

interface BuildConfig {
  buildTarget(name: string, outdir?: string): Promise<void>;
  asciiOnly(code: string): string;
}

const buildConfig = async (): Promise<BuildConfig> =>
  (await import(pathToFileURL(join(ROOT, 'esbuild.config.mjs')).href)) as BuildConfig;

describe("conventions: the service's bundle", () => {
  let dir = '';
  before(async function () {
    this.timeout(120_000);
    const { buildTarget } = await buildConfig();
    dir = mkdtempSync(join(tmpdir(), 'cc-bundle-'));
    await buildTarget('server', dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is ASCII only, built as npm start builds it', () => {
    const text = readFileSync(join(dir, 'server.js'), 'latin1');
    assert.ok(text.length > 100_000);
    const outside = /[^\x00-\x7f]/.exec(text);
    assert.equal(
      outside,
      null,
      `non-ASCII at ${outside?.index}: ${text.slice((outside?.index ?? 0) - 60, (outside?.index ?? 0) + 20)}`,
    );
  });

  it('loads no native module until SQLite is opened through better-sqlite3: alone (no node_modules, as the .vsix holds it) it runs on node:sqlite, or says that no driver loads (exit 2)', async function () {
    this.timeout(60_000);
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.CHANGE_CONTROL_SQLITE_DRIVER;
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, [join(dir, 'server.js'), '--port', '0', '--db', ':memory:'], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let exitCode: number | null = null;
    const said = new Promise<void>((done) => {
      const seen = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (/listening on http/.test(output)) done();
      };
      child.stdout.on('data', seen);
      child.stderr.on('data', seen);
      child.once('exit', (code) => {
        exitCode = code;
        done();
      });
    });
    try {
      await said;
    } finally {
      child.kill('SIGKILL');
    }
    assert.match(output, /better-sqlite3 cannot be loaded: Cannot find module 'better-sqlite3'/);
    if (nodeSqlite.problem() === null) {
      assert.match(output, /\[info\] SQLite driver: node:sqlite \(better-sqlite3 cannot be loaded: /);
      assert.match(output, /listening on http:\/\/127\.0\.0\.1:\d+/);
    } else {
      assert.match(output, /cannot open database :memory:: no SQLite driver: /);
      assert.equal(exitCode, 2, 'a bad start');
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
