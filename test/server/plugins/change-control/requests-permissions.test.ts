import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import {
  act,
  actor,
  AUTHOR,
  BRANCHES,
  branch,
  detail,
  expectStatus,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  type PermissionGrant,
  actorsForSuite,
} from './fixtures';
import { CR_TYPE, draftRequest, listed, VIEW_ONLY } from './requests-support';

type Action = 'submit' | 'return-to-draft' | 'abandon' | 'reopen';

/** The permission each lifecycle action needs (Authentication table), and the state it starts from and lands on. */
const ACTIONS: Array<{ action: Action; perm: string; from: 'draft' | 'needs-review' | 'abandoned'; to: string }> = [
  { action: 'submit', perm: 'change', from: 'draft', to: 'needs-review' },
  { action: 'return-to-draft', perm: 'change', from: 'needs-review', to: 'draft' },
  { action: 'abandon', perm: 'abandon', from: 'needs-review', to: 'abandoned' },
  { action: 'reopen', perm: 'reopen', from: 'abandoned', to: 'draft' },
];

const ALL_CUSTOM = ['change', 'abandon', 'reopen'];

/** View on everything except change requests, plus the given grants on change requests. */
function onRequests(...grants: Array<{ actions: string[]; constraints?: unknown }>): PermissionGrant[] {
  const others = VIEW_ONLY.map((g) => ({ ...g, object_types: g.object_types.filter((t) => t !== CR_TYPE) }));
  return [...others, ...grants.map((g) => ({ object_types: [CR_TYPE], ...g }))];
}

describe('change requests: permission matrix of the four lifecycle actions (Authentication 2)', () => {
  const svc = suiteService();
  const [author, reviewer] = actorsForSuite(svc, ['alice', AUTHOR], ['bob', REVIEWER]);
  let n = 0;

  async function requestIn(from: 'draft' | 'needs-review' | 'abandoned'): Promise<number> {
    const { cr } = await draftRequest(author, `perm-${++n}`);
    if (from === 'needs-review') expectStatus(await act(author.client, cr.id, 'submit'), 200);
    if (from === 'abandoned') expectStatus(await act(svc.admin, cr.id, 'abandon'), 200);
    return cr.id;
  }

  before(async () => {
    await policy(svc, { name: 'Everything', rules: [{ name: 'bob', users: [reviewer.id] }] });
  });

  for (const { action, perm, from, to } of ACTIONS) {
    it(`Authentication 2 / matrix: ${action} without ${perm}_changerequest is 403 and nothing moves`, async () => {
      const id = await requestIn(from);
      const who = await actor(
        svc,
        `no-${perm}-${++n}`,
        onRequests({ actions: ['view', ...ALL_CUSTOM.filter((a) => a !== perm)] }),
      );
      const res = await act(who.client, id, action);
      expectStatus(res, 403);
      assert.ok(res.body.detail);
      assert.equal((await detail(svc.admin, id)).status, from);
    });

    it(`Authentication 2 / matrix: ${action} with ${perm}_changerequest under a constraint that excludes the request is 404 and nothing moves`, async () => {
      const id = await requestIn(from);
      // May see and act on their own requests only; this one is alice's.
      const who = await actor(
        svc,
        `own-only-${perm}-${++n}`,
        onRequests({ actions: ['view', perm], constraints: { requester: '$user' } }),
      );
      expectStatus(await who.client.get(`${REQUESTS}${id}/`), 404);
      expectStatus(await act(who.client, id, action), 404);
      assert.equal((await detail(svc.admin, id)).status, from);
    });

    it(`Authentication 2 / matrix: ${action} on a visible request that the ${perm} constraint excludes is 403`, async () => {
      const id = await requestIn(from);
      const who = await actor(
        svc,
        `visible-${perm}-${++n}`,
        onRequests({ actions: ['view'] }, { actions: [perm], constraints: { ref: 'SOMETHING-ELSE' } }),
      );
      expectStatus(await act(who.client, id, action), 403);
      assert.equal((await detail(svc.admin, id)).status, from);
    });

    it(`Authentication 2 / matrix / Note 4: ${action} with ${perm}_changerequest (and no add_changerequest) moves ${from} to ${to}`, async () => {
      const id = await requestIn(from);
      const who = await actor(svc, `with-${perm}-${++n}`, onRequests({ actions: ['view', perm] }));
      const res = await act(who.client, id, action);
      expectStatus(res, 200);
      assert.equal(res.body.status, to);
      assert.equal((await detail(svc.admin, id)).status, to);
    });
  }

  it('Note 4: a user holding change, abandon and reopen but not add_changerequest drives a request through every action', async () => {
    const id = await requestIn('draft');
    const who = await actor(svc, `no-add-${++n}`, onRequests({ actions: ['view', 'change', 'abandon', 'reopen'] }));
    for (const [action, to] of [
      ['submit', 'needs-review'],
      ['return-to-draft', 'draft'],
      ['submit', 'needs-review'],
      ['abandon', 'abandoned'],
      ['reopen', 'draft'],
    ] as const) {
      const res = await act(who.client, id, action);
      expectStatus(res, 200, action);
      assert.equal(res.body.status, to, action);
    }
  });

  it('Endpoints: a lifecycle action on a request that does not exist is 404', async () => {
    for (const path of ['999999', 'abc', '-1'])
      expectStatus(await author.client.post(`${REQUESTS}${path}/submit/`, {}), 404, path);
    expectStatus(await author.client.get(`${REQUESTS}abc/`), 404);
  });

  it('Authentication 1: a lifecycle action without a token, or with a read-only token, is 403', async () => {
    const id = await requestIn('draft');
    expectStatus(await act(svc.anonymous, id, 'submit'), 403);
    const created = await svc.admin.post('/api/users/tokens/', { user: author.id, write_enabled: false });
    expectStatus(await act(svc.as(created.body.key), id, 'submit'), 403);
    assert.equal((await detail(svc.admin, id)).status, 'draft');
  });
});

