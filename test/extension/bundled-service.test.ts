// Starting and stopping the bundled service as a child process (what the extension does when
// changeControl.serverUrl is empty): the ready line, the admin token, failures, stop.
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS } from '../../launch/service-launch';
import { ApiClient } from '../../extension/core/api-client';
import {
  checkNodeVersion,
  explainSpawnFailure,
  explainStartFailure,
  launchService,
  parseListeningLine,
  probeNode,
  ServiceStartError,
  type RunningService,
} from '../../extension/core/bundled-service';
import { tempDirForEachTest } from '../support/prepared';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'f00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeed';

describe('extension: the bundled service process', () => {
  let running: RunningService | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });
  const dir = tempDirForEachTest('cc-bundled-');

  function script(name: string, body: string): string {
    const file = dir(name);
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
    const wrapper = script(
      'service.cjs',
      `require(${JSON.stringify(require.resolve('tsx/cjs/api', { paths: [ROOT] }))}).register();\nrequire(${JSON.stringify(join(ROOT, 'server/main.ts'))});\n`,
    );
    const logged: string[] = [];
    running = await launchService({
      nodePath: process.execPath,
      serverScript: wrapper,
      dbPath: dir('store', 'cc.sqlite3'),
      adminToken: TOKEN,
      log: (l) => logged.push(l),
    });
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
    const fake = script(
      'fake.js',
      `
      process.stdout.write('admin token: ' + process.env.CHANGE_CONTROL_ADMIN_TOKEN + '\\n');
      process.stdout.write('listening on http://127.0.0.1:5' + '\\n');
      setInterval(() => {}, 1000);
    `,
    );
    const logged: string[] = [];
    running = await launchService({
      nodePath: process.execPath,
      serverScript: fake,
      dbPath: dir('db'),
      adminToken: TOKEN,
      log: (l) => logged.push(l),
    });
    assert.equal(running.url, 'http://127.0.0.1:5');
    assert.deepEqual(logged, ['listening on http://127.0.0.1:5']);
  });

  it("starts the service's Node with the service's Node options and environment", async () => {
    const fake = script(
      'fake.js',
      `
      process.stdout.write('node options ' + JSON.stringify(process.execArgv) + '\\n');
      process.stdout.write('environment ' + JSON.stringify(Object.fromEntries(${JSON.stringify(Object.keys(SERVICE_ENVIRONMENT))}.map((k) => [k, process.env[k]]))) + '\\n');
      process.stdout.write('listening on http://127.0.0.1:5' + '\\n');
      setInterval(() => {}, 1000);
    `,
    );
    const logged: string[] = [];
    running = await launchService({
      nodePath: process.execPath,
      serverScript: fake,
      dbPath: dir('db'),
      adminToken: TOKEN,
      log: (l) => logged.push(l),
    });
    assert.ok(SERVICE_NODE_OPTIONS.length > 0);
    assert.ok(logged.includes(`node options ${JSON.stringify(SERVICE_NODE_OPTIONS)}`), logged.join('\n'));
    assert.ok(Object.keys(SERVICE_ENVIRONMENT).length > 0);
    assert.ok(logged.includes(`environment ${JSON.stringify(SERVICE_ENVIRONMENT)}`), logged.join('\n'));
  });

  it('fails with the reason when the service exits before it is ready', async () => {
    const bad = script('bad.js', `process.stderr.write('configuration: unknown key "x"\\n'); process.exit(2);`);
    await assert.rejects(
      launchService({ nodePath: process.execPath, serverScript: bad, dbPath: dir('db'), adminToken: TOKEN }),
      (e: unknown) => {
        assert.ok(e instanceof ServiceStartError);
        assert.match(
          e.message,
          /^The bundled service could not start: it exited \(code 2\), saying "configuration: unknown key "x""/,
        );
        assert.match(e.output, /unknown key "x"/);
        return true;
      },
    );
  });

  it('says in words, naming the setting, when Node.js is missing, is not Node.js, or is too old (never a bare ENOENT)', async () => {
    const missing = dir('no-such-node');
    await assert.rejects(
      launchService({ nodePath: missing, serverScript: 'x.js', dbPath: dir('db'), adminToken: TOKEN }),
      (e: unknown) => {
        assert.ok(e instanceof ServiceStartError);
        assert.equal(
          e.message,
          `The bundled service could not start: Node.js was not found: "${missing}" (setting changeControl.nodePath) is not a program on this machine. Install Node.js 20.19 or newer, or set changeControl.nodePath to its full path.`,
        );
        assert.doesNotMatch(e.message, /ENOENT/);
        return true;
      },
    );
    const notNode = script('not-node.sh', '#!/bin/sh\necho "hello from a shell"\n');
    chmodSync(notNode, 0o755);
    await assert.rejects(probeNode(notNode), /did not answer as Node\.js does \(it said "hello from a shell"\)/);
    const oldNode = script('old-node.sh', '#!/bin/sh\necho v18.19.1\n');
    chmodSync(oldNode, 0o755);
    await assert.rejects(
      launchService({ nodePath: oldNode, serverScript: 'x.js', dbPath: dir('db'), adminToken: TOKEN }),
      /could not start: ".*old-node\.sh" \(setting changeControl\.nodePath\) is Node\.js 18\.19\.1, too old: the bundled service needs Node\.js 20\.19 or newer/,
    );
    assert.equal(await probeNode(process.execPath), process.versions.node);
    assert.equal(checkNodeVersion('v20.19.0', 'node'), null);
    assert.match(checkNodeVersion('v20.18.3', 'node')!, /too old/);
    assert.match(explainSpawnFailure('EACCES', '/opt/node', 'spawn EACCES'), /may not be run \(permission denied\)/);
  });

  it('fails when no ready line comes in time', async () => {
    const silent = script('silent.js', 'setInterval(() => {}, 1000);');
    await assert.rejects(
      launchService({
        nodePath: process.execPath,
        serverScript: silent,
        dbPath: dir('db'),
        adminToken: TOKEN,
        startTimeoutMs: 300,
      }),
      /no "listening on" line within 300 ms/,
    );
  });

  it('stops a service that ignores SIGTERM with SIGKILL', async () => {
    const stubborn = script(
      'stubborn.js',
      `process.on('SIGTERM', () => {}); console.log('listening on http://127.0.0.1:6'); setInterval(() => {}, 1000);`,
    );
    running = await launchService({
      nodePath: process.execPath,
      serverScript: stubborn,
      dbPath: dir('db'),
      adminToken: TOKEN,
    });
    await running.stop(200);
    assert.equal((await running.exited).signal, 'SIGKILL');
    running = undefined;
  });

  it('explains a native module built for another Node, naming both versions', () => {
    const output =
      "Error: The module '/x/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 137. Please try re-compiling";
    assert.equal(
      explainStartFailure(output, '/usr/bin/node', '24.3.0'),
      'its SQLite module was built for Node.js 20, but "/usr/bin/node" (setting changeControl.nodePath) is Node.js 24.3.0. Set changeControl.nodePath to Node.js 20.',
    );
    assert.match(
      explainStartFailure('Error: ERR_DLOPEN_FAILED', '/usr/bin/node')!,
      /built for a different Node\.js than "\/usr\/bin\/node" \(setting changeControl\.nodePath/,
    );
    assert.match(
      explainStartFailure("Error: Cannot find module 'better-sqlite3'", 'node')!,
      /missing from the extension/,
    );
    assert.equal(explainStartFailure('something else', 'node'), null);
  });
});
