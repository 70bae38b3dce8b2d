import assert from 'node:assert/strict';
import {
  MACHINE_SETTINGS,
  parseSettings,
  parseSettingsFrom,
  SETTING_KEYS,
  tokenSecretKey,
  type SettingInspection,
} from '../../extension/core/settings';

const read = (values: Record<string, unknown>) => (key: string) => values[key];

describe('extension: settings', () => {
  it("uses the bundled service when no URL is set, with the defaults (no Node path: the editor's runtime)", () => {
    const s = parseSettings(read({}));
    assert.deepEqual(s.connection, { mode: 'bundled' });
    assert.equal(s.nodePath, null);
    assert.equal(parseSettings(read({ [SETTING_KEYS.nodePath]: '  ' })).nodePath, null);
    assert.deepEqual(s.notifications, { enabled: true, pollIntervalMs: 60_000 });
    assert.deepEqual(s.problems, []);
    assert.deepEqual(parseSettings(read({ [SETTING_KEYS.serverUrl]: '   ' })).connection, { mode: 'bundled' });
  });

  it('normalises the service URL (no trailing slash) and refuses what is not http(s)', () => {
    assert.deepEqual(parseSettings(read({ [SETTING_KEYS.serverUrl]: ' http://127.0.0.1:8000/ ' })).connection, {
      mode: 'remote',
      url: 'http://127.0.0.1:8000',
    });
    assert.deepEqual(parseSettings(read({ [SETTING_KEYS.serverUrl]: 'https://cc.example/base//' })).connection, {
      mode: 'remote',
      url: 'https://cc.example/base',
    });
    for (const bad of ['ftp://x', 'not a url', 'http://x/?a=1']) {
      const c = parseSettings(read({ [SETTING_KEYS.serverUrl]: bad })).connection;
      assert.equal(c.mode, 'invalid', bad);
      assert.match((c as { error: string }).error, /changeControl\.serverUrl/);
    }
    assert.equal(parseSettings(read({ [SETTING_KEYS.serverUrl]: 42 })).connection.mode, 'invalid');
  });

  it('reads the Node path, notification switch and poll interval, replacing bad values with defaults', () => {
    const s = parseSettings(
      read({
        [SETTING_KEYS.nodePath]: ' /opt/node20/bin/node ',
        [SETTING_KEYS.notificationsEnabled]: false,
        [SETTING_KEYS.pollIntervalSeconds]: 90.4,
      }),
    );
    assert.equal(s.nodePath, '/opt/node20/bin/node');
    assert.deepEqual(s.notifications, { enabled: false, pollIntervalMs: 90_000 });
    const bad = parseSettings(
      read({
        [SETTING_KEYS.nodePath]: 5,
        [SETTING_KEYS.notificationsEnabled]: 'yes',
        [SETTING_KEYS.pollIntervalSeconds]: 2,
      }),
    );
    assert.equal(bad.nodePath, null);
    assert.deepEqual(bad.notifications, { enabled: true, pollIntervalMs: 10_000 });
    assert.equal(bad.problems.length, 3);
  });

  it('keeps one token per service', () => {
    assert.equal(tokenSecretKey({ mode: 'bundled' }), 'changeControl.token.bundled');
    assert.equal(tokenSecretKey({ mode: 'remote', url: 'http://a:1' }), 'changeControl.token.http://a:1');
    assert.equal(tokenSecretKey({ mode: 'invalid', error: 'x' }), null);
  });

  it('reads the service URL and the Node path from user or machine settings only: a workspace or folder cannot choose where the token goes', () => {
    const hostile: Record<string, SettingInspection> = {
      [SETTING_KEYS.serverUrl]: {
        defaultValue: '',
        workspaceValue: 'https://collector.attacker.example',
        workspaceFolderValue: 'https://collector.attacker.example',
      },
      [SETTING_KEYS.nodePath]: { defaultValue: '', workspaceValue: './evil-node' },
      [SETTING_KEYS.pollIntervalSeconds]: { defaultValue: 60, workspaceValue: 120 },
    };
    const s = parseSettingsFrom((key) => hostile[key]);
    assert.deepEqual(s.connection, { mode: 'bundled' }, 'the workspace URL is ignored: the default (bundled) holds');
    assert.equal(s.nodePath, null);
    assert.equal(s.notifications.pollIntervalMs, 120_000, 'other settings still follow the workspace');
    const user = parseSettingsFrom((key) => ({
      ...hostile[key],
      globalValue: key === SETTING_KEYS.serverUrl ? 'https://cc.example.net' : undefined,
    }));
    assert.deepEqual(
      user.connection,
      { mode: 'remote', url: 'https://cc.example.net' },
      "the user's own setting wins over the workspace's",
    );
    assert.deepEqual([...MACHINE_SETTINGS].sort(), [SETTING_KEYS.nodePath, SETTING_KEYS.serverUrl].sort());
  });

  it('never offers the token of one service to another: a token is kept per URL (scheme, host, port and path), equal URLs share it', () => {
    const keyOf = (url: string) => {
      const c = parseSettings(read({ [SETTING_KEYS.serverUrl]: url })).connection;
      return tokenSecretKey(c);
    };
    const signedIn = keyOf('https://cc.example.net');
    for (const other of [
      'http://cc.example.net',
      'https://cc.example.net:8443',
      'https://cc.example.net.attacker.example',
      'https://cc.example.net@attacker.example',
      'https://attacker.example',
      'https://cc.example.net/other',
    ]) {
      assert.notEqual(keyOf(other), signedIn, other);
    }
    for (const same of ['https://cc.example.net/', ' https://CC.example.net ', 'https://cc.example.net:443'])
      assert.equal(keyOf(same), signedIn, same);
  });
});
