// A real NetBox client against the service as `npm start` starts it: Debian's python3-pynetbox
// runs test/clients/pynetbox_flow.py (bulk writes into a branch, a change request opened and
// submitted, everything read back, nb.version, choices(), openapi()). Without pynetbox the test
// is skipped, except where REQUIRE_PYNETBOX=1 (CI, which installs it) makes that a failure.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { npmStart } from './npm-start';
const PYTHON = '/usr/bin/python3';
const TOKEN = 'pynetbox0123456789abcdef0123456789abcdef';

function pynetboxInstalled(): boolean {
  return spawnSync(PYTHON, ['-c', 'import pynetbox'], { stdio: 'ignore' }).status === 0;
}

describe('real NetBox clients: pynetbox against npm start', () => {
  it('pynetbox stages objects in bulk into a branch, opens and submits a change request, and reads them back', async function () {
    this.timeout(240_000);
    if (!pynetboxInstalled()) {
      assert.ok(process.env.REQUIRE_PYNETBOX !== '1', `REQUIRE_PYNETBOX=1 but ${PYTHON} cannot import pynetbox`);
      this.skip();
    }
    const service = npmStart(TOKEN);
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
      service.stop();
    }
  });
});
