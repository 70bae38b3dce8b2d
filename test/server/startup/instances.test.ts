import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newTestSchemaUrl, onPostgres } from '../../support/database';
import { Receiver } from '../../support/receiver';
import { ADMIN_TOKEN, ApiClient, type TestService } from '../../support/service';
import { SseStream } from '../../support/sse';
import {
  actor,
  AUTHOR,
  BRANCHES,
  CHECKS,
  created,
  DEVICES,
  detail,
  ok,
  REQUESTS,
  REVIEWER,
  REVIEWS,
  RULES,
  POLICIES,
} from '../plugins/change-control/fixtures';
import { startAndWait, type Started } from './run-service';

async function eventually(what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Three instances of the service on one PostgreSQL database, driven at once, one of them killed
 * (SIGKILL) mid-run. Runs when the service tests run on PostgreSQL (TEST_DATABASE_URL).
 */
if (onPostgres) {
  describe('several instances on one PostgreSQL database', function () {
    this.timeout(120_000);
    let dir: string;
    let instances: Started[] = [];
    let receiver: Receiver;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'cc-instances-'));
      const config = join(dir, 'config.json');
      writeFileSync(
        config,
        JSON.stringify({ change_control: { enable_builtin_checks: false, required_external_checks: ['ci'] } }),
      );
      const url = await newTestSchemaUrl();
      receiver = await Receiver.start();
      // All three start at the same moment: the migrations run once.
      instances = await Promise.all(
        [0, 1, 2].map(() =>
          startAndWait(['--port', '0', '--db', url, '--config', config], { CHANGE_CONTROL_ADMIN_TOKEN: ADMIN_TOKEN }),
        ),
      );
    });

    after(async () => {
      for (const i of instances) if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill('SIGTERM');
      await Promise.all(
        instances.map(
          (i) =>
            new Promise((done) =>
              i.child.exitCode !== null || i.child.signalCode !== null ? done(null) : i.child.once('exit', done),
            ),
        ),
      );
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Test fixtures speak to a service through its admin and token clients: here, one instance. */
    const via = (i: number): TestService =>
      ({
        admin: new ApiClient(instances[i]!.url, ADMIN_TOKEN),
        as: (key: string) => new ApiClient(instances[i]!.url, key),
      }) as unknown as TestService;
    const on = (i: number, key: string): ApiClient => new ApiClient(instances[i]!.url, key);

    it('behave as one service: one review each, checks seen at once, a keyed write written once, each automatic merge and each webhook delivery done once, events on every stream; a killed instance loses nothing', async () => {
      const [a, b, c] = [via(0), via(1), via(2)];
      const author = await actor(a, 'author', [
        ...AUTHOR,
        { object_types: ['branching.branch'], actions: ['merge'] },
        { object_types: ['change_control.mergecheck'], actions: ['add', 'change'] },
      ]);
      const r1 = await actor(b, 'r1', REVIEWER);
      const r2 = await actor(c, 'r2', REVIEWER);
      const p = await created(a.admin.post(POLICIES, { name: 'two reviews', object_types: ['dcim.device'] }));
      await created(b.admin.post(RULES, { policy: p.id, name: 'both', min_reviews: 2, users: [r1.id, r2.id] }));
      const hook = await created(c.admin.post('/api/extras/webhooks/', { name: 'hook', payload_url: receiver.url() }));
      await created(
        a.admin.post('/api/extras/event-rules/', {
          name: 'devices',
          object_types: ['dcim.device'],
          event_types: ['object_created'],
          action_type: 'webhook',
          action_object_id: hook.id,
        }),
      );

      // Change requests asking for automatic merge, each with a device in its branch.
      const requests: Array<{ id: number; branch: number }> = [];
      for (let n = 0; n < 3; n++) {
        const client = on(n, author.key);
        const branch = await created(client.post(BRANCHES, { name: `work-${n}` }));
        await created(
          client.inBranch(branch.schema_id).post(DEVICES, { name: `branch-device-${n}`, status: 'planned' }),
        );
        const cr = await created(client.post(REQUESTS, { branch: branch.id, title: `change ${n}`, auto_merge: true }));
        await ok(client.post(`${REQUESTS}${cr.id}/submit/`, {}));
        requests.push({ id: cr.id, branch: branch.id });
      }

      // An event written on one instance reaches a stream opened on another.
      const stream = await SseStream.open(`${instances[1]!.url}/api/plugins/change-control/stream/`, { token: r1.key });

      // Both reviewers approve every request, each twice at once through two instances: one review each.
      const attempts = requests.flatMap((cr, n) =>
        [r1, r2].flatMap((r) =>
          [on(n, r.key), on((n + 1) % 3, r.key)].map((client) =>
            client.post(REVIEWS, { change_request: cr.id, decision: 'approve', comment: '' }),
          ),
        ),
      );
      const answers = await Promise.all(attempts);
      assert.equal(
        answers.filter((x) => x.status === 201).length,
        requests.length * 2,
        JSON.stringify(answers.map((x) => x.status)),
      );
      assert.ok(
        answers.every((x) => x.status === 201 || x.status === 400),
        JSON.stringify(answers.map((x) => x.body)),
      );
      for (const cr of requests) {
        const reviews = await ok(a.admin.get(`${REVIEWS}?change_request_id=${cr.id}&limit=100`));
        assert.deepEqual(
          reviews.results.map((x: { reviewer: { id: number } }) => x.reviewer.id).sort(),
          [r1.id, r2.id].sort(),
        );
      }
      await stream.nextUntil((e) => e.event === 'review_submitted');
      stream.close();

      // The pipeline reports to one instance; another sees it at once, and the merges happen, once each, whichever instance ran them.
      for (const [n, cr] of requests.entries()) {
        const check = (await ok(on(n, author.key).get(`${CHECKS}?change_request_id=${cr.id}&name=ci`))).results[0];
        await ok(on(n, author.key).patch(`${CHECKS}${check.id}/`, { status: 'success' }));
        assert.equal((await ok(on((n + 1) % 3, author.key).get(`${CHECKS}${check.id}/`))).status, 'success');
      }
      for (const cr of requests)
        await eventually('merged', async () => (await detail(on(2, author.key), cr.id)).status === 'completed', 20_000);
      for (const cr of requests) {
        const branch = await ok(a.admin.get(`${BRANCHES}${cr.branch}/`));
        assert.equal(branch.status, 'merged');
      }
      const merged = await ok(a.admin.get(`${DEVICES}?limit=1000`));
      for (let n = 0; n < 3; n++)
        assert.equal(merged.results.filter((d: { name: string }) => d.name === `branch-device-${n}`).length, 1);

      // The same write with the same Idempotency-Key sent to all three at once: written once, the same answer to each.
      const keyed = await Promise.all(
        [0, 1, 2].map((n) =>
          on(n, author.key).post(
            DEVICES,
            { name: 'keyed', status: 'active' },
            { headers: { 'Idempotency-Key': 'one-write' } },
          ),
        ),
      );
      assert.deepEqual(
        keyed.map((x) => x.status),
        [201, 201, 201],
        JSON.stringify(keyed.map((x) => x.body)),
      );
      assert.equal(new Set(keyed.map((x) => x.body.id)).size, 1);
      assert.equal((await ok(a.admin.get(`${DEVICES}?name=keyed`))).count, 1);

      // A burst of writes through all three; the third instance is killed in the middle of it.
      const names = Array.from({ length: 30 }, (_, k) => `burst-${k}`);
      const burst = names.map((name, k) =>
        on(k % 3, author.key)
          .post(DEVICES, { name, status: 'active' })
          .catch(() => ({ status: 0, body: null })),
      );
      setTimeout(() => instances[2]!.child.kill('SIGKILL'), 50);
      const outcomes = await Promise.all(burst);
      const kept = names.filter((_, k) => outcomes[k]!.status === 201);
      const onMain = (await ok(a.admin.get(`${DEVICES}?limit=1000`))).results.map((d: { name: string }) => d.name);
      // Every write answered 201 is there exactly once; a write cut off by the kill is there at most once.
      for (const name of names) assert.ok(onMain.filter((n: string) => n === name).length <= 1, name);
      for (const name of kept) assert.equal(onMain.filter((n: string) => n === name).length, 1, name);

      // Every device created has its webhook delivered, by the surviving instances if need be.
      const expected = onMain.length;
      await eventually(
        'every delivery',
        async () => new Set(receiver.requests.map((r) => JSON.parse(r.body).data?.name)).size >= expected,
        30_000,
      );
      const delivered = receiver.requests.map((r) => JSON.parse(r.body).data?.name as string);
      assert.equal(new Set(delivered).size, expected);
      // Nothing delivered twice but what the killed instance may have been sending when it died.
      assert.ok(delivered.length - expected <= 8, `${delivered.length - expected} deliveries repeated`);
    });
  });
}
