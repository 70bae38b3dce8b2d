import assert from 'node:assert/strict';
import { PluginError } from '../../../../server/app';
import { branchingPlugin } from '../../../../server/plugins/branching/plugin';
import { changeControlPlugin } from '../../../../server/plugins/change-control/plugin';
import type { HostPlugin } from '../../../../server/host/host';
import { HOST_VERSION, inRange } from '../../../../server/host/core/version';
import { buildApp, startService, withService } from '../../../support/service';

const changeControl = () => changeControlPlugin({ configDir: process.cwd() });

describe('change control: versioning', () => {
  it('Versioning 1: /api/status/ (no token) reports change-control 0.5.0 and branching 1.2.0 on host 4.7.0, with API-Version 4.7', async () => {
    await withService(startService(), async (svc) => {
      const res = await svc.anonymous.get('/api/status/');
      assert.equal(res.status, 200);
      assert.equal(res.body['host-version'], '4.7.0');
      assert.deepEqual(res.body.plugins, { 'change-control': '0.5.0', branching: '1.2.0' });
      assert.equal(res.headers.get('api-version'), '4.7');
    });
  });

  it('Versioning 2: the plugin declares 0.5.0, runs on host 4.7 (4.7.0-4.7.99) and requires branching 1.2', () => {
    const plugin = changeControl();
    assert.equal(plugin.name, 'change-control');
    assert.equal(plugin.version, '0.5.0');
    assert.deepEqual(plugin.hostVersion, { min: '4.7.0', max: '4.7.99' });
    assert.deepEqual(plugin.requires, { branching: '1.2' });
    assert.ok(inRange(HOST_VERSION, plugin.hostVersion));
    for (const other of ['4.6.0', '4.6.99', '4.8.0', '5.0.0'])
      assert.equal(inRange(other, plugin.hostVersion), false, other);
  });

  it('Versioning 2: the service starts with branching 1.2.x', async () => {
    const { host } = await buildApp([{ ...branchingPlugin(), version: '1.2.7' }, changeControl()]);
    assert.equal(host.plugins.get('change-control'), '0.5.0');
    assert.equal(host.plugins.get('branching'), '1.2.7');
  });

  it('Versioning 2: the service refuses to start with branching 1.3, naming the reason', async () => {
    await assert.rejects(buildApp([{ ...branchingPlugin(), version: '1.3.0' }, changeControl()]), (err: Error) => {
      assert.ok(err instanceof PluginError, String(err));
      assert.match(err.message, /plugin change-control requires branching 1\.2, but branching 1\.3\.0 is installed/);
      return true;
    });
    await assert.rejects(
      buildApp([{ ...branchingPlugin(), version: '1.1.9' }, changeControl()]),
      /requires branching 1\.2, but branching 1\.1\.9 is installed/,
    );
  });

  it('Versioning 2: the service refuses to start without the branching plugin', async () => {
    await assert.rejects(buildApp([changeControl()]), (err: Error) => {
      assert.ok(err instanceof PluginError);
      assert.match(err.message, /plugin change-control requires plugin branching 1\.2, which is not installed/);
      return true;
    });
  });

  it('Versioning 3: the host enforces the range: a 0.4.x line declared for host 4.6 refuses to start here, naming its range', async () => {
    const oldLine: HostPlugin = { ...changeControl(), version: '0.4.9', hostVersion: { min: '4.6.0', max: '4.6.99' } };
    await assert.rejects(buildApp([branchingPlugin(), oldLine]), (err: Error) => {
      assert.ok(err instanceof PluginError);
      assert.match(err.message, /change-control 0\.4\.9 supports host 4\.6\.0-4\.6\.99, not 4\.7\.0/);
      return true;
    });
  });

  it('Versioning 6 (contract 2): no version segment in URLs: the plugin answers under /api/plugins/change-control/, a versioned path is 404', async () => {
    await withService(startService(), async (svc) => {
      const res = await svc.admin.get('/api/plugins/change-control/change-requests/');
      assert.equal(res.status, 200);
      assert.ok(Array.isArray(res.body.results));
      assert.equal((await svc.admin.get('/api/v1/plugins/change-control/change-requests/')).status, 404);
      assert.equal((await svc.admin.get('/api/plugins/change-control/v0.5/change-requests/')).status, 404);
    });
  });
});
