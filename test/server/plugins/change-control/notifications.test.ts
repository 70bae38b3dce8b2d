import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import {
  act,
  actor,
  actorsForSuite,
  AUTHOR,
  branch,
  device,
  expectStatus,
  group,
  ok,
  openRequest,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  type Actor,
} from './fixtures';

const NOTIFICATIONS = '/api/extras/notifications/';

async function notificationsOf(a: Actor): Promise<any[]> {
  return (await ok(a.client.get(`${NOTIFICATIONS}?limit=1000`))).results;
}

async function myReviews(a: Actor): Promise<number[]> {
  return (await ok(a.client.get(`${REQUESTS}?reviewer=me&limit=1000`))).results.map((r: { id: number }) => r.id);
}

describe('change control: reviewer notifications and My Reviews (Events 4)', () => {
  describe('with notify_reviewers on (the default)', () => {
    const svc = suiteService();
    const [author, named, member, outsider, inactive] = actorsForSuite(
      svc,
      ['author', [...AUTHOR, { object_types: ['change_control.review'], actions: ['add'] }]],
      ['named', REVIEWER],
      ['member', REVIEWER],
      ['outsider', REVIEWER],
      ['inactive', REVIEWER],
    );
    before(async () => {
      const netops = await group(svc, 'netops', [member.id, inactive.id]);
      await ok(svc.admin.patch(`/api/users/users/${inactive.id}/`, { is_active: false }));
      // The author is eligible too, but can never review their own request.
      await policy(svc, {
        name: 'Devices',
        object_types: ['dcim.device'],
        rules: [{ name: 'netops', min_reviews: 2, users: [named.id, author.id], groups: [netops] }],
      });
    });

    async function submitted(name: string): Promise<any> {
      const { branch: b, inBranch } = await branch(author.client, name);
      await device(inBranch, { name: `${name}-dev` });
      const cr = await openRequest(author.client, b.id, { title: `Change ${name}` });
      return cr;
    }

    it('Events 4: submitting notifies the outstanding eligible reviewers (named users and group members), not the author, not others', async () => {
      const cr = await submitted('notify');
      assert.deepEqual(await notificationsOf(named), [], 'nothing before submit');
      await ok(act(author.client, cr.id, 'submit'));

      for (const reviewer of [named, member]) {
        const mine = (await notificationsOf(reviewer)).filter((n) => n.object_id === cr.id);
        assert.equal(mine.length, 1, reviewer.username);
        const [n] = mine;
        assert.equal(n.object_type, 'change_control.changerequest');
        assert.equal(n.event_type, 'change_request_review_requested');
        assert.equal(n.read, false);
        assert.match(n.object_repr, /Change notify/);
      }
      assert.deepEqual(
        (await notificationsOf(author)).filter((n) => n.object_id === cr.id),
        [],
        'the author is not asked to review their own request',
      );
      assert.deepEqual(
        (await notificationsOf(outsider)).filter((n) => n.object_id === cr.id),
        [],
        'not eligible',
      );
      const inactiveRows = await svc.host.db
        .selectFrom('notifications')
        .selectAll()
        .where('user_id', '=', inactive.id)
        .execute();
      assert.deepEqual(inactiveRows, [], 'inactive users are not notified');
    });

    it('Events 4: a reviewer who already reviewed while it was a draft is not outstanding and not notified', async () => {
      const cr = await submitted('prereviewed');
      expectStatus(await review(named.client, cr.id, 'approve'), 201);
      await ok(act(author.client, cr.id, 'submit'));
      assert.deepEqual(
        (await notificationsOf(named)).filter((n) => n.object_id === cr.id),
        [],
      );
      assert.equal((await notificationsOf(member)).filter((n) => n.object_id === cr.id).length, 1);
    });

    it('Events 4 (My Reviews): change-requests/?reviewer=me lists requests under review waiting for the caller; drafts, reviewed and satisfied ones are not listed', async () => {
      const draft = await submitted('mine-draft');
      const waiting = await submitted('mine-waiting');
      await ok(act(author.client, waiting.id, 'submit'));
      assert.ok((await myReviews(named)).includes(waiting.id));
      assert.ok((await myReviews(member)).includes(waiting.id));
      assert.ok(!(await myReviews(named)).includes(draft.id), 'a draft waits for nobody');
      assert.ok(!(await myReviews(outsider)).includes(waiting.id), 'not eligible');
      assert.ok(!(await myReviews(author)).includes(waiting.id), "not one's own request");

      // The same list by user id, as someone allowed to see it.
      const byId = (await ok(svc.admin.get(`${REQUESTS}?reviewer=${member.id}`))).results.map(
        (r: { id: number }) => r.id,
      );
      assert.ok(byId.includes(waiting.id));
      expectStatus(await svc.admin.get(`${REQUESTS}?reviewer=someone`), 400);

      // One approval of two: the approver is done, the other is still waited for.
      expectStatus(await review(named.client, waiting.id, 'approve'), 201);
      assert.ok(!(await myReviews(named)).includes(waiting.id));
      assert.ok((await myReviews(member)).includes(waiting.id));
      // The second approval satisfies the rule: nobody waits any more.
      expectStatus(await review(member.client, waiting.id, 'approve'), 201);
      assert.ok(!(await myReviews(member)).includes(waiting.id));
    });

    it('Events 4: notifications can be marked read by their reviewer', async () => {
      const cr = await submitted('read-it');
      await ok(act(author.client, cr.id, 'submit'));
      const [n] = (await notificationsOf(member)).filter((x) => x.object_id === cr.id);
      const read = await ok(member.client.patch(`${NOTIFICATIONS}${n.id}/`, { read: true }));
      assert.equal(read.read, true);
      expectStatus(await named.client.patch(`${NOTIFICATIONS}${n.id}/`, { read: true }), 404);
    });
  });

  describe('Setting notify_reviewers false', () => {
    const svc = suiteService({ config: { change_control: { notify_reviewers: false } } });

    it('Setting notify_reviewers false: submit notifies nobody; My Reviews still lists the request', async () => {
      const author = await actor(svc, 'author', AUTHOR);
      const reviewer = await actor(svc, 'reviewer', REVIEWER);
      await policy(svc, {
        name: 'Devices',
        object_types: ['dcim.device'],
        rules: [{ name: 'netops', users: [reviewer.id] }],
      });
      const { branch: b, inBranch } = await branch(author.client, 'silent');
      await device(inBranch, { name: 'silent-dev' });
      const cr = await openRequest(author.client, b.id);
      const after = await ok(act(author.client, cr.id, 'submit'));
      assert.equal(after.status, 'needs-review');
      assert.deepEqual(await notificationsOf(reviewer), []);
      assert.deepEqual(await svc.host.db.selectFrom('notifications').selectAll().execute(), []);
      assert.deepEqual(await myReviews(reviewer), [cr.id]);
    });
  });
});

