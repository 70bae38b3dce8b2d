import assert from 'node:assert/strict';
import {
  runMergeJob,
  sweepAutoMerge,
  autoMergeSweeper,
} from '../../../../server/plugins/change-control/gate/auto-merge';
import { parseConfig, ConfigError } from '../../../../server/host/core/config';
import { constraintViolation } from '../../../../server/host/db/constraint-errors';

import { Receiver } from '../../../support/receiver';
import { startService, suiteService, withService, type TestService } from '../../../support/service';
import {
  actor,
  AUTHOR,
  CHECKS,
  checkNamed,
  detail,
  expectStatus,
  grant,
  ok,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  ccDb,
} from './fixtures';
import {
  branchOf,
  eventsOf,
  gateCast,
  hookLifecycleEvents,
  insertMergeJob,
  mainDeviceNames,
  mergeBranch,
  mergeJobs,
  scenario,
  type GateCast,
} from './gate-support';
import { forSuite } from '../../../support/prepared';

describe('change control: automatic merge', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await Receiver.start();
  });
  after(async () => receiver.close());

  describe('with the default settings (enable_auto_merge true)', () => {
    const svc = suiteService({ config: { change_control: { required_external_checks: [['ci/build', 'CI build']] } } });
    const cast = forSuite(() => gateCast(svc));
    before(async () => {
      await hookLifecycleEvents(svc, receiver.url());
    });
    afterEach(() => svc.clock.set('2026-11-01T09:00:00Z'));

    async function report(crId: number, status: string): Promise<void> {
      const ci = await checkNamed(svc.admin, crId, 'ci/build');
      await ok(svc.admin.patch(`${CHECKS}${ci.id}/`, { status }), `report ${status}`);
    }

    it('Automatic merge: a request with auto_merge merges its branch, as its requester, once the last gate clears (the pipeline report), and completes', async () => {
      const s = await scenario(cast, 'auto-basic', { fields: { auto_merge: true } });
      assert.equal(s.cr.auto_merge, true);
      assert.equal(
        (await branchOf(svc, s.branch.id)).status,
        'ready',
        'approved but the check is pending: nothing merges',
      );
      assert.deepEqual(await mergeJobs(svc, s.branch.id), []);

      await report(s.cr.id, 'success');
      const b = await branchOf(svc, s.branch.id);
      assert.equal(b.status, 'merged');
      assert.equal(b.merged_by, cast.author.id, 'merged as the requester');
      assert.ok((await mainDeviceNames(svc)).includes('auto-basic-dev'));
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.status, 'completed');
      const jobs = await mergeJobs(svc, s.branch.id);
      assert.deepEqual(
        jobs.map((j) => j.state),
        ['completed'],
      );
      assert.deepEqual(
        (await eventsOf(svc, s.cr.id)).filter((e) => e === 'change_request_completed'),
        ['change_request_completed'],
      );
    });

    it('Automatic merge: the approving review that clears the last gate merges the branch', async () => {
      const s = await scenario(cast, 'auto-review', { upTo: 'needs-review', fields: { auto_merge: true } });
      await report(s.cr.id, 'success');
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      expectStatus(await review(cast.reviewer.client, s.cr.id, 'approve'), 201);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
    });

    it('Automatic merge: auto_merge false (the default) leaves a ready request for a person to merge', async () => {
      const s = await scenario(cast, 'auto-off');
      assert.equal(s.cr.auto_merge, false);
      await report(s.cr.id, 'success');
      const cr = await detail(cast.author.client, s.cr.id);
      assert.equal(cr.ready_to_merge, true);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      await sweepAutoMerge(svc.host);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      assert.deepEqual(await mergeJobs(svc, s.branch.id), []);
    });

    it('Automatic merge: switching auto_merge on for a request that is already ready merges it', async () => {
      const s = await scenario(cast, 'auto-later');
      await report(s.cr.id, 'success');
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      const updated = await ok(cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { auto_merge: true }));
      assert.equal(updated.auto_merge, true);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
    });

    it('Automatic merge: never overrides the change window; the sweep merges once the window has opened', async () => {
      const s = await scenario(cast, 'auto-window', {
        fields: { auto_merge: true, scheduled_start: '2026-11-01T22:00:00Z', scheduled_end: '2026-11-02T02:00:00Z' },
      });
      await grantOverride(svc, cast);
      await report(s.cr.id, 'success');
      assert.equal(
        (await branchOf(svc, s.branch.id)).status,
        'ready',
        'outside the window, even for a requester holding the override',
      );
      await sweepAutoMerge(svc.host);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      assert.deepEqual(await mergeJobs(svc, s.branch.id), []);

      svc.clock.set('2026-11-01T22:10:00Z');
      assert.ok((await sweepAutoMerge(svc.host)) >= 1);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
      assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
    });

    it('Automatic merge: a failing required check keeps it unmerged; a later success merges', async () => {
      const s = await scenario(cast, 'auto-failing', { fields: { auto_merge: true } });
      await report(s.cr.id, 'failure');
      await sweepAutoMerge(svc.host);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      await report(s.cr.id, 'running');
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      await report(s.cr.id, 'success');
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
    });

    it('Automatic merge: the merge gate decides again when the job runs (a job for a request that is not ready fails and merges nothing)', async () => {
      const s = await scenario(cast, 'auto-regate', { upTo: 'needs-review', fields: { auto_merge: true } });
      await runMergeJob(svc.host, await insertMergeJob(svc, s), 'test-job', svc.url);
      const [row] = await mergeJobs(svc, s.branch.id);
      assert.equal(row!.state, 'failed');
      assert.match(row!.detail, /Rule "netops" of policy "Devices" has 0 of 1 required approval/);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
    });

    it('Automatic merge: a requester who may not merge branches gets no automatic merge (auto_merge grants no merge permission)', async () => {
      const plain = await actor(svc, 'no-merge-author', AUTHOR);
      const s = await scenario({ ...cast, author: plain }, 'auto-no-permission', { fields: { auto_merge: true } });
      await report(s.cr.id, 'success');
      await sweepAutoMerge(svc.host);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      assert.deepEqual(await mergeJobs(svc, s.branch.id), [], 'nothing queued');
      // A job that exists anyway checks the requester again when it runs.
      await runMergeJob(svc.host, await insertMergeJob(svc, s), 'test-job', svc.url);
      const [row] = await mergeJobs(svc, s.branch.id);
      assert.equal(row!.state, 'failed');
      assert.match(row!.detail, /may not merge/);
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
      const cr = await detail(plain.client, s.cr.id);
      assert.equal(cr.status, 'approved');
      assert.equal(cr.ready_to_merge, true, 'still ready for someone who may merge');
      await ok(mergeBranch(cast.author.client, s.branch.id));
    });
  });

  describe('one merge job per branch', () => {
    const svc = suiteService();
    const cast = forSuite(() => gateCast(svc));

    it('Automatic merge: the database refuses a second pending, scheduled or running job for a branch; finished jobs do not count', async () => {
      const s = await scenario(cast, 'jobs-db', { upTo: 'draft' });
      for (const live of ['pending', 'scheduled', 'running'] as const) {
        await insertMergeJob(svc, s, live);
        for (const second of ['pending', 'scheduled', 'running'] as const) {
          await assert.rejects(
            insertMergeJob(svc, s, second),
            (err) => constraintViolation(err)?.kind === 'unique',
            `${second} while ${live}`,
          );
        }
        await ccDb(svc)
          .updateTable('cc_merge_jobs')
          .set({ state: 'failed' })
          .where('branch_id', '=', s.branch.id)
          .where('state', '=', live)
          .execute();
      }
      await insertMergeJob(svc, s, 'completed');
      await insertMergeJob(svc, s, 'pending');
      assert.deepEqual(
        (await mergeJobs(svc, s.branch.id)).map((j) => j.state),
        ['failed', 'failed', 'failed', 'completed', 'pending'],
      );
    });

    it('Automatic merge: while a job is scheduled for the branch, a request turning ready queues no second job; once it is finished, the sweep queues and merges', async () => {
      const s = await scenario(cast, 'jobs-behaviour', { upTo: 'needs-review', fields: { auto_merge: true } });
      await insertMergeJob(svc, s, 'scheduled');
      expectStatus(await review(cast.reviewer.client, s.cr.id, 'approve'), 201);
      assert.equal((await detail(cast.author.client, s.cr.id)).ready_to_merge, true);
      await sweepAutoMerge(svc.host);
      assert.deepEqual(
        (await mergeJobs(svc, s.branch.id)).map((j) => j.state),
        ['scheduled'],
      );
      assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');

      await ccDb(svc)
        .updateTable('cc_merge_jobs')
        .set({ state: 'failed' })
        .where('branch_id', '=', s.branch.id)
        .execute();
      await sweepAutoMerge(svc.host);
      assert.deepEqual(
        (await mergeJobs(svc, s.branch.id)).map((j) => j.state),
        ['failed', 'completed'],
      );
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
    });
  });

  describe('concurrency: parallel triggers merge the branch exactly once', () => {
    let svc: TestService;
    afterEach(async () => svc.close());

    it('Automatic merge: several concurrent approvals that each could make the request ready: exactly one merge, one completed event', async () => {
      svc = await startService();
      await hookLifecycleEvents(svc, receiver.url());
      const author = await actor(svc, 'author', [
        ...AUTHOR,
        { object_types: ['branching.branch'], actions: ['merge'] },
      ]);
      const reviewers = [];
      for (let i = 0; i < 5; i++) reviewers.push(await actor(svc, `reviewer${i}`, REVIEWER));
      await policy(svc, {
        name: 'Devices',
        object_types: ['dcim.device'],
        rules: [{ name: 'anyone', min_reviews: 1, users: reviewers.map((r) => r.id) }],
      });
      const s = await scenario({ author, reviewer: reviewers[0]!, policyId: 0 }, 'parallel-approvals', {
        upTo: 'needs-review',
        fields: { auto_merge: true },
      });

      const answers = await Promise.all(reviewers.map((r) => review(r.client, s.cr.id, 'approve')));
      assert.ok(
        answers.every((a) => a.status === 201 || a.status === 400),
        answers.map((a) => `${a.status} ${JSON.stringify(a.body)}`).join('\n'),
      );
      assert.ok(answers.some((a) => a.status === 201));

      const jobs = await mergeJobs(svc, s.branch.id);
      assert.deepEqual(
        jobs.map((j) => j.state),
        ['completed'],
        'one merge job',
      );
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
      assert.deepEqual(await mainDeviceNames(svc), ['parallel-approvals-dev']);
      const events = await eventsOf(svc, s.cr.id);
      assert.equal(events.filter((e) => e === 'change_request_completed').length, 1, events.join(', '));
      assert.equal(events.filter((e) => e === 'change_request_approved').length, 1, events.join(', '));
      assert.equal((await detail(author.client, s.cr.id)).status, 'completed');
    });

    it('Automatic merge: several concurrent check reports that each could make the request ready: exactly one merge, one completed event', async () => {
      svc = await startService({ config: { change_control: { required_external_checks: ['ci/build'] } } });
      await hookLifecycleEvents(svc, receiver.url());
      const cast = await gateCast(svc);
      const pipelines = [];
      for (let i = 0; i < 6; i++)
        pipelines.push(
          await actor(svc, `ci${i}`, [
            {
              object_types: ['change_control.mergecheck', 'change_control.changerequest'],
              actions: ['view', 'change'],
            },
          ]),
        );
      const s = await scenario(cast, 'parallel-reports', { fields: { auto_merge: true } });
      const ci = await checkNamed(svc.admin, s.cr.id, 'ci/build');

      const answers = await Promise.all(
        pipelines.map((p) => p.client.patch(`${CHECKS}${ci.id}/`, { status: 'success', summary: 'green' })),
      );
      assert.ok(
        answers.every((a) => a.status < 500),
        answers.map((a) => `${a.status} ${JSON.stringify(a.body)}`).join('\n'),
      );
      assert.ok(answers.some((a) => a.status === 200));

      assert.deepEqual(
        (await mergeJobs(svc, s.branch.id)).map((j) => j.state),
        ['completed'],
        'one merge job',
      );
      assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
      assert.deepEqual(await mainDeviceNames(svc), ['parallel-reports-dev']);
      const events = await eventsOf(svc, s.cr.id);
      assert.equal(events.filter((e) => e === 'change_request_completed').length, 1, events.join(', '));
    });

    it('Merge gate: concurrent manual merges of one ready branch: exactly one succeeds, the others are 409', async () => {
      svc = await startService();
      await hookLifecycleEvents(svc, receiver.url());
      const cast = await gateCast(svc);
      const s = await scenario(cast, 'parallel-manual');
      const answers = await Promise.all([1, 2, 3, 4].map(() => mergeBranch(cast.author.client, s.branch.id)));
      assert.deepEqual(
        answers.map((a) => a.status).sort(),
        [200, 409, 409, 409],
        answers.map((a) => JSON.stringify(a.body)).join('\n'),
      );
      assert.deepEqual(await mainDeviceNames(svc), ['parallel-manual-dev']);
      assert.equal((await eventsOf(svc, s.cr.id)).filter((e) => e === 'change_request_completed').length, 1);
    });
  });

  describe('settings', () => {
    it('Setting enable_auto_merge false: requests with auto_merge are never merged automatically, not even by the sweep', async () => {
      await withService(startService({ config: { change_control: { enable_auto_merge: false } } }), async (svc) => {
        const cast = await gateCast(svc);
        const s = await scenario(cast, 'auto-disabled', { fields: { auto_merge: true } });
        const cr = await detail(cast.author.client, s.cr.id);
        assert.equal(cr.ready_to_merge, true);
        assert.equal(cr.auto_merge, true);
        assert.equal(await sweepAutoMerge(svc.host), 0);
        assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');
        assert.deepEqual(await mergeJobs(svc, s.branch.id), []);
      });
    });

    it('Setting auto_merge_interval: minutes, an integer of at least 1; anything else refuses the start naming the key', () => {
      assert.equal(parseConfig({}).change_control.auto_merge_interval, 10);
      assert.equal(parseConfig({ change_control: { auto_merge_interval: 1 } }).change_control.auto_merge_interval, 1);
      for (const bad of [0, -5, 1.5, '10', null, true]) {
        assert.throws(
          () => parseConfig({ change_control: { auto_merge_interval: bad } }),
          (err: Error) => err instanceof ConfigError && /change_control\.auto_merge_interval/.test(err.message),
          `auto_merge_interval ${JSON.stringify(bad)}`,
        );
      }
    });

    it('Setting auto_merge_interval: the sweep runs every auto_merge_interval minutes and merges what became ready', async () => {
      const svc = await startService({ config: { change_control: { auto_merge_interval: 3 } } });
      const realSetInterval = globalThis.setInterval;
      const scheduled: Array<{ ms: number; fn: () => void }> = [];
      try {
        const cast = await gateCast(svc);
        const s = await scenario(cast, 'auto-interval', {
          fields: { auto_merge: true, scheduled_start: '2026-11-01T10:00:00Z' },
        });
        assert.equal((await branchOf(svc, s.branch.id)).status, 'ready');

        globalThis.setInterval = ((fn: () => void, ms: number) => {
          scheduled.push({ ms, fn });
          return realSetInterval(() => undefined, 1 << 30);
        }) as typeof setInterval;
        const sweeper = autoMergeSweeper(svc.host);
        sweeper.start();
        globalThis.setInterval = realSetInterval;
        assert.equal(scheduled.length, 1);
        assert.equal(scheduled[0]!.ms, 3 * 60_000);

        svc.clock.set('2026-11-01T10:03:00Z');
        scheduled[0]!.fn();
        await sweeper.stop();
        assert.equal((await branchOf(svc, s.branch.id)).status, 'merged');
        assert.equal((await detail(cast.author.client, s.cr.id)).status, 'completed');
      } finally {
        globalThis.setInterval = realSetInterval;
        await svc.close();
      }
    });
  });
});

async function grantOverride(svc: TestService, cast: GateCast): Promise<void> {
  await grant(
    svc,
    { users: [cast.author.id] },
    { object_types: ['change_control.changerequest'], actions: ['override_window'] },
  );
}
