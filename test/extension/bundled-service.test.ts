// Starting and stopping the bundled service as a child process (what the extension does when
// changeControl.serverUrl is empty): the ready line, the admin token, failures, stop.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ApiClient } from '../../extension/core/api-client';
import { explainStartFailure, launchService, parseListeningLine, ServiceStartError, type RunningService } from '../../extension/core/bundled-service';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'f00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeed';

describe('extension: the bundled service process', () => {
  let dir: string;
  let running: RunningService | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cc-bundled-'));
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  function script(name: string, body: string): string {
    const file = join(dir, name);
    writeFileSync(file, body);
    return file;
  }

  it('reads the URL from the ready line only', () => {
    assert.equal(parseListeningLine('listening on http://127.0.0.1:43123'), 'http://127.0.0.1:43123');
    assert.equal(parseListeningLine('  listening on http://127.0.0.1:1\r'), 'http://127.0.0.1:1');
    assert.equal(parseListeningLine('admin token: abc'), null);
    assert.equal(parseListeningLine('not listening on http://x'), null);
  });

  it('starts the real service with the admin token, in its own database file, and stops it', async () => {
    const wrapper = script('service.cjs', `require(${JSON.stringify(require.resolve('tsx/cjs/api', { paths: [ROOT] }))}).register();\nrequire(${JSON.stringify(join(ROOT, 'server/main.ts'))});\n`);
    const logged: string[] = [];
    running = await launchService({ nodePath: process.execPath, serverScript: wrapper, dbPath: join(dir, 'store', 'cc.sqlite3'), adminToken: TOKEN, log: (l) => logged.push(l) });
    assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const me = await new ApiClient({ baseUrl: running.url, token: TOKEN }).me();
    assert.equal(me.username, 'admin');
    assert.ok(logged.some((l) => l.startsWith('listening on')));
    assert.ok(logged.every((l) => !l.includes(TOKEN)));
    await running.stop();
    const exit = await running.exited;
    assert.equal(exit.code, 0);
    running = undefined;
  });

  it('passes the token in the environment and never logs an "admin token:" line', async () => {
    const fake = script('fake.js', `
      process.stdout.write('admin token: ' + process.env.CHANGE_CONTROL_ADMIN_TOKEN + '\\n');
      process.stdout.write('listening on http://127.0.0.1:5' + '\\n');
      setInterval(() => {}, 1000);
    `);
    const logged: string[] = [];
    running = await launchService({ nodePath: process.execPath, serverScript: fake, dbPath: join(dir, 'db'), adminToken: TOKEN, log: (l) => logged.push(l) });
    assert.equal(running.url, 'http://127.0.0.1:5');
    assert.deepEqual(logged, ['listening on http://127.0.0.1:5']);
  });

  it('fails with the reason when the service exits before it is ready', async () => {
    const bad = script('bad.js', `process.stderr.write('configuration: unknown key "x"\\n'); process.exit(2);`);
    await assert.rejects(launchService({ nodePath: process.execPath, serverScript: bad, dbPath: join(dir, 'db'), adminToken: TOKEN }), (e: unknown) => {
      assert.ok(e instanceof ServiceStartError);
      assert.match(e.message, /exited \(code 2\)/);
      assert.match(e.output, /unknown key "x"/);
      return true;
    });
  });

  it('fails when Node cannot be run, and when no ready line comes in time', async () => {
    await assert.rejects(launchService({ nodePath: join(dir, 'no-such-node'), serverScript: 'x.js', dbPath: join(dir, 'db'), adminToken: TOKEN }), /could not run/);
    const silent = script('silent.js', 'setInterval(() => {}, 1000);');
    await assert.rejects(launchService({ nodePath: process.execPath, serverScript: silent, dbPath: join(dir, 'db'), adminToken: TOKEN, startTimeoutMs: 300 }), /no "listening on" line within 300 ms/);
  });

  it('stops a service that ignores SIGTERM with SIGKILL', async () => {
    const stubborn = script('stubborn.js', `process.on('SIGTERM', () => {}); console.log('listening on http://127.0.0.1:6'); setInterval(() => {}, 1000);`);
    running = await launchService({ nodePath: process.execPath, serverScript: stubborn, dbPath: join(dir, 'db'), adminToken: TOKEN });
    await running.stop(200);
    assert.equal((await running.exited).signal, 'SIGKILL');
    running = undefined;
  });

  it('explains a native module built for another Node', () => {
    assert.match(explainStartFailure('Error: The module was compiled against a different Node.js version using NODE_MODULE_VERSION 137', '/usr/bin/node')!, /changeControl\.nodePath/);
    assert.equal(explainStartFailure('something else', 'node'), null);
  });
});
