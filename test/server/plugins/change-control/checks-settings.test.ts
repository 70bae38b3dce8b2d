import assert from 'node:assert/strict';
import { pluginSettings } from '../../../../contract/api/change-control';
import { ConfigError, parseConfig } from '../../../../server/host/core/config';
import { startService, withService, type TestService } from '../../../support/service';
import { actor, BRANCHES, created, detail, DEVICES, expectStatus, ok, policy, REQUESTS, SITES } from './fixtures';
import { approve, assertCheck, checksByName, RUN_CHECKS, setup, startWithChecks } from './checks-support';

const SETTINGS = '/api/plugins/change-control/settings/';
const PREFIXES = '/api/ipam/prefixes/';
const PROTECT_MAIN_DETAIL =
  'Direct changes to main are disabled. Create a branch, make the change there, and open a change request.';

function refused(input: unknown, key: RegExp): void {
  assert.throws(
    () => parseConfig(input),
    (err: Error) => {
      assert.ok(err instanceof ConfigError, String(err));
      assert.match(err.message, key);
      return true;
    },
  );
}

/** Plugin settings: enable_builtin_checks, required_external_checks, branch_page_placement, protect_main. */
describe('change control checks: plugin settings', () => {
  describe('enable_builtin_checks', () => {
    it('True (the default): all five built-ins are available, each applied when a policy names it', async () => {
      await withService(startWithChecks(), async (svc) => {
        assert.deepEqual((await ok(svc.admin.get(SETTINGS))).enable_builtin_checks, [
          'has-changes',
          'no-conflicts',
          'not-stale',
          'threads-resolved',
          'mergeable',
        ]);
        const s = await setup(svc, {
          policy: { checks: ['has-changes', 'no-conflicts', 'not-stale', 'threads-resolved'] },
        });
        const checks = await checksByName(svc.admin, s.cr.id);
        assertCheck(checks['has-changes'], { label: 'Branch has changes', status: 'success' });
        assertCheck(checks['threads-resolved'], { label: 'Comment threads resolved', status: 'success' });
        assert.equal(Object.keys(checks).length, 4);
      });
    });

    it('False: none are available; a policy naming one names a check nothing declares in code, so it is a reported check left pending', async () => {
      await withService(
        startWithChecks({ config: { change_control: { enable_builtin_checks: false } } }),
        async (svc) => {
          assert.deepEqual((await ok(svc.admin.get(SETTINGS))).enable_builtin_checks, []);
          const s = await setup(svc, { policy: { checks: ['has-changes'] } });
          assertCheck((await checksByName(svc.admin, s.cr.id))['has-changes'], {
            status: 'pending',
            label: 'has-changes',
            required: true,
            blocks_merge: true,
          });
          const rerun = await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
          assertCheck((await checksByName(svc.admin, s.cr.id))['has-changes'], { status: 'pending' });
          // Re-run Checks says why it did not run.
          const entry = rerun.check_run.find((e: { name: string }) => e.name === 'has-changes');
          assert.equal(entry.ran, false);
          assert.equal(entry.status, 'pending');
          assert.match(
            entry.reason,
            /built-in check that enable_builtin_checks leaves out.*policy "policy-\d+".*waits for a reported result/,
          );
        },
      );
    });

    it('A list of built-in names: only those are available; an unrecognised name is logged and skipped, and the service starts', async () => {
      await withService(
        startWithChecks({
          config: { change_control: { enable_builtin_checks: ['no-conflicts', 'no-such-check', 'threads-resolved'] } },
        }),
        async (svc) => {
          assert.ok(
            svc.log.lines.some((l) => /^warn: .*enable_builtin_checks.*"no-such-check"/.test(l)),
            svc.log.lines.join('\n'),
          );
          assert.deepEqual((await ok(svc.admin.get(SETTINGS))).enable_builtin_checks, [
            'no-conflicts',
            'threads-resolved',
          ]);
          const s = await setup(svc, { policy: { checks: ['no-conflicts', 'has-changes'] } });
          const checks = await checksByName(svc.admin, s.cr.id);
          assertCheck(checks['no-conflicts'], { label: 'No conflicts with main', status: 'success' });
          assertCheck(checks['has-changes'], { label: 'has-changes', status: 'pending' });
        },
      );
    });

    it('A value of another type refuses the configuration, naming the key', () => {
      refused({ change_control: { enable_builtin_checks: 'yes' } }, /change_control\.enable_builtin_checks/);
      refused({ change_control: { enable_builtin_checks: [1] } }, /change_control\.enable_builtin_checks/);
    });
  });

  describe('required_external_checks', () => {
    let svc: TestService;
    before(async () => {
      svc = await startWithChecks({
        config: {
          change_control: { required_external_checks: [['ci/build', 'CI build'], 'security-scan', ['docs', '']] },
        },
      });
    });
    after(async () => svc.close());

    it('(name, label) pairs and bare strings (the name is then the label) declare reported checks on every request', async () => {
      const s = await setup(svc);
      const checks = await checksByName(svc.admin, s.cr.id);
      assert.deepEqual(Object.keys(checks).sort(), ['ci/build', 'docs', 'security-scan']);
      assertCheck(checks['ci/build'], { label: 'CI build' });
      assertCheck(checks['security-scan'], { label: 'security-scan' });
      assertCheck(checks['docs'], { label: 'docs' });
      assert.deepEqual((await ok(svc.admin.get(SETTINGS))).required_external_checks, [
        { name: 'ci/build', label: 'CI build' },
        { name: 'security-scan', label: 'security-scan' },
        { name: 'docs', label: 'docs' },
      ]);
    });

    it('each is created pending and blocks the merge until reported', async () => {
      const s = await setup(svc, { policy: {} });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      await approve(s.reviewer, s.cr.id);
      const checks = await checksByName(svc.admin, s.cr.id);
      for (const c of Object.values(checks)) assertCheck(c, { status: 'pending', required: true, blocks_merge: true });
      assert.equal(checks['ci/build'].completed, null);
      const names = Object.keys(checks);
      for (const [i, name] of names.entries()) {
        assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, false, `still blocked before ${name}`);
        await ok(
          s.pipeline.client.patch(`/api/plugins/change-control/checks/${checks[name].id}/`, {
            status: i === 0 ? 'skipped' : 'success',
          }),
        );
      }
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
    });

    it('an entry that is neither a string nor a (name, label) pair refuses the configuration, naming the key', () => {
      refused(
        { change_control: { required_external_checks: [['a', 'b', 'c']] } },
        /change_control\.required_external_checks/,
      );
      refused({ change_control: { required_external_checks: [''] } }, /change_control\.required_external_checks/);
      refused({ change_control: { required_external_checks: 'ci' } }, /change_control\.required_external_checks/);
    });
  });

  describe('branch_page_placement', () => {
    for (const [value, expected] of [
      [undefined, ['right_page']],
      [['right_page'], ['right_page']],
      [['alerts'], ['alerts']],
      [['both'], ['both']],
      [[], []],
      ['alerts', ['alerts']],
      ['both', ['both']],
    ] as const) {
      it(`branch_page_placement ${JSON.stringify(value) ?? '(default)'} is accepted and read back as ${JSON.stringify(expected)}`, async () => {
        const config =
          value === undefined
            ? {}
            : { change_control: { branch_page_placement: typeof value === 'string' ? value : [...value] } };
        await withService(startWithChecks({ config }), async (svc) => {
          const reader = await actor(svc, 'plain-user');
          const res = await ok(reader.client.get(SETTINGS));
          assert.deepEqual(res.branch_page_placement, expected);
          pluginSettings.parse(res);
        });
      });
    }

    it('an unknown placement refuses the configuration, naming the key', () => {
      refused({ change_control: { branch_page_placement: 'sidebar' } }, /change_control\.branch_page_placement/);
      refused(
        { change_control: { branch_page_placement: ['right_page', 'footer'] } },
        /change_control\.branch_page_placement/,
      );
    });
  });

  describe('GET settings/ (the effective plugin settings)', () => {
    it('answers any signed-in user with every setting the service applies, and needs a token', async () => {
      const given = {
        enable_builtin_checks: ['has-changes'],
        required_external_checks: ['ci'],
        branch_page_placement: 'both' as const,
        protect_main: true,
        protect_main_scope: ['dcim.*'],
        enforce_merge_gate: false,
        notify_reviewers: false,
        enable_auto_merge: false,
        auto_merge_interval: 5,
        contributors_can_approve: true,
      };
      await withService(startWithChecks({ config: { change_control: given } }), async (svc) => {
        const nobody = await actor(svc, 'no-permissions');
        const res = await ok(nobody.client.get(SETTINGS));
        // Every setting as given, the two shorthands spelled out.
        assert.deepEqual(res, {
          ...given,
          required_external_checks: [{ name: 'ci', label: 'ci' }],
          branch_page_placement: ['both'],
        });
        expectStatus(await svc.anonymous.get(SETTINGS), 403);
        const schema = await ok(svc.anonymous.get('/api/schema/'));
        assert.ok(
          JSON.stringify(schema.paths).includes('/api/plugins/change-control/settings/'),
          'documented in the OpenAPI schema',
        );
      });
    });
  });

  describe('not-stale and changelog_retention_days (default 90)', () => {
    it('a branch 89 days without a sync is not stale; after 91 days it is', async () => {
      await withService(startWithChecks(), async (svc) => {
        const s = await setup(svc, { policy: { checks: ['not-stale'] } });
        svc.clock.advanceDays(89);
        await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
        assertCheck((await checksByName(svc.admin, s.cr.id))['not-stale'], { status: 'success' });
        svc.clock.advanceDays(2);
        await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
        assertCheck((await checksByName(svc.admin, s.cr.id))['not-stale'], { status: 'failure' });
      });
    });
  });

  describe('protect_main', () => {
    it('false (the default): direct writes on main are accepted', async () => {
      await withService(startWithChecks(), async (svc) => {
        await created(svc.admin.post(DEVICES, { name: 'd1' }));
        assert.equal((await ok(svc.admin.get(SETTINGS))).protect_main, false);
      });
    });

    describe('true, every object type', () => {
      let svc: TestService;
      before(async () => {
        svc = await startWithChecks({ config: { change_control: { protect_main: true } } });
      });
      after(async () => svc.close());

      it('refuses creates, updates and deletes on main with 400 and the exact detail of contract 3.3; nothing is written', async () => {
        const writer = await actor(svc, 'writer', [
          { object_types: ['dcim.device', 'dcim.site', 'ipam.prefix'], actions: ['view', 'add', 'change', 'delete'] },
        ]);
        const create = await writer.client.post(DEVICES, { name: 'direct' });
        expectStatus(create, 400);
        assert.deepEqual(create.body, { detail: PROTECT_MAIN_DETAIL });
        for (const path of [SITES, PREFIXES])
          assert.equal((await writer.client.post(path, { name: 'x' })).body.detail, PROTECT_MAIN_DETAIL, path);
        assert.equal((await ok(writer.client.get(`${DEVICES}?name=direct`))).count, 0);

        // An object on main (a superuser holds bypass_policy like every permission) cannot be edited or deleted there either.
        const dev = await created(svc.admin.post(DEVICES, { name: 'seeded' }));
        const patch = await writer.client.patch(`${DEVICES}${dev.id}/`, { status: 'offline' });
        expectStatus(patch, 400);
        assert.equal(patch.body.detail, PROTECT_MAIN_DETAIL);
        const del = await writer.client.delete(`${DEVICES}${dev.id}/`);
        expectStatus(del, 400);
        assert.equal(del.body.detail, PROTECT_MAIN_DETAIL);
        assert.equal((await ok(writer.client.get(`${DEVICES}${dev.id}/`))).name, 'seeded');
      });

      it('accepts the same writes in a branch, and the merge of an approved branch (a merge is not a direct write)', async () => {
        const s = await setup(svc, { policy: {} });
        await ok(s.inBranch.patch(`${DEVICES}${s.device.id}/`, { status: 'active' }));
        await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
        await approve(s.reviewer, s.cr.id);
        await ok(s.author.client.post(`${BRANCHES}${s.branchId}/merge/`, { commit: true }));
        assert.equal((await ok(svc.admin.get(`${DEVICES}${s.device.id}/`))).status, 'active');
      });

      it('holders of change_control.bypass_policy are exempt', async () => {
        const bypass = await actor(svc, 'bypasser', [
          { object_types: ['dcim.device'], actions: ['view', 'add', 'change', 'delete'] },
          { object_types: ['change_control.policy'], actions: ['bypass'] },
        ]);
        const dev = await created(bypass.client.post(DEVICES, { name: 'emergency' }));
        await ok(bypass.client.patch(`${DEVICES}${dev.id}/`, { status: 'offline' }));
        expectStatus(await bypass.client.delete(`${DEVICES}${dev.id}/`), 204);
      });
    });

    it('scoped to named models (app_label.model): only those are refused on main', async () => {
      await withService(
        startWithChecks({ config: { change_control: { protect_main: true, protect_main_scope: ['dcim.device'] } } }),
        async (svc) => {
          const w = await actor(svc, 'w', [{ object_types: ['dcim.device', 'dcim.site'], actions: ['add'] }]);
          const res = await w.client.post(DEVICES, { name: 'd' });
          expectStatus(res, 400);
          assert.equal(res.body.detail, PROTECT_MAIN_DETAIL);
          expectStatus(await w.client.post(SITES, { name: 'site-a' }), 201);
        },
      );
    });

    it('scoped to a whole app (app_label.*): every model of that app is refused, other apps are not', async () => {
      await withService(
        startWithChecks({ config: { change_control: { protect_main: true, protect_main_scope: ['ipam.*'] } } }),
        async (svc) => {
          const w = await actor(svc, 'w', [
            { object_types: ['dcim.device', 'ipam.prefix', 'ipam.vlan'], actions: ['add'] },
          ]);
          for (const path of [PREFIXES, '/api/ipam/vlans/']) {
            const res = await w.client.post(path, { name: 'x' });
            expectStatus(res, 400, path);
            assert.equal(res.body.detail, PROTECT_MAIN_DETAIL);
          }
          expectStatus(await w.client.post(DEVICES, { name: 'd' }), 201);
        },
      );
    });

    it('a scope entry that is not app_label.model or app_label.*, or a non-boolean protect_main, refuses the configuration', () => {
      refused(
        { change_control: { protect_main: true, protect_main_scope: ['dcim'] } },
        /change_control\.protect_main_scope/,
      );
      refused(
        { change_control: { protect_main: true, protect_main_scope: ['DCIM.Device'] } },
        /change_control\.protect_main_scope/,
      );
      refused({ change_control: { protect_main: 'yes' } }, /change_control\.protect_main/);
    });

    it('policies and other change-control objects are not source-of-truth writes: protect_main leaves them alone', async () => {
      await withService(startWithChecks({ config: { change_control: { protect_main: true } } }), async (svc) => {
        await policy(svc, { name: 'still writable' });
        await created(svc.admin.post(BRANCHES, { name: 'a-branch' }));
      });
    });
  });
});

describe('change control: protect_main_scope entries that name nothing', () => {
  it('logs a warning at start for an entry naming no source-of-truth type, and none for valid entries', async () => {
    await withService(
      startService({
        config: {
          change_control: {
            protect_main: true,
            protect_main_scope: ['dcim.device', 'ipam.*', 'dcim.gadget', 'nosuch.*'],
          },
        },
      }),
      async (svc) => {
        const warnings = svc.log.lines.filter((l) => l.includes('protect_main_scope'));
        assert.equal(warnings.length, 2, warnings.join('\n'));
        assert.ok(warnings.some((w) => w.includes('"dcim.gadget"')));
        assert.ok(warnings.some((w) => w.includes('"nosuch.*"')));
      },
    );
  });
});
