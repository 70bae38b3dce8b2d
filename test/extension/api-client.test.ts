// The extension's REST client against the real service, in process, for the host endpoints.
import assert from 'node:assert/strict';
import { createCtx, inTransaction } from '../../server/host/core/context';
import { notify } from '../../server/host/events/notifications';
import { ApiClient, PATHS, queryString } from '../../extension/core/api-client';
import { ApiError } from '../../extension/core/api-error';
import { BranchObjectsClient } from '../../extension/core/branch-objects-client';
import { branch } from '../../contract/api/branching';
import { ADMIN_TOKEN, serviceForEachTest, startService, type TestService } from '../support/service';

async function rejects(p: Promise<unknown>, kind: ApiError['kind']): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`);
    assert.equal(e.kind, kind, e.message);
    return e;
  }
  assert.fail(`expected a ${kind} failure`);
}

describe('extension: API client against the service (host endpoints)', () => {
  let svc: TestService;
  let admin: ApiClient;
  const lines: string[] = [];

  serviceForEachTest(async (started) => {
    svc = started;
    lines.length = 0;
    admin = new ApiClient({ baseUrl: `${svc.url}/`, token: ADMIN_TOKEN, log: (l) => lines.push(l) });
  });

  async function createUser(username: string, password: string): Promise<number> {
    const res = await svc.admin.post('/api/users/users/', { username, password });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id;
  }

  it('reads the signed-in user and logs requests without the token', async () => {
    const me = await admin.me();
    assert.equal(me.username, 'admin');
    assert.equal(me.is_superuser, true);
    assert.equal(admin.baseUrl, svc.url);
    assert.deepEqual(
      lines.map((l) => l.replace(/\(\d+ ms\)/, '(ms)')),
      ['GET /api/users/me/ -> 200 (ms)'],
    );
    assert.ok(lines.every((l) => !l.includes(ADMIN_TOKEN)));
  });

  it('reads the service status without a token', async () => {
    const status = await admin.withToken(null).status();
    assert.equal(status['host-version'], '4.7.0');
    assert.equal(status.plugins['change-control'], '0.5.0');
  });

  it('provisions a token from a username and password, which then signs in', async () => {
    const id = await createUser('alice', 'correct horse battery staple');
    const anonymous = admin.withToken(null);
    const key = await anonymous.provisionToken('alice', 'correct horse battery staple', 'VS Code Change Control');
    const me = await anonymous.withToken(key).me();
    assert.equal(me.id, id);
    assert.equal(me.username, 'alice');
    const wrong = await rejects(anonymous.provisionToken('alice', 'wrong', 'x'), 'badCredentials');
    assert.equal(wrong.message, 'Invalid username or password.');
  });

  it('reports a bad token as bad credentials and a missing one as signed out', async () => {
    await rejects(admin.withToken('nope-nope-nope-nope-nope-nope-nope-nope-nope').me(), 'badCredentials');
    await rejects(admin.withToken(null).me(), 'signedOut');
  });

  it('reports a service that does not answer as unreachable', async () => {
    const url = svc.url;
    await svc.close();
    const e = await rejects(new ApiClient({ baseUrl: url, token: ADMIN_TOKEN }).me(), 'unreachable');
    assert.match(e.message, new RegExp(url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    svc = await startService(); // for afterEach
  });

  it('turns a refused write into field errors', async () => {
    const e = await rejects(admin.request('POST', PATHS.branches, { name: '' }), 'invalid');
    assert.equal(e.status, 400);
    assert.ok(Object.keys(e.fields).includes('name'), JSON.stringify(e.fields));
  });

  it('reads an object with its version and writes naming it: a newer version someone else saved is refused as stale, nothing written', async () => {
    const branchRes = await svc.admin.post('/api/plugins/branching/branches/', { name: 'edit' });
    const device = (await svc.admin.post('/api/dcim/devices/', { name: 'sw1', rack: 'R1' })).body;
    const objects = new BranchObjectsClient(admin);
    const ctx = (await objects.context('edit'))!;
    const type = ctx.access.object_types.find((t) => t.object_type === 'dcim.device')!;
    const read = await objects.getObject(ctx, type, device.id);
    assert.equal(read.value.rack, 'R1');
    assert.ok(read.etag);
    const saved = await objects.replaceObject(
      ctx,
      type,
      device.id,
      { name: 'sw1', rack: 'R2' },
      { ifMatch: read.etag },
    );
    assert.ok(saved.etag && saved.etag !== read.etag);
    const theirs = await svc.admin.inBranch(branchRes.body.schema_id).patch(`/api/dcim/devices/${device.id}/`, {
      rack: 'R3',
    });
    assert.equal(theirs.status, 200);
    const refused = await rejects(
      objects.replaceObject(ctx, type, device.id, { name: 'sw1', rack: 'R4' }, { ifMatch: saved.etag! }),
      'stale',
    );
    assert.equal(refused.status, 412);
    assert.equal((await objects.getObject(ctx, type, device.id)).value.rack, 'R3');
    assert.match(lines.at(-2)!, /^PUT \/api\/dcim\/devices\/\d+\/ -> 412/);
  });

  it("lists branches and a branch's net-effect changes, parsed with the contract", async () => {
    const created = await svc.admin.post('/api/plugins/branching/branches/', { name: 'move-sw1' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const schemaId: string = created.body.schema_id;
    const device = await svc.admin.inBranch(schemaId).post('/api/dcim/devices/', { name: 'sw1', status: 'planned' });
    assert.equal(device.status, 201, JSON.stringify(device.body));

    const branches = await admin.listBranches();
    assert.deepEqual(
      branches.map((b) => b.name),
      ['move-sw1'],
    );
    assert.equal((await admin.getBranch(created.body.id)).schema_id, schemaId);
    const changes = await admin.listChanges(created.body.id);
    assert.equal(changes.length, 1);
    assert.equal(changes[0].action, 'create');
    assert.equal(changes[0].object_type, 'dcim.device');
    assert.deepEqual(changes[0].original, null);
    assert.equal(changes[0].modified?.name, 'sw1');
  });

  it('follows `next` links through every page of a list', async () => {
    for (const name of ['a', 'b', 'c', 'd', 'e'])
      assert.equal((await svc.admin.post('/api/plugins/branching/branches/', { name })).status, 201);
    const all = await admin.listAll(branch, PATHS.branches, { limit: 2 });
    assert.deepEqual(all.map((b) => b.name).sort(), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(lines.filter((l) => l.startsWith('GET /api/plugins/branching/branches/')).length, 3);
  });

  it("lists the caller's unread notifications and marks one read", async () => {
    const aliceId = await createUser('alice', 'pw-alice-123456');
    // A notification of a change request shows while its user may view change requests.
    await svc.admin.post('/api/users/permissions/', {
      name: 'alice views requests',
      object_types: ['change_control.changerequest'],
      actions: ['view'],
      users: [aliceId],
    });
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
    await inTransaction(ctx, (tx) =>
      notify(tx, [aliceId], {
        objectType: 'change_control.changerequest',
        objectId: 7,
        objectRepr: 'CR-7 Move sw1',
        eventType: 'change_request_review_requested',
      }),
    );
    const alice = admin.withToken(await admin.withToken(null).provisionToken('alice', 'pw-alice-123456', 'test'));

    const unread = await alice.listNotifications({ unreadOnly: true });
    assert.equal(unread.count, 1);
    assert.equal(unread.results[0].object_id, 7);
    assert.equal(unread.results[0].event_type, 'change_request_review_requested');
    const marked = await alice.markNotificationRead(unread.results[0].id);
    assert.equal(marked.read, true);
    assert.equal((await alice.listNotifications({ unreadOnly: true })).count, 0);
    assert.equal((await admin.listNotifications({ unreadOnly: true })).count, 0);
  });

  it('refuses an answer the contract does not describe', async () => {
    const fake = (async () =>
      new Response(JSON.stringify({ id: 'x' }), {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
      })) as typeof fetch;
    const e = await rejects(
      new ApiClient({ baseUrl: 'http://127.0.0.1:1', token: 't', fetch: fake }).me(),
      'badResponse',
    );
    assert.match(e.message, /GET \/api\/users\/me\/: id:/);
    const notJson = (async () => new Response('<html>', { status: 200 })) as typeof fetch;
    await rejects(new ApiClient({ baseUrl: 'http://127.0.0.1:1', token: 't', fetch: notJson }).me(), 'badResponse');
  });

  it('builds query strings with repeated parameters for OR filters', () => {
    assert.equal(
      queryString({ status: ['draft', 'approved'], reviewer: 'me', skip: undefined, limit: 5 }),
      '?status=draft&status=approved&reviewer=me&limit=5',
    );
    assert.equal(queryString({}), '');
  });

  it('sends the change-control requests to the paths of the specification', async () => {
    const seen: string[] = [];
    const respond = (body: unknown) =>
      new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
    const fake = (async (url: string | URL | Request, init?: RequestInit) => {
      seen.push(`${init?.method} ${String(url).replace('http://cc.test', '')}${init?.body ? ` ${init.body}` : ''}`);
      return respond({ count: 0, next: null, previous: null, results: [] });
    }) as typeof fetch;
    const c = new ApiClient({ baseUrl: 'http://cc.test', token: 't', fetch: fake });
    await c.listChangeRequests({ reviewer: 'me', status: ['needs-review', 'rejected'] });
    await c.listChecks(4);
    await c.listReviews(4);
    await c.listComments(4);
    await c.listMyReviews(2);
    await c.deleteComment(9);
    await c.lifecycle(4, 'return-to-draft').catch(() => undefined);
    await c.runChecks(4).catch(() => undefined);
    await c.getEvaluation(4).catch(() => undefined);
    await c.mergeBranch(12).catch(() => undefined);
    await c.createComment({ change_request: 4, change_diff: 11, text: 'hi', parent: null }).catch(() => undefined);
    await c.createReview({ change_request: 4, decision: 'reject', comment: 'no' }).catch(() => undefined);
    await c.updateComment(9, { resolved: true }).catch(() => undefined);
    assert.deepEqual(seen, [
      'GET /api/plugins/change-control/change-requests/?limit=1000&status=needs-review&status=rejected&reviewer=me',
      'GET /api/plugins/change-control/checks/?limit=1000&change_request_id=4',
      'GET /api/plugins/change-control/reviews/?limit=1000&change_request_id=4',
      'GET /api/plugins/change-control/change-comments/?limit=1000&change_request_id=4',
      'GET /api/plugins/change-control/reviews/?limit=1000&reviewer_id=2',
      'DELETE /api/plugins/change-control/change-comments/9/',
      'POST /api/plugins/change-control/change-requests/4/return-to-draft/',
      'POST /api/plugins/change-control/change-requests/4/run-checks/',
      'GET /api/plugins/change-control/change-requests/4/evaluation/',
      'POST /api/plugins/branching/branches/12/merge/ {"commit":true}',
      'POST /api/plugins/change-control/change-comments/ {"change_request":4,"change_diff":11,"text":"hi","parent":null}',
      'POST /api/plugins/change-control/reviews/ {"change_request":4,"decision":"reject","comment":"no"}',
      'PATCH /api/plugins/change-control/change-comments/9/ {"resolved":true}',
    ]);
  });
});