describe('change control: review queues follow eligibility, whatever others decided', () => {
  const svc = suiteService();
  const [author, bob, carol] = actorsForSuite(
    svc,
    ['queue-author', AUTHOR],
    ['queue-bob', REVIEWER],
    ['queue-carol', REVIEWER],
  );
  before(async () => {
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      rules: [
        { name: 'network', min_reviews: 1, users: [bob.id] },
        { name: 'security', min_reviews: 1, users: [carol.id] },
      ],
    });
  });
  const waitingFor = async (a: Actor, id: number) =>
    (await notificationsOf(a)).filter((n) => n.object_id === id && n.event_type === 'change_request_review_requested')
      .length;

  async function submitted(name: string): Promise<{ id: number; inBranch: any; deviceId: number }> {
    const { branch: b, inBranch } = await branch(author.client, name);
    const d = await device(inBranch, { name: `${name}-dev` });
    const cr = await openRequest(author.client, b.id, { title: `Change ${name}` });
    await ok(act(author.client, cr.id, 'submit'));
    return { id: cr.id, inBranch, deviceId: d.id };
  }

  it('Review queues: the only eligible reviewer of an unsatisfied rule keeps the request in reviewer=me after someone else requests changes, and is not notified twice', async () => {
    const cr = await submitted('security-queue');
    assert.equal(await waitingFor(carol, cr.id), 1);
    expectStatus(await review(bob.client, cr.id, 'reject', 'not like this'), 201);
    assert.equal((await ok(author.client.get(`${REQUESTS}${cr.id}/`))).status, 'rejected');
    assert.ok((await myReviews(carol)).includes(cr.id), "carol's queue keeps it");
    assert.ok(!(await myReviews(bob)).includes(cr.id), "bob reviewed: it left bob's queue");
    assert.equal(await waitingFor(carol, cr.id), 1, 'still one notification: it never stopped waiting for her');
    const evaluation = await ok(author.client.get(`${REQUESTS}${cr.id}/evaluation/`));
    const security = evaluation.policies[0].rules.find((r: any) => r.name === 'security');
    assert.deepEqual(
      security.outstanding_reviewers.map((u: any) => u.id),
      [carol.id],
    );
  });

  it('Review queues: a reviewer whose review went stale (the branch changed) is waited for again and told so', async () => {
    const cr = await submitted('stale-queue');
    expectStatus(await review(bob.client, cr.id, 'approve'), 201);
    assert.ok(!(await myReviews(bob)).includes(cr.id));
    assert.equal(await waitingFor(bob, cr.id), 1);
    expectStatus(await cr.inBranch.patch(`/api/dcim/devices/${cr.deviceId}/`, { status: 'planned' }), 200);
    assert.ok((await myReviews(bob)).includes(cr.id), 'the stale approval puts it back in the queue');
    assert.equal(await waitingFor(bob, cr.id), 2, 'a new notification: it waits for bob again');
    assert.equal(await waitingFor(carol, cr.id), 1, 'carol was waited for all along');
  });
});

