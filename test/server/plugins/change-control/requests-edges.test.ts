import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import {
  act,
  actor,
  actorsForSuite,
  AUTHOR,
  branch,
  detail,
  device,
  expectStatus,
  ok,
  openRequest,
  policy,
  REQUESTS,
  review,
  REVIEWER,
  type Actor,
} from './fixtures';

const NOTIFICATIONS = '/api/extras/notifications/';

describe('change control: request fields at their edges', () => {
  const svc = suiteService();
  const [author] = actorsForSuite(svc, ['author', AUTHOR]);

  it('refuses a change window outside the years 1 to 9999 (UTC) with 400 naming the field', async () => {
    const { branch: b } = await branch(author.client, 'far-future');
    for (const value of ['9999-12-31T23:00:00-05:00', '0000-01-01T00:00:00Z']) {
      const res = await author.client.post(REQUESTS, { branch: b.id, scheduled_start: value });
      expectStatus(res, 400, value);
      assert.ok('scheduled_start' in res.body, JSON.stringify(res.body));
    }
    const cr = await openRequest(author.client, b.id, { scheduled_start: '9999-12-31T18:00:00-05:00' });
    assert.equal(cr.scheduled_start, '9999-12-31T23:00:00.000Z');
  });

  it('PUT is a full write: a field left out takes its default, the title the branch name', async () => {
    const { branch: b } = await branch(author.client, 'replaced');
    const cr = await openRequest(author.client, b.id, {
      title: 'Custom',
      ref: 'CHG-9',
      priority: 'critical',
      auto_merge: true,
      comments: 'note',
    });
    const put = await ok(author.client.put(`${REQUESTS}${cr.id}/`, { description: 'only this' }));
    assert.deepEqual(
      {
        title: put.title,
        ref: put.ref,
        priority: put.priority,
        auto_merge: put.auto_merge,
        comments: put.comments,
        description: put.description,
      },
      { title: 'replaced', ref: '', priority: 'medium', auto_merge: false, comments: '', description: 'only this' },
    );
  });

  it('orders by priority by severity (low, medium, high, critical), either way', async () => {
    const ids: Record<string, number> = {};
    for (const priority of ['high', 'low', 'critical', 'medium']) {
      const { branch: b } = await branch(author.client, `prio-${priority}`);
      ids[priority] = (await openRequest(author.client, b.id, { priority, ref: 'PRIO' })).id;
    }
    const up = await ok(author.client.get(`${REQUESTS}?ref=PRIO&ordering=priority`));
    assert.deepEqual(
      up.results.map((r: any) => r.priority),
      ['low', 'medium', 'high', 'critical'],
    );
    const down = await ok(author.client.get(`${REQUESTS}?ref=PRIO&ordering=-priority`));
    assert.deepEqual(
      down.results.map((r: any) => r.id),
      [ids.critical, ids.high, ids.medium, ids.low],
    );
  });
});

describe('change control: who waits to review, and who is told', () => {
  const svc = suiteService();
  const [author, commenter, approver] = actorsForSuite(
    svc,
    ['author', AUTHOR],
    ['commenter', REVIEWER],
    ['approver', REVIEWER],
  );
  let blind: Actor;
  before(async () => {
    // Named by the rule but unable to see change requests of this ref.
    blind = await actor(svc, 'blind', [
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: 'SOMETHING-ELSE' } },
      { object_types: ['change_control.review'], actions: ['add'] },
    ]);
    await policy(svc, {
      name: 'Devices',
      object_types: ['dcim.device'],
      rules: [{ name: 'two', min_reviews: 3, users: [commenter.id, approver.id, blind.id] }],
    });
  });

  it('keeps a reviewer who only commented in "waiting for my review"; one who approved leaves it', async () => {
    const { branch: b, inBranch } = await branch(author.client, 'queue');
    await device(inBranch, { name: 'queue-dev' });
    const cr = await openRequest(author.client, b.id, { ref: 'CHG-1' });
    await ok(act(author.client, cr.id, 'submit'));
    expectStatus(await review(commenter.client, cr.id, 'comment', 'A question first.'), 201);
    expectStatus(await review(approver.client, cr.id, 'approve'), 201);
    const waiting = async (a: Actor) =>
      (await ok(a.client.get(`${REQUESTS}?reviewer=me`))).results.map((r: any) => r.id);
    assert.deepEqual(await waiting(commenter), [cr.id]);
    assert.deepEqual(await waiting(approver), []);
    const panel = await ok(author.client.get(`${REQUESTS}${cr.id}/evaluation/`));
    assert.deepEqual(panel.policies[0].rules[0].outstanding_reviewers.map((u: any) => u.username).sort(), [
      'blind',
      'commenter',
    ]);
    assert.equal((await detail(author.client, cr.id)).status, 'needs-review');
  });

  it('notifies on submit only the outstanding reviewers who may open the request', async () => {
    const { branch: b, inBranch } = await branch(author.client, 'told');
    await device(inBranch, { name: 'told-dev' });
    const cr = await openRequest(author.client, b.id, { ref: 'CHG-2' });
    await ok(act(author.client, cr.id, 'submit'));
    const told = async (a: Actor) => (await ok(a.client.get(`${NOTIFICATIONS}?object_id=${cr.id}`))).count;
    assert.equal(await told(commenter), 1);
    assert.equal(await told(approver), 1);
    assert.equal(await told(blind), 0);
  });

  it('says run_checks is not allowed when the change_mergecheck constraint covers other requests only', async () => {
    const { branch: b } = await branch(author.client, 'narrow-checks');
    const cr = await openRequest(author.client, b.id);
    const narrow = await actor(svc, 'narrow', [
      ...REVIEWER,
      {
        object_types: ['change_control.mergecheck'],
        actions: ['change'],
        constraints: { change_request: cr.id + 1000 },
      },
    ]);
    const seen = await detail(narrow.client, cr.id);
    assert.equal(seen.actions.run_checks.allowed, false);
    expectStatus(await narrow.client.post(`${REQUESTS}${cr.id}/run-checks/`, {}), 403);
    const wide = await actor(svc, 'wide', [
      ...REVIEWER,
      { object_types: ['change_control.mergecheck'], actions: ['change'], constraints: { change_request: cr.id } },
    ]);
    assert.equal((await detail(wide.client, cr.id)).actions.run_checks.allowed, true);
  });
});
