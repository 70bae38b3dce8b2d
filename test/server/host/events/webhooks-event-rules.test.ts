import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import { actor } from '../users/fixtures';

const HOOKS = '/api/extras/webhooks/';
const RULES = '/api/extras/event-rules/';

describe('extras: webhooks and event rules', () => {
  const svc = eachTestService();

  async function webhook(name = 'ci'): Promise<number> {
    const res = await svc.admin.post(HOOKS, { name, payload_url: 'https://ci.example.com/hook' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as number;
  }

  it('creates a webhook with the defaults, then reads, lists, filters, updates and deletes it', async () => {
    const created = await svc.admin.post(HOOKS, {
      name: 'ci',
      payload_url: 'https://ci.example.com/hook',
      secret: 's3cret',
    });
    assert.equal(created.status, 201);
    assert.deepEqual(
      Object.keys(created.body).sort(),
      [
        'additional_headers',
        'body_template',
        'created',
        'display',
        'http_content_type',
        'http_method',
        'id',
        'last_updated',
        'name',
        'payload_url',
        'secret',
        'ssl_verification',
        'url',
      ].sort(),
    );
    assert.equal(created.body.http_method, 'POST');
    assert.equal(created.body.http_content_type, 'application/json');
    assert.equal(created.body.ssl_verification, true);
    assert.equal(created.body.secret, 's3cret');
    assert.equal(created.body.display, 'ci');
    const id = created.body.id;

    await svc.admin.post(HOOKS, { name: 'chat', payload_url: 'http://chat.example.com/', http_method: 'PUT' });
    const puts = await svc.admin.get(`${HOOKS}?http_method=PUT`);
    assert.deepEqual(
      puts.body.results.map((w: { name: string }) => w.name),
      ['chat'],
    );
    assert.equal((await svc.admin.get(`${HOOKS}?http_method=TRACE`)).status, 400);

    const patched = await svc.admin.patch(`${HOOKS}${id}/`, {
      additional_headers: 'X-Team: netops\nX-Env: lab',
      ssl_verification: false,
      body_template: '{"e": "{{ event }}"}',
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.additional_headers, 'X-Team: netops\nX-Env: lab');
    assert.equal(patched.body.ssl_verification, false);
    assert.equal((await svc.admin.get(`${HOOKS}${id}/`)).body.body_template, '{"e": "{{ event }}"}');

    const changes = await svc.admin.get(
      `/api/core/object-changes/?changed_object_type=extras.webhook&changed_object_id=${id}`,
    );
    assert.deepEqual(
      changes.body.results.map((c: { action: string }) => c.action),
      ['update', 'create'],
    );

    assert.equal((await svc.admin.delete(`${HOOKS}${id}/`)).status, 204);
    assert.equal((await svc.admin.get(`${HOOKS}${id}/`)).status, 404);
  });

  it('refuses bad webhook input with field errors', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'a', payload_url: 'ftp://example.com/x' }, 'payload_url'],
      [{ name: 'a', payload_url: 'not a url' }, 'payload_url'],
      [{ name: 'a', payload_url: 'javascript:alert(1)' }, 'payload_url'],
      [{ name: 'a', payload_url: 'data:text/plain,x' }, 'payload_url'],
      [{ name: 'a', payload_url: '/relative/hook' }, 'payload_url'],
      [{ name: 'a', payload_url: 'file:///etc/passwd' }, 'payload_url'],
      [{ name: 'a', payload_url: 'https://x.example/', http_method: 'TRACE' }, 'http_method'],
      [{ name: 'a', payload_url: 'https://x.example/', http_content_type: 'json' }, 'http_content_type'],
      [{ name: 'a', payload_url: 'https://x.example/', additional_headers: 'no colon here' }, 'additional_headers'],
      [{ name: 'a', payload_url: 'https://x.example/', additional_headers: 'Bad Name: x' }, 'additional_headers'],
      [{ name: '', payload_url: 'https://x.example/' }, 'name'],
      [{ payload_url: 'https://x.example/' }, 'name'],
      [{ name: 'a', payload_url: 'https://x.example/', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await svc.admin.post(HOOKS, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.status}`);
      assert.ok(res.body[field], `${JSON.stringify(body)} should name ${field}: ${JSON.stringify(res.body)}`);
    }
    await webhook('dup');
    const dup = await svc.admin.post(HOOKS, { name: 'dup', payload_url: 'https://x.example/' });
    assert.equal(dup.status, 400);
    assert.ok(dup.body.name);
  });

  it('needs extras permissions for webhooks', async () => {
    const id = await webhook();
    const viewer = await actor(svc, 'viewer', [{ object_types: ['extras.webhook'], actions: ['view'] }]);
    assert.equal((await viewer.client.get(`${HOOKS}${id}/`)).status, 200);
    assert.equal((await viewer.client.patch(`${HOOKS}${id}/`, { name: 'x' })).status, 403);
    assert.equal((await viewer.client.get(RULES)).status, 403);
  });

  it('creates, updates and deletes an event rule aimed at a webhook', async () => {
    const hook = await webhook();
    const created = await svc.admin.post(RULES, {
      name: 'sites to ci',
      object_types: ['dcim.site'],
      event_types: ['object_created', 'object_updated'],
      conditions: {
        and: [
          { attr: 'status', value: 'active' },
          { attr: 'name', op: 'regex', value: '^lab-' },
        ],
      },
      action_type: 'webhook',
      action_object_id: hook,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(
      Object.keys(created.body).sort(),
      [
        'action_data',
        'action_object_id',
        'action_type',
        'conditions',
        'created',
        'created_by',
        'display',
        'enabled',
        'event_types',
        'id',
        'last_updated',
        'name',
        'object_types',
        'url',
      ].sort(),
    );
    assert.equal(created.body.enabled, true);
    assert.equal(created.body.action_data, null);
    assert.deepEqual(created.body.object_types, ['dcim.site']);
    const id = created.body.id;

    const byEvent = await svc.admin.get(`${RULES}?event_type=object_updated&object_type=dcim.site`);
    assert.equal(byEvent.body.count, 1);
    assert.equal((await svc.admin.get(`${RULES}?event_type=object_deleted`)).body.count, 0);

    const patched = await svc.admin.patch(`${RULES}${id}/`, {
      enabled: false,
      conditions: null,
      action_data: { note: 'x' },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.enabled, false);
    assert.equal(patched.body.conditions, null);
    assert.deepEqual(patched.body.action_data, { note: 'x' });

    const inUse = await svc.admin.delete(`${HOOKS}${hook}/`);
    assert.equal(inUse.status, 409);
    assert.match(inUse.body.detail, /sites to ci/);

    assert.equal((await svc.admin.delete(`${RULES}${id}/`)).status, 204);
    assert.equal((await svc.admin.delete(`${HOOKS}${hook}/`)).status, 204);
  });

  it('refuses unknown object types, unknown event types, bad conditions and a webhook action without a webhook', async () => {
    const hook = await webhook();
    const base = {
      name: 'r',
      object_types: ['dcim.device'],
      event_types: ['object_created'],
      action_type: 'webhook',
      action_object_id: hook,
    };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, object_types: ['dcim.spaceship'] }, 'object_types'],
      [{ ...base, object_types: ['nodot'] }, 'object_types.0'],
      [{ ...base, event_types: ['object_exploded'] }, 'event_types'],
      [{ ...base, event_types: [] }, 'event_types'],
      [{ ...base, conditions: { attr: 'status', op: 'sounds_like', value: 'x' } }, 'conditions'],
      [{ ...base, conditions: { and: [] } }, 'conditions'],
      [{ ...base, conditions: { attr: 'name', op: 'regex', value: '(' } }, 'conditions'],
      [{ ...base, conditions: 'always' }, 'conditions'],
      [{ ...base, conditions: { attr: 'status', extra: 1 } }, 'conditions'],
      [{ ...base, action_object_id: 9999 }, 'action_object_id'],
      [{ ...base, action_object_id: null }, 'action_object_id'],
      [{ ...base, action_type: 'email' }, 'action_type'],
      [{ ...base, action_data: 'x' }, 'action_data'],
    ];
    for (const [body, field] of cases) {
      const res = await svc.admin.post(RULES, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.status} ${JSON.stringify(res.body)}`);
      assert.ok(res.body[field], `${JSON.stringify(body)} should name ${field}: ${JSON.stringify(res.body)}`);
    }
    const depth = 5000;
    const deep = `${'{"and":['.repeat(depth)}{"attr":"x"}${']}'.repeat(depth)}`;
    const raw = JSON.stringify({ ...base, conditions: 'DEEP' }).replace('"DEEP"', deep);
    const tooDeep = await svc.admin.post(RULES, undefined, { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(tooDeep.status, 400);
    assert.ok(tooDeep.body.conditions);

    const ok = await svc.admin.post(RULES, base);
    assert.equal(ok.status, 201);
    const unhook = await svc.admin.patch(`${RULES}${ok.body.id}/`, { action_object_id: null });
    assert.equal(unhook.status, 400);
    assert.ok(unhook.body.action_object_id);
    const dup = await svc.admin.post(RULES, base);
    assert.equal(dup.status, 400);
    assert.ok(dup.body.name);
  });

  it('accepts registered plugin action types and event types, and their action_data checks', async () => {
    svc.host.events.registerType('thing_happened');
    svc.host.events.registerAction('test.note', {
      run: async () => {},
      checkData: (data) => (data && typeof data.text === 'string' ? null : 'needs {"text": ...}'),
    });
    const refused = await svc.admin.post(RULES, {
      name: 'n',
      event_types: ['thing_happened'],
      action_type: 'test.note',
      action_data: {},
    });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.action_data, ['needs {"text": ...}']);
    const ok = await svc.admin.post(RULES, {
      name: 'n',
      event_types: ['thing_happened'],
      action_type: 'test.note',
      action_data: { text: 'hi' },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.object_types, []);
    assert.equal(ok.body.action_object_id, null);
  });
});
