import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webhookDeliveryWorker, type WebhookDeliveryWorker } from '../../../../server/host/events/webhook-delivery';
import { Receiver } from '../../../support/receiver';
import { openTestDatabase } from '../../../support/database';
import { startService, withService, type TestService } from '../../../support/service';
import { statementsOf } from '../../../support/quiet';

interface HookOptions {
  secret?: string;
  http_method?: string;
  http_content_type?: string;
  additional_headers?: string;
  body_template?: string;
}

interface RuleOptions {
  event_types?: string[];
  conditions?: unknown;
  enabled?: boolean;
  name?: string;
}

/** A webhook aimed at the receiver and an event rule on groups that uses it. */
async function hookUpGroups(
  svc: TestService,
  receiver: Receiver,
  hook: HookOptions = {},
  rule: RuleOptions = {},
): Promise<{ webhook: number; rule: number }> {
  const w = await svc.admin.post('/api/extras/webhooks/', {
    name: `hook-${rule.name ?? 'r'}`,
    payload_url: receiver.url(),
    ...hook,
  });
  assert.equal(w.status, 201, JSON.stringify(w.body));
  const r = await svc.admin.post('/api/extras/event-rules/', {
    name: rule.name ?? 'r',
    object_types: ['users.group'],
    event_types: rule.event_types ?? ['object_created'],
    conditions: rule.conditions ?? null,
    enabled: rule.enabled ?? true,
    action_type: 'webhook',
    action_object_id: w.body.id,
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return { webhook: w.body.id, rule: r.body.id };
}

function workerOf(svc: TestService): WebhookDeliveryWorker {
  const worker = webhookDeliveryWorker(svc.host);
  assert.ok(worker, 'the delivery worker is registered');
  return worker;
}

async function outbox(svc: TestService) {
  return svc.host.db.selectFrom('webhook_outbox').selectAll().orderBy('id').execute();
}

/** The outbox holds exactly one delivery, in `state` after `attempts` attempts. */
async function expectOneDelivery(svc: TestService, state: string, attempts: number): Promise<void> {
  assert.deepEqual(
    (await outbox(svc)).map((r) => [r.state, r.attempts]),
    [[state, attempts]],
  );
}

describe('extras: webhook delivery', () => {
  let svc: TestService;
  let receiver: Receiver;
  beforeEach(async () => {
    svc = await startService();
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await svc.close();
    await receiver.close();
  });

  it('delivers after the commit with exactly the payload shape and a correct X-Hook-Signature', async () => {
    await hookUpGroups(svc, receiver, { secret: 'topsecret' });
    const created = await svc.admin.post('/api/users/groups/', { name: 'netops' });
    assert.equal(created.status, 201);

    const [request] = await receiver.waitFor(1);
    assert.equal(request!.method, 'POST');
    assert.equal(request!.path, '/hook');
    assert.equal(request!.headers['content-type'], 'application/json');
    const payload = JSON.parse(request!.body);
    assert.deepEqual(Object.keys(payload).sort(), [
      'data',
      'event',
      'object_type',
      'request',
      'snapshots',
      'timestamp',
    ]);
    assert.deepEqual(Object.keys(payload.request).sort(), ['id', 'user']);
    assert.deepEqual(Object.keys(payload.snapshots).sort(), ['postchange', 'prechange']);
    assert.equal(payload.username, undefined);
    assert.equal(payload.request_id, undefined);
    assert.equal(payload.event, 'object_created');
    assert.equal(payload.object_type, 'users.group');
    assert.equal(payload.timestamp, '2026-11-01T09:00:00.000Z');
    assert.equal(payload.data.id, created.body.id);
    assert.equal(payload.data.name, 'netops');
    assert.equal(payload.snapshots.prechange, null);
    assert.equal(payload.snapshots.postchange.name, 'netops');
    assert.equal(payload.request.user, 'admin');

    const change = await svc.admin.get(
      `/api/core/object-changes/?changed_object_type=users.group&changed_object_id=${created.body.id}`,
    );
    assert.equal(payload.request.id, change.body.results[0].request_id);

    const expected = createHmac('sha512', 'topsecret').update(request!.body).digest('hex');
    assert.equal(request!.headers['x-hook-signature'], expected);

    await workerOf(svc).runDue();
    await expectOneDelivery(svc, 'delivered', 1);
  });

  it('sends no signature without a secret, and nothing for a refused write', async () => {
    await hookUpGroups(svc, receiver);
    await svc.admin.post('/api/users/groups/', { name: 'first' });
    const [request] = await receiver.waitFor(1);
    assert.equal(request!.headers['x-hook-signature'], undefined);

    const dup = await svc.admin.post('/api/users/groups/', { name: 'first' });
    assert.equal(dup.status, 400);
    await workerOf(svc).runDue();
    assert.equal(receiver.requests.length, 1);
    assert.equal((await outbox(svc)).length, 1);
  });

  it('retries with backoff: a receiver failing twice gets it on the third attempt', async () => {
    receiver.respond = (_req, index) => (index < 2 ? 500 : 200);
    await hookUpGroups(svc, receiver);
    await svc.admin.post('/api/users/groups/', { name: 'netops' });
    await receiver.waitFor(1);
    const worker = workerOf(svc);
    await worker.runDue();
    let [row] = await outbox(svc);
    assert.equal(row!.state, 'pending');
    assert.equal(row!.attempts, 1);
    assert.match(row!.last_error, /HTTP 500/);
    assert.equal(row!.next_attempt_at, '2026-11-01T09:00:05.000Z');

    svc.clock.advance(4000);
    await worker.runDue();
    assert.equal(receiver.requests.length, 1, 'not due yet');

    svc.clock.advance(1000);
    await worker.runDue();
    assert.equal(receiver.requests.length, 2);
    [row] = await outbox(svc);
    assert.equal(row!.attempts, 2);
    assert.equal(row!.next_attempt_at, '2026-11-01T09:00:15.000Z', 'the wait doubles');

    svc.clock.advance(10_000);
    await worker.runDue();
    assert.equal(receiver.requests.length, 3);
    [row] = await outbox(svc);
    assert.equal(row!.state, 'delivered');
    assert.equal(row!.attempts, 3);
    assert.equal(row!.last_error, '');
    assert.equal(receiver.requests[2]!.body, receiver.requests[0]!.body, 'the same payload every time');

    svc.clock.advance(3_600_000);
    await worker.runDue();
    assert.equal(receiver.requests.length, 3, 'a delivered row is never sent again');
  });

  it('carries X-Change-Control-Delivery: the same id on every retry, one per event and webhook (two rules sending one event share it), not replaced by configured headers', async () => {
    // The first delivery of the created event to /hook fails, whichever delivery is sent first.
    let failed = false;
    receiver.respond = (req) => {
      if (failed || req.path !== '/hook' || JSON.parse(req.body).event !== 'object_created') return 200;
      failed = true;
      return 500;
    };
    const { webhook } = await hookUpGroups(
      svc,
      receiver,
      { additional_headers: 'X-Change-Control-Delivery: forged' },
      { event_types: ['object_created', 'object_updated'] },
    );
    await svc.admin.post('/api/extras/event-rules/', {
      name: 'second',
      object_types: ['users.group'],
      event_types: ['object_created'],
      action_type: 'webhook',
      action_object_id: webhook,
    });
    const other = await svc.admin.post('/api/extras/webhooks/', {
      name: 'other-hook',
      payload_url: receiver.url('/other'),
    });
    await svc.admin.post('/api/extras/event-rules/', {
      name: 'third',
      object_types: ['users.group'],
      event_types: ['object_created'],
      action_type: 'webhook',
      action_object_id: other.body.id,
    });
    const group = await svc.admin.post('/api/users/groups/', { name: 'netops' });
    await svc.admin.patch(`/api/users/groups/${group.body.id}/`, { description: 'changed' });
    const worker = workerOf(svc);
    for (let i = 0; i < 4; i++) {
      await worker.runDue();
      svc.clock.advance(60_000);
    }
    const id = (r: { headers: Record<string, unknown> }) => String(r.headers['x-change-control-delivery']);
    const byHook = (path: string, event: string) =>
      receiver.requests.filter((r) => r.path === path && JSON.parse(r.body).event === event);
    const created = byHook('/hook', 'object_created');
    assert.ok(
      created.length >= 3,
      `the first delivery failed once and was retried, and two rules sent it: ${created.length}`,
    );
    assert.equal(new Set(created.map(id)).size, 1, 'one id for the event and this webhook, on every attempt');
    assert.match(id(created[0]!), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const updated = byHook('/hook', 'object_updated');
    const toOther = byHook('/other', 'object_created');
    assert.equal(updated.length, 1);
    assert.equal(toOther.length, 1);
    assert.deepEqual(
      new Set([id(created[0]!), id(updated[0]!), id(toOther[0]!)]).size,
      3,
      'another event, or another webhook, gets another id',
    );
  });

  it('gives up after the last attempt and keeps the last error', async () => {
    receiver.respond = () => 503;
    await hookUpGroups(svc, receiver);
    await svc.admin.post('/api/users/groups/', { name: 'netops' });
    await receiver.waitFor(1);
    const worker = workerOf(svc);
    for (let i = 0; i < 12; i++) {
      await worker.runDue();
      svc.clock.advance(2 * 3_600_000);
    }
    const [row] = await outbox(svc);
    assert.equal(row!.state, 'failed');
    assert.equal(row!.attempts, 10);
    assert.match(row!.last_error, /HTTP 503/);
    assert.equal(receiver.requests.length, 10);
  });

  it('renders body_template, uses the method, content type and additional headers, and signs the rendered body', async () => {
    await hookUpGroups(svc, receiver, {
      http_method: 'PUT',
      http_content_type: 'text/plain',
      additional_headers: 'X-Team: netops\nAuthorization: Bearer abc',
      body_template:
        'event={{ event }} by={{ request.user }} name={{ data.name }} before={{ snapshots.prechange }} missing={{ data.nope }}',
      secret: 'k',
    });
    await svc.admin.post('/api/users/groups/', { name: 'lab' });
    const [request] = await receiver.waitFor(1);
    assert.equal(request!.method, 'PUT');
    assert.equal(request!.body, 'event=object_created by=admin name=lab before= missing=');
    assert.equal(request!.headers['content-type'], 'text/plain');
    assert.equal(request!.headers['x-team'], 'netops');
    assert.equal(request!.headers.authorization, 'Bearer abc');
    assert.equal(request!.headers['x-hook-signature'], createHmac('sha512', 'k').update(request!.body).digest('hex'));
  });

  it("Webhook templates escape interpolated values for the body's syntax: a value cannot add keys to a JSON body (the rendered body has exactly the template's keys); a form body is percent-encoded", async () => {
    await hookUpGroups(svc, receiver, {
      body_template:
        '{"name": "{{ data.name }}", "id": {{ data.id }}, "group": {{ data }}, "missing": {{ data.nope }}}',
      secret: 'k',
    });
    const hostile = 'x", "admin": true, "y": "\\';
    await svc.admin.post('/api/users/groups/', { name: hostile });
    const [request] = await receiver.waitFor(1);
    const body = JSON.parse(request!.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['name', 'id', 'group', 'missing']);
    assert.equal(body.name, hostile);
    assert.equal(typeof body.id, 'number');
    assert.equal((body.group as { name: string }).name, hostile);
    assert.equal(body.missing, null);
    assert.equal(request!.headers['x-hook-signature'], createHmac('sha512', 'k').update(request!.body).digest('hex'));
    receiver.requests.length = 0;
    await hookUpGroups(
      svc,
      receiver,
      { http_content_type: 'application/x-www-form-urlencoded', body_template: 'name={{ data.name }}&admin=no' },
      { name: 'form rule' },
    );
    await svc.admin.post('/api/users/groups/', { name: 'a&admin=yes' });
    const form = (await receiver.waitFor(2)).find(
      (r) => r.headers['content-type'] === 'application/x-www-form-urlencoded',
    );
    assert.deepEqual(
      [...new URLSearchParams(form!.body).entries()],
      [
        ['name', 'a&admin=yes'],
        ['admin', 'no'],
      ],
    );
  });

  it("delivers only events that satisfy the rule's conditions, and nothing for a disabled rule", async () => {
    await hookUpGroups(
      svc,
      receiver,
      {},
      { name: 'lab only', conditions: { attr: 'name', op: 'regex', value: '^lab-' } },
    );
    await hookUpGroups(
      svc,
      receiver,
      {},
      {
        name: 'description moved',
        event_types: ['object_updated'],
        conditions: {
          and: [
            { attr: 'description', op: 'changed' },
            { attr: 'snapshots.prechange.description', value: '' },
          ],
        },
      },
    );
    await hookUpGroups(svc, receiver, {}, { name: 'off', enabled: false });

    const prod = await svc.admin.post('/api/users/groups/', { name: 'prod-1' });
    await svc.admin.post('/api/users/groups/', { name: 'lab-1' });
    await svc.admin.patch(`/api/users/groups/${prod.body.id}/`, { name: 'prod-one' });
    await svc.admin.patch(`/api/users/groups/${prod.body.id}/`, { description: 'first words' });
    await svc.admin.patch(`/api/users/groups/${prod.body.id}/`, { description: 'second words' });
    await receiver.waitFor(2);
    await workerOf(svc).runDue();

    const received = receiver.requests.map(
      (r) => JSON.parse(r.body) as { event: string; data: { name: string; description: string } },
    );
    assert.deepEqual(received.map((p) => `${p.event} ${p.data.name} ${p.data.description}`).sort(), [
      'object_created lab-1 ',
      'object_updated prod-one first words',
    ]);
    assert.equal((await outbox(svc)).length, 2);
  });

  it('sends each delivery once even when woken many times while it is in flight', async () => {
    receiver.delayMs = 300;
    await hookUpGroups(svc, receiver);
    const worker = workerOf(svc);
    await svc.admin.post('/api/users/groups/', { name: 'a' });
    await svc.admin.post('/api/users/groups/', { name: 'b' });
    await Promise.all([worker.wake(), worker.wake(), worker.wake(), svc.host.events.onQueued(), worker.runDue()]);
    await worker.runDue();
    assert.equal(receiver.requests.length, 2);
    const names = receiver.requests.map((r) => (JSON.parse(r.body) as { data: { name: string } }).data.name).sort();
    assert.deepEqual(names, ['a', 'b']);
    assert.deepEqual(
      (await outbox(svc)).map((r) => r.attempts),
      [1, 1],
    );
  });

  it('polls the outbox on the host clock: a manual clock that stands still sends nothing, moved by the poll interval it looks once', async () => {
    const looks = (seen: string[]) => seen.filter((q) => /from "webhook_outbox"/.test(q)).length;
    const poll = svc.clock.timerInstants().filter((t) => t.getTime() === svc.clock.now().getTime() + 1000);
    assert.equal(poll.length, 1, 'one timer of the host clock, a second ahead');
    assert.equal(looks(await statementsOf(svc, async () => undefined)), 0);
    assert.equal(looks(await statementsOf(svc, async () => svc.clock.advance(1000))), 1);
  });
});

describe('extras: webhook delivery across a restart', () => {
  let dir: string;
  let receiver: Receiver;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cc-delivery-'));
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers after a restart what was still pending when the service stopped', async () => {
    const db = join(dir, 'service.sqlite3');
    receiver.respond = () => 503;
    await withService(startService({ db }), async (first) => {
      await hookUpGroups(first, receiver, { secret: 'restart' });
      await first.admin.post('/api/users/groups/', { name: 'netops' });
      await receiver.waitFor(1);
      await workerOf(first).runDue();
    });

    receiver.respond = () => 200;
    await withService(startService({ db, clockStart: '2026-11-01T09:10:00Z' }), async (second) => {
      const [, request] = await receiver.waitFor(2);
      assert.equal(request!.body, receiver.requests[0]!.body);
      assert.equal(JSON.parse(request!.body).data.name, 'netops');
      assert.equal(
        request!.headers['x-hook-signature'],
        createHmac('sha512', 'restart').update(request!.body).digest('hex'),
      );
      await workerOf(second).runDue();
      await expectOneDelivery(second, 'delivered', 2);
    });
  });

  it('lets a delivery in flight finish and records it before the service stops', async () => {
    const db = join(dir, 'service.sqlite3');
    receiver.delayMs = 300;
    await withService(startService({ db }), async (svc) => {
      await hookUpGroups(svc, receiver);
      await svc.admin.post('/api/users/groups/', { name: 'netops' });
      await receiver.waitFor(1);
    });
    const reopened = await openTestDatabase({}, db);
    try {
      const rows = await reopened.db.selectFrom('webhook_outbox').selectAll().execute();
      assert.deepEqual(
        rows.map((r) => [r.state, r.attempts]),
        [['delivered', 1]],
      );
    } finally {
      await reopened.close();
    }
  });

  it('leaves a delivery pending, not lost, when the receiver cannot be reached at all', async () => {
    const db = join(dir, 'service.sqlite3');
    const port = receiver.port;
    await receiver.close();
    await withService(startService({ db }), async (first) => {
      await hookUpGroups(first, { url: () => `http://127.0.0.1:${port}/hook` } as Receiver);
      await first.admin.post('/api/users/groups/', { name: 'netops' });
      await workerOf(first).runDue();
      const [row] = await outbox(first);
      assert.equal(row!.state, 'pending');
      assert.equal(row!.attempts, 1);
      assert.match(row!.last_error, /ECONNREFUSED/);
    });
    receiver = await Receiver.start(() => 200, port);
    await withService(startService({ db, clockStart: '2026-11-01T10:00:00Z' }), async (second) => {
      await receiver.waitFor(1);
      await workerOf(second).runDue();
      assert.equal((await outbox(second))[0]!.state, 'delivered');
    });
  });
});
