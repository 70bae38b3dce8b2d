import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { SseStream } from '../../support/sse';
import { runToExit, startAndWait, waitForExit } from './run-service';
import { tempDirForEachTest } from '../../support/prepared';

describe('service start-up (contract section 1)', function () {
  this.timeout(60_000);
  const dir = tempDirForEachTest('cc-start-');

  it('refuses an unknown configuration key: exit 2 with the key named on stderr', async () => {
    const config = dir('config.json');
    writeFileSync(config, JSON.stringify({ change_control: { enforce_merge_gates: true } }));
    const { code, stderr, stdout } = await runToExit(['--port', '0', '--db', ':memory:', '--config', config]);
    assert.equal(code, 2);
    assert.match(stderr, /unknown configuration key "change_control\.enforce_merge_gates"/);
    assert.doesNotMatch(stdout, /listening/);
  });

  it('refuses a value of the wrong type: exit 2 naming the key', async () => {
    const config = dir('config.json');
    writeFileSync(config, JSON.stringify({ change_control: { auto_merge_interval: 'often' } }));
    const { code, stderr } = await runToExit(['--port', '0', '--db', ':memory:', '--config', config]);
    assert.equal(code, 2);
    assert.match(stderr, /change_control\.auto_merge_interval/);
  });

  it('refuses a configuration file that is not JSON, and a missing one', async () => {
    const config = dir('config.json');
    writeFileSync(config, '{ not json');
    assert.equal((await runToExit(['--port', '0', '--db', ':memory:', '--config', config])).code, 2);
    const missing = await runToExit(['--port', '0', '--db', ':memory:', '--config', dir('nope.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read configuration file/);
  });

  it('refuses an unwritable database: exit 2 with the reason', async () => {
    // A regular file where the database folder should be: unwritable for any user, root included.
    const blocker = dir('not-a-folder');
    writeFileSync(blocker, '');
    const { code, stderr } = await runToExit(['--port', '0', '--db', join(blocker, 'db.sqlite3')]);
    assert.equal(code, 2);
    assert.match(stderr, /cannot open database/);
  });

  it('refuses unknown command-line options and a bad port', async () => {
    assert.equal((await runToExit(['--bogus'])).code, 2);
    assert.equal((await runToExit(['--port', 'eighty'])).code, 2);
  });

  it('creates the admin on first start, prints its token once, and listens on a free port', async () => {
    const db = dir('db.sqlite3');
    const first = await startAndWait(['--port', '0', '--db', db]);
    const token = /admin token: ([0-9a-f]{40})/.exec(first.stdout())?.[1];
    assert.ok(token, `no token in: ${first.stdout()}`);
    const me = await fetch(`${first.url}/api/users/groups/`, { headers: { Authorization: `Token ${token}` } });
    assert.equal(me.status, 200);
    assert.equal(me.headers.get('api-version'), '4.7');
    first.child.kill('SIGTERM');
    assert.equal(await waitForExit(first.child), 0);

    const second = await startAndWait(['--port', '0', '--db', db]);
    assert.doesNotMatch(second.stdout(), /admin token/);
    const again = await fetch(`${second.url}/api/users/groups/`, { headers: { Authorization: `Token ${token}` } });
    assert.equal(again.status, 200);
    second.child.kill('SIGTERM');
    assert.equal(await waitForExit(second.child), 0);
  });

  it('gives admin exactly the token of CHANGE_CONTROL_ADMIN_TOKEN, and reads the address from the environment', async () => {
    const token = 'feedfacefeedfacefeedfacefeedfacefeedface';
    const started = await startAndWait([], {
      CHANGE_CONTROL_ADMIN_TOKEN: token,
      PORT: '0',
      CHANGE_CONTROL_DB: dir('env.sqlite3'),
    });
    assert.doesNotMatch(started.stdout(), /admin token/);
    assert.match(started.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${started.url}/api/users/groups/`, { headers: { Authorization: `Token ${token}` } });
    assert.equal(res.status, 200);
    const status = await (await fetch(`${started.url}/api/status/`)).json();
    assert.equal(status['host-version'], '4.7.0');
    started.child.kill('SIGINT');
    assert.equal(await waitForExit(started.child), 0);
  });

  it('refuses an administrator token shorter than 32 characters: exit 2 with a message saying so, nothing started', async () => {
    const db = dir('short-token.sqlite3');
    for (const token of ['abc', 'a'.repeat(31)]) {
      const { code, stderr, stdout } = await runToExit(['--port', '0', '--db', db], {
        CHANGE_CONTROL_ADMIN_TOKEN: token,
      });
      assert.equal(code, 2);
      assert.match(
        stderr,
        new RegExp(`CHANGE_CONTROL_ADMIN_TOKEN must be at least 32 characters long \\(it has ${token.length}\\)`),
      );
      assert.doesNotMatch(stdout, /listening/);
    }
    assert.equal(existsSync(db), false, 'no database was created');
    const started = await startAndWait(['--port', '0', '--db', db], { CHANGE_CONTROL_ADMIN_TOKEN: 'b'.repeat(32) });
    assert.equal(
      (await fetch(`${started.url}/api/users/me/`, { headers: { Authorization: `Token ${'b'.repeat(32)}` } })).status,
      200,
    );
    started.child.kill('SIGTERM');
    assert.equal(await waitForExit(started.child), 0);
  });

  it('finishes an in-flight request on SIGTERM before exiting 0', async () => {
    const started = await startAndWait(['--port', '0', '--db', dir('db.sqlite3')], {
      CHANGE_CONTROL_ADMIN_TOKEN: 'a'.repeat(40),
    });
    // Send a request and signal once it has been written to the socket.
    const status = await new Promise<number>((resolveStatus, reject) => {
      const req = request(`${started.url}/api/status/`, (res) => {
        res.resume();
        resolveStatus(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.on('finish', () => setTimeout(() => started.child.kill('SIGTERM'), 20));
      req.end();
    });
    assert.equal(status, 200);
    assert.equal(await waitForExit(started.child), 0);
  });

  it('ends open event streams on SIGTERM, and still exits 0', async () => {
    const token = 'b'.repeat(40);
    const started = await startAndWait(['--port', '0', '--db', dir('db.sqlite3')], {
      CHANGE_CONTROL_ADMIN_TOKEN: token,
    });
    const streams = [
      await SseStream.open(`${started.url}/api/plugins/change-control/stream/`, { token }),
      await SseStream.open(`${started.url}/api/plugins/change-control/stream/?change_request=1`, { token }),
    ];
    assert.deepEqual(
      streams.map((s) => s.status),
      [200, 200],
    );
    started.child.kill('SIGTERM');
    await Promise.all(streams.map((s) => s.closedByServer()));
    assert.equal(await waitForExit(started.child), 0);
  });
});
