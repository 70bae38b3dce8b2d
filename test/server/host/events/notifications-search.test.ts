import assert from 'node:assert/strict';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { notify } from '../../../../server/host/events/notifications';
import { eachTestService, serviceForEachTest, type TestService } from '../../../support/service';
import { actor } from '../users/fixtures';
import { forEachTest } from '../../../support/prepared';

const PATH = '/api/extras/notifications/';

describe('extras: notifications', () => {
  const svc = eachTestService();
  // A notification of a change request shows while its user may view that request.
  const SEE_REQUESTS = [{ object_types: ['change_control.changerequest'], actions: ['view'] }];
  const alice = forEachTest(() => actor(svc, 'alice', SEE_REQUESTS));
  const bob = forEachTest(() => actor(svc, 'bob', SEE_REQUESTS));

  async function leave(userIds: number[], eventType: string, objectId = 7): Promise<number> {
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
    return inTransaction(ctx, (tx) =>
      notify(tx, userIds, {
        objectType: 'change_control.changerequest',
        objectId,
        objectRepr: `CR ${objectId}`,
        eventType,
      }),
    );
  }

  it("lists only the caller's own notifications, newest first, with filters", async () => {
    assert.equal(await leave([alice.id, alice.id, bob.id, 999_999], 'change_request_review_requested'), 2);
    svc.clock.advance(1000);
    await leave([alice.id], 'change_request_approved', 8);

    const mine = await alice.client.get(PATH);
    assert.equal(mine.status, 200);
    assert.equal(mine.body.count, 2);
    const [newest, oldest] = mine.body.results;
    assert.deepEqual(
      Object.keys(newest).sort(),
      ['created', 'display', 'event_type', 'id', 'object_id', 'object_repr', 'object_type', 'read', 'url'].sort(),
    );
    assert.equal(newest.event_type, 'change_request_approved');
    assert.equal(newest.object_type, 'change_control.changerequest');
    assert.equal(newest.object_id, 8);
    assert.equal(newest.read, false);
    assert.equal(newest.created, '2026-11-01T09:00:01.000Z');
    assert.equal(oldest.object_repr, 'CR 7');

    const bobs = await bob.client.get(PATH);
    assert.equal(bobs.body.count, 1);
    assert.equal((await svc.admin.get(PATH)).body.count, 0, "not even a superuser sees others' notifications");

    const approved = await alice.client.get(`${PATH}?event_type=change_request_approved`);
    assert.deepEqual(
      approved.body.results.map((n: { object_id: number }) => n.object_id),
      [8],
    );
    assert.equal((await alice.client.get(`${PATH}?read=maybe`)).status, 400);
    assert.equal((await svc.anonymous.get(PATH)).status, 403);
  });

  it("marks own notifications read and deletes them; another user's are 404", async () => {
    await leave([alice.id, bob.id], 'review_submitted');
    const mine = (await alice.client.get(PATH)).body.results[0];
    const bobs = (await bob.client.get(PATH)).body.results[0];

    const read = await alice.client.patch(`${PATH}${mine.id}/`, { read: true });
    assert.equal(read.status, 200);
    assert.equal(read.body.read, true);
    assert.equal((await alice.client.get(`${PATH}?read=true`)).body.count, 1);
    assert.equal((await alice.client.get(`${PATH}?read=false`)).body.count, 0);

    assert.equal((await alice.client.patch(`${PATH}${mine.id}/`, { read: true, event_type: 'x' })).status, 400);
    assert.equal((await alice.client.patch(`${PATH}${mine.id}/`, { read: 'yes' })).status, 400);

    assert.equal((await alice.client.get(`${PATH}${bobs.id}/`)).status, 404);
    assert.equal((await alice.client.patch(`${PATH}${bobs.id}/`, { read: true })).status, 404);
    assert.equal((await alice.client.delete(`${PATH}${bobs.id}/`)).status, 404);
    assert.equal((await bob.client.get(`${PATH}${bobs.id}/`)).body.read, false);

    assert.equal((await alice.client.delete(`${PATH}${mine.id}/`)).status, 204);
    assert.equal((await alice.client.get(`${PATH}${mine.id}/`)).status, 404);
    assert.equal((await bob.client.get(PATH)).body.count, 1);
  });
});

describe('extras: search', () => {
  let svc: TestService;
  serviceForEachTest(async (started) => {
    svc = started;
    svc.host.search.register(async (ctx, q, limit) => {
      const names = ['alpha', 'alphabet', 'beta'].filter((n) => n.includes(q.toLowerCase()));
      return names.slice(0, limit).map((name, i) => ({
        object_type: 'test.thing',
        id: i + 1,
        display: name,
        url: `${ctx.baseUrl}/api/test/things/${i + 1}/`,
        field: 'name',
        value: name,
      }));
    });
  });

  it('requires q and answers {"results": [...], "truncated"} from the registered providers, honouring limit', async () => {
    for (const path of ['/api/search/', '/api/search/?q=', '/api/search/?q=%20%20']) {
      const res = await svc.admin.get(path);
      assert.equal(res.status, 400, path);
      assert.ok(res.body.q, `${path}: ${JSON.stringify(res.body)}`);
    }
    const found = await svc.admin.get('/api/search/?q=ALPHA');
    assert.equal(found.status, 200);
    assert.deepEqual(Object.keys(found.body), ['results', 'truncated']);
    assert.equal(found.body.truncated, false);
    assert.deepEqual(
      found.body.results.map((r: { display: string }) => r.display),
      ['alpha', 'alphabet'],
    );
    assert.deepEqual(Object.keys(found.body.results[0]).sort(), [
      'display',
      'field',
      'id',
      'object_type',
      'url',
      'value',
    ]);

    const one = await svc.admin.get('/api/search/?q=alpha&limit=1');
    assert.equal(one.body.results.length, 1);
    assert.equal(one.body.truncated, true, 'more matched than the one result returned');
    const exact = await svc.admin.get('/api/search/?q=alpha&limit=2');
    assert.deepEqual([exact.body.results.length, exact.body.truncated], [2, false]);
    assert.equal((await svc.admin.get('/api/search/?q=alpha&limit=0')).status, 400);
    assert.equal((await svc.admin.get('/api/search/?q=alpha&limit=x')).status, 400);
    assert.deepEqual((await svc.admin.get('/api/search/?q=zzz')).body, { results: [], truncated: false });
    assert.equal((await svc.anonymous.get('/api/search/?q=alpha')).status, 403);
  });
});
