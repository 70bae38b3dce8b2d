// A real NetBox client against the service as `npm start` starts it: Debian's python3-pynetbox
// runs test/clients/pynetbox_flow.py (bulk writes into a branch, a change request opened and
// submitted, everything read back, nb.version, choices(), openapi()). Without pynetbox the test
// is skipped, except where REQUIRE_PYNETBOX=1 (CI, which installs it) makes that a failure.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const PYTHON = '/usr/bin/python3';
const TOKEN = 'pynetbox0123456789abcdef0123456789abcdef';

function pynetboxInstalled(): boolean {
  return spawnSync(PYTHON, ['-c', 'import pynetbox'], { stdio: 'ignore' }).status === 0;
}

/** Starts `npm start` on a free port with a fresh data folder; answers its base URL once it listens. */
function startService(dataDir: string): { child: ChildProcess; url: Promise<string> } {
  const child = spawn('npm', ['start', '--', '--port', '0', '--db', join(dataDir, 'change-control.sqlite3')], {
    cwd: ROOT,
    env: { ...process.env, CHANGE_CONTROL_ADMIN_TOKEN: TOKEN, PORT: '' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = new Promise<string>((resolveUrl, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(output);
      if (found) resolveUrl(found[1]!);
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  return { child, url };
}

describe('real NetBox clients: pynetbox against npm start', () => {
  it('pynetbox stages objects in bulk into a branch, opens and submits a change request, and reads them back', async function () {
    this.timeout(240_000);
    if (!pynetboxInstalled()) {
      assert.ok(process.env.REQUIRE_PYNETBOX !== '1', `REQUIRE_PYNETBOX=1 but ${PYTHON} cannot import pynetbox`);
      this.skip();
    }
    const dataDir = mkdtempSync(join(tmpdir(), 'cc-pynetbox-'));
    const service = startService(dataDir);
    try {
      const url = await service.url;
      const run = spawn(PYTHON, [join(__dirname, 'pynetbox_flow.py'), url, TOKEN], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      run.stdout.on('data', (c: Buffer) => (output += c.toString()));
      run.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const code = await new Promise<number | null>((done) => run.on('exit', done));
      assert.equal(code, 0, output);
      assert.match(output, /\d+ steps passed/);
    } finally {
      // The whole group npm start made (npm, its shell, node).
      try {
        process.kill(-service.child.pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
