import assert from 'node:assert/strict';
import { branchingPlugin } from '../../../server/plugins/branching/plugin';
import type { HostPlugin } from '../../../server/host/host';
import { Reply } from '../../../server/host/http/routes';
import { startService, type ApiClient, type TestService } from '../../support/service';
import { actor, createUser } from '../host/users/fixtures';

const GROUPS = '/api/users/groups/';
const GATE = '/api/test/gate/';

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

async function groupCount(svc: TestService): Promise<number> {
  return (await svc.host.db.selectFrom('groups').select('id').execute()).length;
}

async function keptKeys(svc: TestService): Promise<number> {
  return (await svc.host.db.selectFrom('idempotency_keys').select('key').execute()).length;
}

/** A plugin with one write route that waits until the test opens its gate (a request kept in flight). */
function gatePlugin() {
  let open: () => void = () => undefined;
  let entered: () => void = () => undefined;
  const state = {
    runs: 0,
    gate: Promise.resolve(),
    entered: Promise.resolve(),
    /** Closes the gate: the next request waits inside its transaction until `release`. */
    close(): void {
      state.gate = new Promise<void>((resolve) => (open = resolve));
      state.entered = new Promise<void>((resolve) => (entered = resolve));
    },
    release: () => open(),
  };
  const plugin: HostPlugin = {
    name: 'test-gate',
    version: '1.0.0',
    hostVersion: { min: '4.7.0', max: '4.7.99' },
    register(host) {
      host.routes.add({
        method: 'POST',
        path: GATE,
        access: { authenticated: true },
        summary: 'Waits for the test, then counts a run',
        tag: 'test',
        handler: async ({ body }) => {
          entered();
          await state.gate;
          state.runs++;
          return new Reply(201, { run: state.runs, body });
        },
      });
    },
  };
  return { plugin, state };
}