describe('change control: the requester is notified when their request is approved, rejected or merged', () => {
  const svc = suiteService();
  const [author, reviewer, second] = actorsForSuite(
    svc,
    ['requester', [...AUTHOR, { object_types: ['branching.branch'], actions: ['merge'] }]],
    ['approver', REVIEWER],
    ['second', REVIEWER],
  );
  before(async () => {
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      rules: [{ name: 'netops', min_reviews: 1, users: [reviewer.id, second.id] }],
    });
  });

  async function submittedRequest(name: string): Promise<{ id: number; branchId: number }> {
    const { branch: b, inBranch } = await branch(author.client, name);
    await device(inBranch, { name: `${name}-dev` });
    const cr = await openRequest(author.client, b.id, { title: `Change ${name}` });
    await ok(act(author.client, cr.id, 'submit'));
    return { id: cr.id, branchId: b.id };
  }
  const eventsFor = async (id: number): Promise<string[]> =>
    (await notificationsOf(author))
      .filter((n) => n.object_id === id)
      .map((n) => n.event_type)
      .sort();

  it('approved: one notification for the transition; a second approval (no transition) adds none', async () => {
    const cr = await submittedRequest('req-approved');
    assert.deepEqual(await eventsFor(cr.id), []);
    expectStatus(await review(reviewer.client, cr.id, 'approve'), 201);
    assert.deepEqual(await eventsFor(cr.id), ['change_request_approved']);
    expectStatus(await review(second.client, cr.id, 'approve'), 201);
    assert.deepEqual(await eventsFor(cr.id), ['change_request_approved']);
    const [n] = (await notificationsOf(author)).filter((x) => x.object_id === cr.id);
    assert.equal(n.object_type, 'change_control.changerequest');
    assert.match(n.object_repr, /Change req-approved/);
  });

  it('rejected: the requester hears of it; the reviewer does not', async () => {
    const cr = await submittedRequest('req-rejected');
    expectStatus(await review(reviewer.client, cr.id, 'reject', 'not like this'), 201);
    assert.deepEqual(await eventsFor(cr.id), ['change_request_rejected']);
    assert.deepEqual(
      (await notificationsOf(reviewer)).filter(
        (n) => n.object_id === cr.id && n.event_type === 'change_request_rejected',
      ),
      [],
    );
  });

  it('merged by someone else: change_request_completed; merged by the requester: no notification of their own action', async () => {
    const byAdmin = await submittedRequest('req-merged');
    expectStatus(await review(reviewer.client, byAdmin.id, 'approve'), 201);
    expectStatus(
      await svc.admin.post(`/api/plugins/branching/branches/${byAdmin.branchId}/merge/`, { commit: true }),
      200,
    );
    assert.deepEqual(await eventsFor(byAdmin.id), ['change_request_approved', 'change_request_completed']);
    const own = await submittedRequest('req-own-merge');
    expectStatus(await review(reviewer.client, own.id, 'approve'), 201);
    expectStatus(
      await author.client.post(`/api/plugins/branching/branches/${own.branchId}/merge/`, { commit: true }),
      200,
    );
    assert.deepEqual(await eventsFor(own.id), ['change_request_approved']);
  });

  it('merged by an override: the requester is told it was overridden (change_request_overridden), not that it merged', async () => {
    const overridden = await submittedRequest('req-overridden');
    const carol = await actor(svc, 'carol-override', [
      ...AUTHOR,
      { object_types: ['branching.branch'], actions: ['merge'] },
      { object_types: ['change_control.gate'], actions: ['override'] },
    ]);
    await ok(
      carol.client.post(`${REQUESTS}${overridden.id}/override/`, { reason: 'Outage fix; the reviewer is on leave' }),
    );
    assert.deepEqual(await eventsFor(overridden.id), ['change_request_overridden']);
  });
});
