// Starting and stopping the bundled service as a child process (what the extension does when
// changeControl.serverUrl is empty): the ready line, the admin token, failures, stop.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS } from '../../launch/service-launch';
import { ApiClient } from '../../extension/core/api-client';
import {
  checkNodeVersion,
  chooseServiceRuntime,
  decideServiceRuntime,
  editorRuntime,
  explainSpawnFailure,
  explainStartFailure,
  launchService,
  otherRuntime,
  parseListeningLine,
  probeRuntime,
  ServiceStartError,
  type RunningService,
} from '../../extension/core/bundled-service';
import { nodeSqlite } from '../../server/host/db/sqlite-node';
import { tempDirForEachTest } from '../support/prepared';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'f00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeed';
/** This Node.js, as changeControl.nodePath would name it. */
const THIS_NODE = otherRuntime(process.execPath);
/** Whether this Node.js has node:sqlite as the service uses it (the CI runs the suite on Node 20 and on Node 24). */
const HAS_NODE_SQLITE = nodeSqlite.problem() === null;

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

  /** The service from its sources, as a script a runtime can run. */
  const serviceScript = () =>
    script(
      'service.cjs',
      `require(${JSON.stringify(require.resolve('tsx/cjs/api', { paths: [ROOT] }))}).register();\nrequire(${JSON.stringify(join(ROOT, 'server/main.ts'))});\n`,
    );

  it('starts the real service with the admin token, in its own database file, and stops it', async () => {
    const wrapper = serviceScript();
    const logged: string[] = [];
    running = await launchService({
      runtime: THIS_NODE,
      serverScript: wrapper,
      dbPath: dir('store', 'cc.sqlite3'),
      adminToken: TOKEN,
      log: (l) => logged.push(l),
    });
    assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const me = await new ApiClient({ baseUrl: running.url, token: TOKEN }).me();
    assert.equal(me.username, 'admin');
    assert.ok(logged.some((l) => l.startsWith('listening on')));
    assert.ok(
      logged.some((l) => /SQLite driver: (better-sqlite3|node:sqlite) \(/.test(l)),
      logged.join('\n'),
    );
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
      runtime: THIS_NODE,
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
      runtime: THIS_NODE,
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
      launchService({ runtime: THIS_NODE, serverScript: bad, dbPath: dir('db'), adminToken: TOKEN }),
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
      launchService({ runtime: otherRuntime(missing), serverScript: 'x.js', dbPath: dir('db'), adminToken: TOKEN }),
      (e: unknown) => {
        assert.ok(e instanceof ServiceStartError);
        assert.equal(
          e.message,
          `The bundled service could not start: Node.js was not found: "${missing}" (setting changeControl.nodePath) is not a program on this machine. Install Node.js 22.16 or newer, or set changeControl.nodePath to its full path.`,
        );
        assert.doesNotMatch(e.message, /ENOENT/);
        return true;
      },
    );
    const notNode = script('not-node.sh', '#!/bin/sh\necho "hello from a shell"\n');
    chmodSync(notNode, 0o755);
    await assert.rejects(
      probeRuntime(otherRuntime(notNode)),
      /\(setting changeControl\.nodePath\) did not answer as Node\.js does \(it said "hello from a shell"\)/,
    );
    const oldNode = script('old-node.sh', '#!/bin/sh\necho v18.19.1\n');
    chmodSync(oldNode, 0o755);
    await assert.rejects(
      launchService({ runtime: otherRuntime(oldNode), serverScript: 'x.js', dbPath: dir('db'), adminToken: TOKEN }),
      /could not start: ".*old-node\.sh" \(setting changeControl\.nodePath\) is Node\.js 18\.19\.1, too old: the bundled service needs Node\.js 22\.16 or newer/,
    );
    assert.deepEqual(await probeRuntime(THIS_NODE), { version: process.versions.node, sqlite: HAS_NODE_SQLITE });
    assert.equal(checkNodeVersion('v20.19.0', THIS_NODE), null);
    assert.match(checkNodeVersion('v20.18.3', THIS_NODE)!, /too old/);
    assert.match(
      explainSpawnFailure('EACCES', otherRuntime('/opt/node'), 'spawn EACCES'),
      /^"\/opt\/node" \(setting changeControl\.nodePath\) may not be run \(permission denied\)/,
    );
  });

  it("runs on changeControl.nodePath when set, else on the editor's runtime (ELECTRON_RUN_AS_NODE, node:sqlite) when it has node:sqlite, else on node from PATH, saying why", () => {
    const editor = '/opt/editor/code';
    const set = decideServiceRuntime('/opt/node24/bin/node', editor, null);
    assert.deepEqual(set, {
      runtime: { program: '/opt/node24/bin/node', source: 'setting', env: { ELECTRON_RUN_AS_NODE: '1' } },
      note: null,
      probe: null,
    });
    const probe = { version: '22.20.0', sqlite: true };
    assert.deepEqual(decideServiceRuntime(null, editor, probe), {
      runtime: {
        program: editor,
        source: 'editor',
        env: { ELECTRON_RUN_AS_NODE: '1', CHANGE_CONTROL_SQLITE_DRIVER: 'node' },
      },
      note: null,
      probe,
    });
    const lacking = decideServiceRuntime(null, editor, { version: '20.19.1', sqlite: false });
    assert.deepEqual(lacking.runtime, { program: 'node', source: 'path', env: { ELECTRON_RUN_AS_NODE: '1' } });
    assert.equal(
      lacking.note,
      'The editor\'s runtime "/opt/editor/code" is Node.js 20.19.1, which has no built-in SQLite as the service uses it (node:sqlite, Node.js 22.16 or newer): the bundled service runs on "node" from PATH instead (set changeControl.nodePath to choose a Node.js).',
    );
    const unanswered = decideServiceRuntime(null, editor, { problem: 'it exited (code 9)' });
    assert.equal(unanswered.runtime.source, 'path');
    assert.match(
      unanswered.note!,
      /^The editor's runtime "\/opt\/editor\/code" could not be asked \(it exited \(code 9\)\): the bundled service runs on "node" from PATH instead/,
    );
  });

  it("asks the editor's runtime whether it has node:sqlite as the service's own driver check says", async () => {
    const decision = await chooseServiceRuntime(null, process.execPath);
    if (HAS_NODE_SQLITE) {
      assert.deepEqual(decision.runtime, editorRuntime(process.execPath));
      assert.deepEqual(decision.probe, { version: process.versions.node, sqlite: true });
      assert.equal(decision.note, null);
    } else {
      assert.deepEqual(decision.runtime, otherRuntime(null));
      assert.match(
        decision.note!,
        new RegExp(`is Node\\.js ${process.versions.node.replace(/\./g, '\\.')}, which has no built-in SQLite`),
      );
    }
    assert.deepEqual((await chooseServiceRuntime('/opt/node', process.execPath)).runtime, otherRuntime('/opt/node'));
  });

  it("runs the real service on the editor's runtime on node:sqlite, or says in words that the runtime has none", async () => {
    const logged: string[] = [];
    const launching = launchService({
      runtime: editorRuntime(process.execPath),
      serverScript: serviceScript(),
      dbPath: dir('store', 'cc.sqlite3'),
      adminToken: TOKEN,
      log: (l) => logged.push(l),
    });
    if (HAS_NODE_SQLITE) {
      running = await launching;
      assert.equal((await new ApiClient({ baseUrl: running.url, token: TOKEN }).me()).username, 'admin');
      assert.ok(
        logged.includes('[info] SQLite driver: node:sqlite (CHANGE_CONTROL_SQLITE_DRIVER=node)'),
        logged.join('\n'),
      );
    } else {
      await assert.rejects(launching, (e: unknown) => {
        assert.ok(e instanceof ServiceStartError);
        assert.equal(
          e.message,
          `The bundled service could not start: the editor's runtime "${process.execPath}" is Node.js ${process.versions.node}, which has no built-in SQLite as the service uses it (node:sqlite). Set changeControl.nodePath to Node.js 22.16 or newer.`,
        );
        return true;
      });
    }
  });

  it("puts the reason it does not run on the editor's runtime before any failure: no node on PATH", async () => {
    const empty = dir('empty-path');
    mkdirSync(empty, { recursive: true });
    await assert.rejects(
      launchService({
        runtime: otherRuntime(null),
        note: "The editor's runtime has no node:sqlite.",
        serverScript: 'x.js',
        dbPath: dir('db'),
        adminToken: TOKEN,
        env: { PATH: empty },
      }),
      (e: unknown) => {
        assert.ok(e instanceof ServiceStartError);
        assert.equal(
          e.message,
          'The bundled service could not start: The editor\'s runtime has no node:sqlite. Node.js was not found: "node" on PATH (changeControl.nodePath is not set) is not a program on this machine. Install Node.js 22.16 or newer, or set changeControl.nodePath to its full path.',
        );
        return true;
      },
    );
  });

  it('fails when no ready line comes in time', async () => {
    const silent = script('silent.js', 'setInterval(() => {}, 1000);');
    await assert.rejects(
      launchService({
        runtime: THIS_NODE,
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
      runtime: THIS_NODE,
      serverScript: stubborn,
      dbPath: dir('db'),
      adminToken: TOKEN,
    });
    await running.stop(200);
    assert.equal((await running.exited).signal, 'SIGKILL');
    running = undefined;
  });

  it('explains a Node.js without SQLite (no driver loads), naming the runtime and what to set', () => {
    const output =
      "change-control: cannot open database x: no SQLite driver: better-sqlite3 cannot be loaded: Cannot find module 'better-sqlite3'; and this Node.js (20.19.1) has no node:sqlite: Node.js 22.16 or newer has it";
    assert.equal(
      explainStartFailure(output, otherRuntime('/usr/bin/node'), '20.19.1'),
      '"/usr/bin/node" (setting changeControl.nodePath) is Node.js 20.19.1, which has no built-in SQLite as the service uses it (node:sqlite). Clear changeControl.nodePath to use the editor\'s own runtime, or set it to Node.js 22.16 or newer.',
    );
    assert.equal(
      explainStartFailure(output, otherRuntime(null), '20.19.1'),
      '"node" on PATH (changeControl.nodePath is not set) is Node.js 20.19.1, which has no built-in SQLite as the service uses it (node:sqlite). Set changeControl.nodePath to Node.js 22.16 or newer.',
    );
    assert.equal(explainStartFailure('something else', THIS_NODE), null);
  });
});
