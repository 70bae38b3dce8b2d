import assert from 'node:assert/strict';
import { PluginError } from '../../../server/app';
import type { HostPlugin } from '../../../server/host/host';
import { buildApp } from '../../support/service';

function plugin(overrides: Partial<HostPlugin>): HostPlugin {
  return {
    name: 'example',
    version: '1.0.0',
    hostVersion: { min: '4.7.0', max: '4.7.99' },
    register: () => undefined,
    ...overrides,
  };
}

describe('plugin versions (Versioning rules 2-3)', () => {
  it('refuses a plugin whose host range excludes 4.7, naming the plugin and its range', async () => {
    await assert.rejects(
      buildApp([plugin({ name: 'old-line', version: '0.4.2', hostVersion: { min: '4.6.0', max: '4.6.99' } })]),
      (err: Error) => {
        assert.ok(err instanceof PluginError);
        assert.match(err.message, /old-line 0\.4\.2 supports host 4\.6\.0-4\.6\.99, not 4\.7\.0/);
        return true;
      },
    );
  });

  it('refuses a plugin whose required plugin is missing or on another line', async () => {
    await assert.rejects(
      buildApp([plugin({ requires: { branching: '1.2' } })]),
      /requires plugin branching 1\.2, which is not installed/,
    );
    await assert.rejects(
      buildApp([plugin({ name: 'branching', version: '1.1.4' }), plugin({ requires: { branching: '1.2' } })]),
      /requires branching 1\.2, but branching 1\.1\.4 is installed/,
    );
  });

  it('starts with plugins in range and reports their versions on /api/status/', async () => {
    const { host } = await buildApp([
      plugin({ name: 'branching', version: '1.2.0' }),
      plugin({ requires: { branching: '1.2' } }),
    ]);
    assert.equal(host.plugins.get('branching'), '1.2.0');
    assert.equal(host.plugins.get('example'), '1.0.0');
  });
});