describe('change requests: permission matrix of create, update and delete', () => {
  const svc = suiteService();
  const [author] = actorsForSuite(svc, ['alice', AUTHOR]);
  let n = 0;
  const BRANCH_WORK: PermissionGrant[] = [
    { object_types: ['branching.branch'], actions: ['add', 'change'] },
    { object_types: ['dcim.device'], actions: ['add', 'change'] },
  ];

  it('matrix create: without add_changerequest POST change-requests/ is 403 and no request exists', async () => {
    const who = await actor(svc, `no-add-${++n}`, [...onRequests({ actions: ['view', 'change'] }), ...BRANCH_WORK]);
    const { branch: b } = await branch(who.client, `no-add-${n}`);
    expectStatus(await who.client.post(REQUESTS, { branch: b.id }), 403);
    assert.deepEqual(await listed(svc.admin, `branch_id=${b.id}`), []);
  });

  it('matrix create: with add_changerequest under a constraint the new request does not satisfy, it is refused (403) and nothing is written', async () => {
    const who = await actor(svc, `add-low-${++n}`, [
      ...onRequests({ actions: ['view'] }, { actions: ['add'], constraints: { priority: 'low' } }),
      ...BRANCH_WORK,
    ]);
    const { branch: b } = await branch(who.client, `add-low-${n}`);
    expectStatus(await who.client.post(REQUESTS, { branch: b.id, priority: 'high' }), 403);
    assert.deepEqual(await listed(svc.admin, `branch_id=${b.id}`), []);
    const res = await who.client.post(REQUESTS, { branch: b.id, priority: 'low' });
    expectStatus(res, 201);
    assert.equal(res.body.priority, 'low');
  });

  it('matrix create: with add_changerequest POST change-requests/ is 201 and the requester is the caller', async () => {
    const who = await actor(svc, `add-${++n}`, [...onRequests({ actions: ['view', 'add'] }), ...BRANCH_WORK]);
    const { branch: b } = await branch(who.client, `add-${n}`);
    const res = await who.client.post(REQUESTS, { branch: b.id, ref: 'CHG-9' });
    expectStatus(res, 201);
    assert.equal(res.body.requester.id, who.id);
    assert.equal(res.body.status, 'draft');
    assert.deepEqual(await listed(svc.admin, `branch_id=${b.id}`), [res.body.id]);
  });

  it('matrix update: without change_changerequest PATCH is 403 and nothing changes', async () => {
    const { cr } = await draftRequest(author, `upd-no-${++n}`, { title: 'Original' });
    const who = await actor(svc, `no-change-${n}`, onRequests({ actions: ['view', 'abandon', 'reopen'] }));
    expectStatus(await who.client.patch(`${REQUESTS}${cr.id}/`, { title: 'Mine now' }), 403);
    assert.equal((await detail(svc.admin, cr.id)).title, 'Original');
  });

  it('matrix update: with change_changerequest under a constraint that excludes the request, PATCH is 404', async () => {
    const { cr } = await draftRequest(author, `upd-con-${++n}`, { title: 'Original' });
    const who = await actor(
      svc,
      `own-change-${n}`,
      onRequests({ actions: ['view', 'change'], constraints: { requester: '$user' } }),
    );
    expectStatus(await who.client.patch(`${REQUESTS}${cr.id}/`, { title: 'Mine now' }), 404);
    assert.equal((await detail(svc.admin, cr.id)).title, 'Original');
  });

  it('matrix update: a visible request that the change constraint excludes is 403 on PATCH', async () => {
    const { cr } = await draftRequest(author, `upd-vis-${++n}`, { title: 'Original' });
    const who = await actor(
      svc,
      `vis-change-${n}`,
      onRequests({ actions: ['view'] }, { actions: ['change'], constraints: { requester: '$user' } }),
    );
    expectStatus(await who.client.patch(`${REQUESTS}${cr.id}/`, { title: 'Mine now' }), 403);
    assert.equal((await detail(svc.admin, cr.id)).title, 'Original');
  });

  it('matrix update: with change_changerequest PATCH is 200 and writes the fields', async () => {
    const { cr } = await draftRequest(author, `upd-ok-${++n}`, { title: 'Original' });
    const who = await actor(svc, `change-${n}`, onRequests({ actions: ['view', 'change'] }));
    const res = await who.client.patch(`${REQUESTS}${cr.id}/`, {
      title: 'Edited',
      ref: 'CHG-77',
      priority: 'critical',
    });
    expectStatus(res, 200);
    assert.equal(res.body.title, 'Edited');
    assert.equal(res.body.ref, 'CHG-77');
    assert.equal(res.body.priority, 'critical');
    assert.equal(res.body.requester.id, author.id, 'the requester does not change');
  });

  it('matrix delete: without delete_changerequest DELETE is 403 and the request stays', async () => {
    const { cr } = await draftRequest(author, `del-no-${++n}`);
    const who = await actor(svc, `no-delete-${n}`, onRequests({ actions: ['view', 'change', 'abandon'] }));
    expectStatus(await who.client.delete(`${REQUESTS}${cr.id}/`), 403);
    expectStatus(await svc.admin.get(`${REQUESTS}${cr.id}/`), 200);
  });

  it('matrix delete: with delete_changerequest under a constraint that excludes the request, DELETE is 404', async () => {
    const { cr } = await draftRequest(author, `del-con-${++n}`);
    const who = await actor(
      svc,
      `own-delete-${n}`,
      onRequests({ actions: ['view', 'delete'], constraints: { requester: '$user' } }),
    );
    expectStatus(await who.client.delete(`${REQUESTS}${cr.id}/`), 404);
    expectStatus(await svc.admin.get(`${REQUESTS}${cr.id}/`), 200);
  });

  it('matrix delete: with delete_changerequest DELETE is 204, the request is gone and its branch remains', async () => {
    const { cr, branchId } = await draftRequest(author, `del-ok-${++n}`);
    const who = await actor(svc, `delete-${n}`, onRequests({ actions: ['view', 'delete'] }));
    expectStatus(await who.client.delete(`${REQUESTS}${cr.id}/`), 204);
    expectStatus(await svc.admin.get(`${REQUESTS}${cr.id}/`), 404);
    expectStatus(await svc.admin.get(`${BRANCHES}${branchId}/`), 200);
    // The branch may carry a new request afterwards.
    expectStatus(await author.client.post(REQUESTS, { branch: branchId }), 201);
  });

  it('matrix: a review-only user cannot write change requests at all', async () => {
    const { cr } = await draftRequest(author, `rev-only-${++n}`);
    const who = await actor(svc, `reviewer-${n}`, REVIEWER);
    expectStatus(await who.client.patch(`${REQUESTS}${cr.id}/`, { title: 'x' }), 403);
    expectStatus(await who.client.delete(`${REQUESTS}${cr.id}/`), 403);
    expectStatus(await act(who.client, cr.id, 'submit'), 403);
    expectStatus(await review(who.client, cr.id, 'comment', 'fine by me'), 201);
  });
});
