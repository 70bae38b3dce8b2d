import assert from 'node:assert/strict';
import { runtime } from '../../../../server/plugins/change-control/runtime';
import { CheckRegistry } from '../../../../server/plugins/change-control/checks/registry';
import { withService, type TestService } from '../../../support/service';
import { unchecked } from '../../../support/unchecked';
import { CHECKS, detail, expectStatus, ok, REQUESTS } from './fixtures';
import {
  approve,
  assertCheck,
  checkChangelog,
  checksByName,
  CheckResult,
  CheckScope,
  counting,
  RUN_CHECKS,
  setup,
  startWithChecks,
} from './checks-support';
import { tempDirForEachTest } from '../../../support/prepared';

/**
 * Check kinds, registering checks in process (the registry, CheckResult, scope, required,
 * registration only at start, renaming), and a registered check that raises.
 */
describe('change control checks: registering checks in process', () => {
  describe('CheckResult constructors', () => {
    it("CheckResult.passed(summary='') gives success, with an empty summary by default", () => {
      assert.equal(CheckResult.passed().status, 'success');
      assert.equal(CheckResult.passed().summary, '');
      assert.equal(CheckResult.passed('fine').summary, 'fine');
    });

    it('CheckResult.failed(summary) gives failure', () => {
      const r = CheckResult.failed('2 problems');
      assert.equal(r.status, 'failure');
      assert.equal(r.summary, '2 problems');
    });

    it("CheckResult.skipped(summary='') gives skipped", () => {
      assert.equal(CheckResult.skipped().status, 'skipped');
      assert.equal(CheckResult.skipped().summary, '');
      assert.equal(CheckResult.skipped('not this time').summary, 'not this time');
    });

    it('new CheckResult(status, summary, details_url) gives the status as given, for every status', () => {
      for (const status of ['pending', 'running', 'success', 'failure', 'error', 'skipped'] as const) {
        const r = new CheckResult(status, `s-${status}`, `https://ci.example.com/${status}`);
        assert.deepEqual(
          [r.status, r.summary, r.detailsUrl],
          [status, `s-${status}`, `https://ci.example.com/${status}`],
        );
      }
      assert.throws(() => new CheckResult(unchecked('passed')), /unknown status "passed"/);
    });
  });

  describe('the registry', () => {
    it('registration takes a stable name, a label, the function, required (default true) and scope (default ALWAYS)', () => {
      const registry = new CheckRegistry();
      registry.registerCheck({ name: 'a', label: 'Check A', fn: () => CheckResult.passed() });
      registry.registerCheck({ name: 'b', fn: () => CheckResult.passed(), required: false, scope: CheckScope.POLICY });
      assert.deepEqual(
        registry.all().map((c) => [c.name, c.label, c.required, c.scope]),
        [
          ['a', 'Check A', true, 'always'],
          ['b', 'b', false, 'policy'],
        ],
      );
    });

    it('refuses a second check with the same name, a bad name, a missing function and an unknown scope', () => {
      const registry = new CheckRegistry();
      registry.registerCheck({ name: 'a', fn: () => CheckResult.passed() });
      assert.throws(() => registry.registerCheck({ name: 'a', fn: () => CheckResult.passed() }), /already registered/);
      assert.throws(() => registry.registerCheck({ name: '', fn: () => CheckResult.passed() }), /name must be/);
      assert.throws(() => registry.registerCheck({ name: 'b', fn: unchecked(undefined) }), /fn must be a function/);
      assert.throws(
        () => registry.registerCheck({ name: 'c', fn: () => CheckResult.passed(), scope: unchecked('sometimes') }),
        /unknown scope/,
      );
    });

    it('registration happens once at start: registering after the service has started throws', async () => {
      await withService(
        startWithChecks({ ready: (r) => r.registerCheck({ name: 'early', fn: () => CheckResult.passed() }) }),
        async (svc) => {
          const registry = runtime(svc.host).registry;
          assert.equal(registry.isSealed, true);
          assert.throws(
            () => registry.registerCheck({ name: 'late', fn: () => CheckResult.passed() }),
            /only be registered at start/,
          );
          assert.equal(registry.get('late'), undefined);
          const s = await setup(svc);
          assert.deepEqual(Object.keys(await checksByName(svc.admin, s.cr.id)), ['early']);
        },
      );
    });
  });

  describe('check kinds', () => {
    let svc: TestService;
    const always = counting(() => CheckResult.passed('always ran'));
    const optIn = counting(() => CheckResult.failed('opt-in found a problem'));
    before(async () => {
      svc = await startWithChecks({
        ready: (r) => {
          r.registerCheck({ name: 'org/always', label: 'Always', fn: always.fn });
          r.registerCheck({ name: 'org/opt-in', label: 'Opt-in', fn: optIn.fn, scope: CheckScope.POLICY });
        },
      });
    });
    after(async () => svc.close());
    beforeEach(() => {
      always.reset();
      optIn.reset();
    });

    it('Check kinds row "Registered, scope ALWAYS (default)": applies to every change request, with no policy at all', async () => {
      const s = await setup(svc);
      assert.equal(always.calls, 1);
      const checks = await checksByName(svc.admin, s.cr.id);
      assert.deepEqual(Object.keys(checks), ['org/always']);
      assertCheck(checks['org/always'], { label: 'Always', status: 'success', summary: 'always ran', required: true });
    });

    it('Check kinds row "Registered, scope POLICY": opt-in, runs only on requests carrying a policy that names it', async () => {
      const without = await setup(svc, { policy: {} });
      assert.equal(optIn.calls, 0, 'not named by any policy: never runs');
      assert.equal((await checksByName(svc.admin, without.cr.id))['org/opt-in'], undefined);

      const named = await setup(svc, { policy: { checks: ['org/opt-in'] } });
      assert.equal(optIn.calls, 1);
      assert.equal(optIn.views[0]!.id, named.cr.id);
      const checks = await checksByName(svc.admin, named.cr.id);
      assertCheck(checks['org/opt-in'], {
        label: 'Opt-in',
        status: 'failure',
        summary: 'opt-in found a problem',
        required: true,
        blocks_merge: true,
      });
    });

    it('Check kinds row "Reported (external)" from a policy\'s checks: created pending, blocks until reported', async () => {
      const s = await setup(svc, { policy: { checks: ['ext/security'] } });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      await approve(s.reviewer, s.cr.id);
      const checks = await checksByName(svc.admin, s.cr.id);
      assertCheck(checks['ext/security'], {
        status: 'pending',
        required: true,
        blocks_merge: true,
        label: 'ext/security',
      });
      const blocked = await detail(s.author.client, s.cr.id);
      assert.equal(blocked.status, 'approved');
      assert.equal(blocked.ready_to_merge, false);
      assert.match(blocked.merge_blocked_reason, /Required check "ext\/security" is pending/);
      await ok(s.pipeline.client.patch(`${CHECKS}${checks['ext/security'].id}/`, { status: 'success' }));
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
    });

    it('A check function receives a read-only view of the request: its fields, branch, changes and reviews', async () => {
      const s = await setup(svc, { policy: {}, request: { ref: 'CHG-77' } });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      await approve(s.reviewer, s.cr.id);
      always.reset();
      await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
      const view = always.views.at(-1)!;
      assert.equal(view.id, s.cr.id);
      assert.equal(view.ref, 'CHG-77');
      assert.equal(view.status, 'approved');
      assert.equal(view.requester, s.author.id);
      assert.equal(view.branch?.id, s.branchId);
      assert.deepEqual(
        view.changes.map((c) => [c.object_type, c.action, c.modified?.name]),
        [['dcim.device', 'create', s.device.name]],
      );
      assert.deepEqual(
        view.reviews.map((r) => [r.reviewer, r.decision]),
        [[s.reviewer.id, 'approve']],
      );
      assert.ok(Object.isFrozen(view) && Object.isFrozen(view.changes[0]), 'the view is frozen');
    });
  });

  describe('a check answering with the full constructor', () => {
    /** The check row a request gets when the registered check `name` answers `result`. */
    async function storedRow(name: string, label: string, result: CheckResult): Promise<any> {
      return withService(
        startWithChecks({ ready: (r) => r.registerCheck({ name, label, fn: () => result }) }),
        async (svc) => {
          const s = await setup(svc);
          return (await checksByName(svc.admin, s.cr.id))[name];
        },
      );
    }

    it('new CheckResult(status, summary, details_url) is stored as given, details_url included', async () => {
      const row = await storedRow(
        'report/linked',
        'Linked report',
        new CheckResult('failure', '4 findings', 'https://reports.example.com/r/4'),
      );
      assertCheck(row, { status: 'failure', summary: '4 findings', blocks_merge: true });
      assert.equal(row.details_url, 'https://reports.example.com/r/4');
    });

    it('a details_url that is not an absolute http(s) URL is not stored: the result keeps its status and summary, without the link', async () => {
      const row = await storedRow(
        'report/odd',
        'Odd link',
        new CheckResult('failure', 'see link', 'javascript:alert(1)'),
      );
      assertCheck(row, { status: 'failure', summary: 'see link', blocks_merge: true });
      assert.equal(row.details_url, '');
    });
  });

  describe('a check reading request fields', () => {
    let svc: TestService;
    before(async () => {
      svc = await startWithChecks({
        ready: (r) =>
          r.registerCheck({
            name: 'window/announced',
            label: 'Change window announced',
            fn: (cr) =>
              cr.scheduled_start === null
                ? CheckResult.skipped('No change window.')
                : CheckResult.passed(`Window starts ${cr.scheduled_start}.`),
          }),
      });
    });
    after(async () => svc.close());

    it('A check function may read request fields such as scheduled_start and return skipped when it does not apply', async () => {
      const plain = await setup(svc, { policy: {} });
      assertCheck((await checksByName(svc.admin, plain.cr.id))['window/announced'], {
        status: 'skipped',
        summary: 'No change window.',
        blocks_merge: false,
      });
      await ok(plain.author.client.post(`${REQUESTS}${plain.cr.id}/submit/`, {}));
      await approve(plain.reviewer, plain.cr.id);
      assert.equal((await detail(plain.author.client, plain.cr.id)).ready_to_merge, true, 'skipped clears the gate');

      const windowed = await setup(svc, {
        request: { scheduled_start: '2026-11-02T22:00:00Z', scheduled_end: '2026-11-03T02:00:00Z' },
      });
      assertCheck((await checksByName(svc.admin, windowed.cr.id))['window/announced'], {
        status: 'success',
        summary: 'Window starts 2026-11-02T22:00:00.000Z.',
      });
    });
  });

  describe('a registered check that raises', () => {
    let svc: TestService;
    let explode = true;
    before(async () => {
      svc = await startWithChecks({
        ready: (r) => {
          r.registerCheck({
            name: 'fragile',
            label: 'Fragile',
            fn: () => {
              if (explode) throw new Error('inventory service unreachable');
              return CheckResult.passed('reachable');
            },
          });
          r.registerCheck({
            name: 'rejecting',
            label: 'Rejecting',
            fn: async () => Promise.reject(new Error('async failure')),
            required: false,
          });
          r.registerCheck({ name: 'confused', label: 'Confused', fn: () => unchecked('yes'), required: false });
          r.registerCheck({
            name: 'thrower',
            label: 'Thrower',
            fn: () => {
              throw 'plain text';
            },
            required: false,
          });
        },
      });
    });
    after(async () => svc.close());

    it('is recorded as error with the exception text as its summary, blocks the merge, and never breaks the page (detail 200)', async () => {
      explode = true;
      const s = await setup(svc, { policy: {} });
      await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
      await approve(s.reviewer, s.cr.id);
      const res = await s.author.client.get(`${REQUESTS}${s.cr.id}/`);
      expectStatus(res, 200);
      assert.equal(res.body.status, 'approved');
      assert.equal(res.body.ready_to_merge, false);
      assert.match(res.body.merge_blocked_reason, /Required check "Fragile" errored \(inventory service unreachable\)/);
      const checks = await checksByName(svc.admin, s.cr.id);
      assertCheck(checks['fragile'], {
        status: 'error',
        summary: 'inventory service unreachable',
        required: true,
        blocks_merge: true,
      });
      expectStatus(await svc.admin.get(`${CHECKS}?change_request_id=${s.cr.id}`), 200);
      const refused = await s.author.client.post(`/api/plugins/branching/branches/${s.branchId}/merge/`, {
        commit: true,
      });
      expectStatus(refused, 409);

      explode = false;
      await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
      assertCheck((await checksByName(svc.admin, s.cr.id))['fragile'], {
        status: 'success',
        summary: 'reachable',
        blocks_merge: false,
      });
      assert.equal((await detail(s.author.client, s.cr.id)).ready_to_merge, true);
    });

    it('a rejected promise, a thrown non-Error and an answer that is not a CheckResult are errors too', async () => {
      explode = false;
      const s = await setup(svc);
      const checks = await checksByName(svc.admin, s.cr.id);
      assertCheck(checks['rejecting'], { status: 'error', summary: 'async failure' });
      assertCheck(checks['thrower'], { status: 'error', summary: 'plain text' });
      assertCheck(checks['confused'], { status: 'error', summary: /instead of a CheckResult/ });
    });
  });

  describe('renaming a registered check', () => {
    const dir = tempDirForEachTest('cc-rename-');

    it('creates a new check and deletes the old one with its results; the label may change freely', async () => {
      const db = dir('db.sqlite3');
      const { s, old } = await withService(
        startWithChecks({
          db,
          ready: (r) => r.registerCheck({ name: 'org/lint', label: 'Lint', fn: () => CheckResult.failed('1 warning') }),
        }),
        async (svc) => {
          const s = await setup(svc);
          const old = (await checksByName(svc.admin, s.cr.id))['org/lint'];
          assertCheck(old, { status: 'failure', label: 'Lint' });
          return { s, old };
        },
      );

      // Same name, new label: the same check, its result and completed time kept.
      await withService(
        startWithChecks({
          db,
          ready: (r) =>
            r.registerCheck({ name: 'org/lint', label: 'Style lint', fn: () => CheckResult.failed('1 warning') }),
        }),
        async (svc) => {
          await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
          const relabelled = (await checksByName(svc.admin, s.cr.id))['org/lint'];
          assert.equal(relabelled.id, old.id);
          assertCheck(relabelled, { label: 'Style lint', status: 'failure', summary: '1 warning' });
          assert.equal(relabelled.completed, old.completed);
        },
      );

      // A new name: a new check; the old one is deleted.
      await withService(
        startWithChecks({
          db,
          ready: (r) =>
            r.registerCheck({ name: 'org/style', label: 'Style lint', fn: () => CheckResult.passed('clean') }),
        }),
        async (svc) => {
          await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
          const checks = await checksByName(svc.admin, s.cr.id);
          assert.deepEqual(Object.keys(checks), ['org/style']);
          assert.notEqual(checks['org/style'].id, old.id);
          assertCheck(checks['org/style'], { status: 'success', summary: 'clean' });
          expectStatus(await svc.admin.get(`${CHECKS}${old.id}/`), 404);
          const oldLog = await checkChangelog(svc.admin, old.id);
          assert.equal(oldLog.at(-1).action, 'delete');
          const newLog = await checkChangelog(svc.admin, checks['org/style'].id);
          assert.deepEqual(
            newLog.map((e) => e.action),
            ['create'],
            "the new check starts without the old one's history",
          );
        },
      );
    });

    it('a check a policy names that is no longer registered becomes a reported check: pending, never reported, blocking', async () => {
      const db = dir('db.sqlite3');
      const s = await withService(
        startWithChecks({
          db,
          ready: (r) =>
            r.registerCheck({
              name: 'org/scan',
              label: 'Scan',
              fn: () => CheckResult.passed('computed'),
              scope: CheckScope.POLICY,
            }),
        }),
        async (svc) => {
          const s = await setup(svc, { policy: { checks: ['org/scan'] } });
          assertCheck((await checksByName(svc.admin, s.cr.id))['org/scan'], { status: 'success', summary: 'computed' });
          return s;
        },
      );

      await withService(startWithChecks({ db }), async (svc) => {
        await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
        const now = (await checksByName(svc.admin, s.cr.id))['org/scan'];
        assertCheck(now, { status: 'pending', summary: '', required: true, blocks_merge: true });
        assert.equal(now.completed, null);
        // From now on it is reported: a refresh never overwrites what a pipeline reports.
        await ok(svc.admin.patch(`${CHECKS}${now.id}/`, { status: 'success', summary: 'reported' }));
        await ok(svc.admin.post(RUN_CHECKS(s.cr.id), {}));
        assertCheck((await checksByName(svc.admin, s.cr.id))['org/scan'], { status: 'success', summary: 'reported' });
      });
    });
  });
});