describe('conventions: Idempotency-Key on writes', () => {
  let svc: TestService;
  let gate: ReturnType<typeof gatePlugin>;
  let other: ApiClient;
  beforeEach(async () => {
    gate = gatePlugin();
    svc = await startService({ plugins: [branchingPlugin(), gate.plugin] });
    other = (await actor(svc, 'other', [{ object_types: ['users.group'], actions: ['view', 'add'] }])).client;
  });
  afterEach(async () => svc.close());

  it('replays the first answer of a repeated write (status, body, Idempotent-Replayed) and writes once', async () => {
    const first = await svc.admin.post(GROUPS, { name: 'netops' }, withKey('create-netops-1'));
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const before = await groupCount(svc);
    const again = await svc.admin.post(GROUPS, { name: 'netops' }, withKey('create-netops-1'));
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.match(again.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(await groupCount(svc), before);
    // Without the key the same body is a new request (here refused: the name is taken).
    assert.equal((await svc.admin.post(GROUPS, { name: 'netops' })).status, 400);
  });

  it('covers PATCH, PUT and DELETE too: a repeated DELETE answers 204 again instead of 404', async () => {
    const g = (await svc.admin.post(GROUPS, { name: 'ops' })).body;
    const patched = await svc.admin.patch(`${GROUPS}${g.id}/`, { name: 'ops2' }, withKey('rename'));
    assert.equal(patched.status, 200);
    assert.deepEqual(
      (await svc.admin.patch(`${GROUPS}${g.id}/`, { name: 'ops2' }, withKey('rename'))).body,
      patched.body,
    );
    const put = await svc.admin.put(`${GROUPS}${g.id}/`, { name: 'ops3' }, withKey('replace'));
    assert.equal(put.status, 200);
    assert.equal((await svc.admin.put(`${GROUPS}${g.id}/`, { name: 'ops3' }, withKey('replace'))).status, 200);
    assert.equal((await svc.admin.delete(`${GROUPS}${g.id}/`, withKey('drop'))).status, 204);
    const replayed = await svc.admin.delete(`${GROUPS}${g.id}/`, withKey('drop'));
    assert.equal(replayed.status, 204);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal((await svc.admin.delete(`${GROUPS}${g.id}/`)).status, 404);
  });

  it('refuses the same key for a different body, path or method with 422 naming it, and writes nothing', async () => {
    assert.equal((await svc.admin.post(GROUPS, { name: 'a' }, withKey('k1'))).status, 201);
    const count = await groupCount(svc);
    const g = (await svc.admin.get(`${GROUPS}?name=a`)).body.results[0];
    for (const res of [
      await svc.admin.post(GROUPS, { name: 'b' }, withKey('k1')),
      await svc.admin.post(`${GROUPS}?x=1`, { name: 'a' }, withKey('k1')),
      await svc.admin.patch(`${GROUPS}${g.id}/`, { name: 'a' }, withKey('k1')),
      await svc.admin.inBranch('nosuchbr').post(GROUPS, { name: 'a' }, withKey('k1')),
    ]) {
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.equal(res.body.detail, 'Idempotency-Key "k1" was already used for a different request.');
    }
    assert.equal(await groupCount(svc), count);
  });

  it("keeps keys per caller: another user's request with the same key runs; anonymous calls never replay", async () => {
    assert.equal((await svc.admin.post(GROUPS, { name: 'mine' }, withKey('shared'))).status, 201);
    const theirs = await other.post(GROUPS, { name: 'theirs' }, withKey('shared'));
    assert.equal(theirs.status, 201);
    assert.equal(theirs.body.name, 'theirs');
    await svc.admin.post('/api/users/users/', { username: 'pat', password: 'correct horse battery' });
    const provision = () =>
      svc.anonymous.post(
        '/api/users/tokens/provision/',
        { username: 'pat', password: 'correct horse battery' },
        withKey('p'),
      );
    const [a, b] = [await provision(), await provision()];
    assert.deepEqual([a.status, b.status], [201, 201]);
    assert.notEqual(a.body.key, b.body.key);
  });

  it('keeps no failed request: a refused write may be sent again with its key, and nothing is kept for it', async () => {
    const refused = await svc.admin.post(GROUPS, { name: '' }, withKey('retry-me'));
    assert.equal(refused.status, 400);
    assert.equal(await keptKeys(svc), 0);
    assert.equal((await svc.admin.post(GROUPS, { name: '' }, withKey('retry-me'))).status, 400);
    // A rolled-back write keeps nothing either: the key is written in the write's own transaction.
    await createUser(svc, 'dup');
    assert.equal((await svc.admin.post('/api/users/users/', { username: 'dup' }, withKey('dup'))).status, 400);
    assert.equal(await keptKeys(svc), 0);
    const fixed = await svc.admin.post(GROUPS, { name: 'fixed' }, withKey('retry-me'));
    assert.equal(fixed.status, 201);
    assert.equal(await keptKeys(svc), 1);
  });

  it('answers 409 while a request with the same key is still running (422 when it differs), then replays its answer', async () => {
    assert.equal((await svc.admin.post(GATE, { n: 0 })).status, 201);
    gate.state.close();
    const running = svc.admin.post(GATE, { n: 1 }, withKey('slow'));
    await gate.state.entered;
    const busy = await svc.admin.post(GATE, { n: 1 }, withKey('slow'));
    assert.equal(busy.status, 409);
    assert.match(busy.body.detail, /still being processed/);
    assert.equal((await svc.admin.post(GATE, { n: 2 }, withKey('slow'))).status, 422);
    gate.state.release();
    const first = await running;
    assert.equal(first.status, 201);
    const replay = await svc.admin.post(GATE, { n: 1 }, withKey('slow'));
    assert.deepEqual([replay.status, replay.body], [201, first.body]);
    assert.equal(gate.state.runs, 2);
  });

  it('keeps an answer for 24 hours: after that the key is free and the request runs again', async () => {
    gate.state.release();
    const first = await svc.admin.post(GATE, { n: 1 }, withKey('daily'));
    svc.clock.advance(23 * 3600_000);
    assert.deepEqual((await svc.admin.post(GATE, { n: 1 }, withKey('daily'))).body, first.body);
    svc.clock.advance(3600_000 + 1000);
    const fresh = await svc.admin.post(GATE, { n: 1 }, withKey('daily'));
    assert.equal(fresh.status, 201);
    assert.equal(fresh.body.run, first.body.run + 1);
    assert.equal(fresh.headers.get('idempotent-replayed'), null);
    // The expired answer was replaced, not kept beside the new one.
    assert.equal(await keptKeys(svc), 1);
  });

  it('refuses a key that is empty, longer than 200 characters or not printable ASCII (400 naming Idempotency-Key), before writing', async () => {
    const count = await groupCount(svc);
    for (const key of ['', 'x'.repeat(201), 'tab\there']) {
      const res = await svc.admin.post(GROUPS, { name: `k${key.length}` }, withKey(key));
      assert.equal(res.status, 400, `${JSON.stringify(key)}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body['Idempotency-Key']), JSON.stringify(res.body));
    }
    assert.equal(await groupCount(svc), count);
    assert.equal((await svc.admin.post(GROUPS, { name: 'long' }, withKey('x'.repeat(200)))).status, 201);
    // Reads ignore the header.
    assert.equal((await svc.admin.get(GROUPS, withKey(''))).status, 200);
  });
});
