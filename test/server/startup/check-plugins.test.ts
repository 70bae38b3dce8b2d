import assert from 'node:assert/strict';
import { unchecked } from '../../support/unchecked';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { branchingPlugin } from '../../../server/plugins/branching/plugin';
import { changeControlPlugin } from '../../../server/plugins/change-control/plugin';
import { runtime } from '../../../server/plugins/change-control/runtime';
import { PluginError } from '../../../server/app';
import { parseConfig } from '../../../server/host/core/config';
import { buildApp } from '../../support/service';
import { runToExit, startAndWait, waitForExit } from './run-service';
import { tempDirForEachTest } from '../../support/prepared';

const TOKEN = 'c0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ff';

/** A check plugin module (CommonJS) registering one check through the registry it is given. */
function pluginSource(options: { hostVersion?: unknown; name: string; body?: string }): string {
  return [
    options.hostVersion === undefined ? '' : `exports.hostVersion = ${JSON.stringify(options.hostVersion)};`,
    'exports.ready = (registry) => {',
    options.body ??
      `  registry.registerCheck({ name: ${JSON.stringify(options.name)}, label: 'Ticket linked', fn: (cr) => cr.ref ? registry.CheckResult.passed('Ticket ' + cr.ref) : registry.CheckResult.failed('No ticket reference.') });`,
    '};',
    '',
  ].join('\n');
}

async function api(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      Authorization: `Token ${TOKEN}`,
      Accept: 'application/json',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

describe('check plugins at start-up (contract 6, Versioning rules 2-3)', function () {
  this.timeout(60_000);
  const dir = tempDirForEachTest('cc-check-plugins-');

  it('a check plugin whose hostVersion excludes 4.7 makes the service exit 2 with the reason on stderr', async () => {
    writeFileSync(
      dir('old-line.cjs'),
      pluginSource({ name: 'old/check', hostVersion: { min: '4.6.0', max: '4.6.99' } }),
    );
    writeFileSync(dir('config.json'), JSON.stringify({ check_plugins: ['./old-line.cjs'] }));
    const { code, stderr, stdout } = await runToExit([
      '--port',
      '0',
      '--db',
      ':memory:',
      '--config',
      dir('config.json'),
    ]);
    assert.equal(code, 2);
    assert.match(stderr, /check plugin "\.\/old-line\.cjs" supports host 4\.6\.0-4\.6\.99, not 4\.7\.0/);
    assert.doesNotMatch(stdout, /listening/);
  });

  it('plugins in range load, by a path relative to the configuration file and by package name, and their checks run', async () => {
    mkdirSync(dir('plugins'));
    writeFileSync(
      dir('plugins', 'ticket.cjs'),
      pluginSource({ name: 'acme/ticket', hostVersion: { min: '4.7.0', max: '4.7.99' } }),
    );
    const pkg = dir('node_modules', 'acme-cc-checks');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'acme-cc-checks', version: '1.0.0', main: 'index.js' }),
    );
    writeFileSync(
      join(pkg, 'index.js'),
      pluginSource({
        name: 'acme/window',
        body: "  registry.registerCheck({ name: 'acme/window', label: 'Window set', required: false, fn: (cr) => cr.scheduled_start ? registry.CheckResult.passed() : registry.CheckResult.skipped('No change window.') });",
      }),
    );
    writeFileSync(dir('config.json'), JSON.stringify({ check_plugins: ['./plugins/ticket.cjs', 'acme-cc-checks'] }));
    // Started from another folder: the relative path is resolved from the configuration file.
    const started = await startAndWait(['--port', '0', '--db', ':memory:', '--config', dir('config.json')], {
      CHANGE_CONTROL_ADMIN_TOKEN: TOKEN,
    });
    try {
      const b = await api(started.url, 'POST', '/api/plugins/branching/branches/', { name: 'with-plugins' });
      const cr = await api(started.url, 'POST', '/api/plugins/change-control/change-requests/', {
        branch: b.id,
        ref: 'CHG-42',
      });
      const checks = await api(started.url, 'GET', `/api/plugins/change-control/checks/?change_request_id=${cr.id}`);
      const byName = Object.fromEntries(checks.results.map((c: any) => [c.name, c]));
      assert.deepEqual(Object.keys(byName).sort(), ['acme/ticket', 'acme/window']);
      assert.equal(byName['acme/ticket'].status, 'success');
      assert.equal(byName['acme/ticket'].summary, 'Ticket CHG-42');
      assert.equal(byName['acme/ticket'].label, 'Ticket linked');
      assert.equal(byName['acme/window'].status, 'skipped');
      assert.equal(byName['acme/window'].required, false);

      await api(started.url, 'PATCH', `/api/plugins/change-control/change-requests/${cr.id}/`, { ref: '' });
      await api(started.url, 'POST', `/api/plugins/change-control/change-requests/${cr.id}/run-checks/`, {});
      const again = await api(
        started.url,
        'GET',
        `/api/plugins/change-control/checks/?change_request_id=${cr.id}&name=acme/ticket`,
      );
      assert.equal(again.results[0].status, 'failure');
      assert.equal(again.results[0].summary, 'No ticket reference.');
    } finally {
      started.child.kill('SIGTERM');
      assert.equal(await waitForExit(started.child), 0);
    }
  });

  describe('refusals, in process', () => {
    const build = (checkPlugins: string[]) =>
      buildApp(
        [branchingPlugin(), changeControlPlugin({ configDir: dir() })],
        parseConfig({ check_plugins: checkPlugins }),
      );

    async function refusedWith(checkPlugins: string[], reason: RegExp): Promise<void> {
      await assert.rejects(build(checkPlugins), (err: Error) => {
        assert.ok(err instanceof PluginError, String(err));
        assert.match(err.message, reason);
        return true;
      });
    }

    it('refuses a missing module file, a package that is not installed, a module without ready(), a malformed hostVersion and a ready() that throws', async () => {
      await refusedWith(['./missing.cjs'], /check plugin "\.\/missing\.cjs": file .*missing\.cjs does not exist/);
      await refusedWith(['no-such-package-cc'], /check plugin "no-such-package-cc" cannot be loaded/);
      writeFileSync(dir('no-ready.cjs'), 'exports.hostVersion = { min: "4.7.0", max: "4.7.99" };\n');
      await refusedWith(['./no-ready.cjs'], /does not export ready\(registry\)/);
      writeFileSync(dir('bad-range.cjs'), pluginSource({ name: 'x', hostVersion: '4.7' }));
      await refusedWith(['./bad-range.cjs'], /hostVersion must be \{min, max\}/);
      writeFileSync(dir('throws.cjs'), pluginSource({ name: 'x', body: "  throw new Error('no licence');" }));
      await refusedWith(['./throws.cjs'], /failed in ready\(\): no licence/);
      writeFileSync(dir('dup.cjs'), pluginSource({ name: 'has-changes' }));
      await refusedWith(['./dup.cjs'], /a check named "has-changes" is already registered/);
    });

    it('loads each plugin once at start, and seals the registry afterwards', async () => {
      writeFileSync(
        dir('counted.cjs'),
        'globalThis.__ccLoads = (globalThis.__ccLoads ?? 0) + 1;\n' + pluginSource({ name: 'counted/check' }),
      );
      const before = (globalThis as { __ccLoads?: number }).__ccLoads ?? 0;
      const { host } = await build(['./counted.cjs']);
      assert.equal((globalThis as { __ccLoads?: number }).__ccLoads, before + 1);
      const registry = runtime(host).registry;
      assert.ok(registry.get('counted/check'));
      assert.throws(
        () => registry.registerCheck({ name: 'late', fn: () => unchecked(undefined) }),
        /only be registered at start/,
      );
    });
  });
});
