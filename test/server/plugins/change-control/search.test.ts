import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import {
  actor,
  AUTHOR,
  branch,
  changesOf,
  CHECKS,
  checkNamed,
  COMMENTS,
  created,
  device,
  expectStatus,
  ok,
  openRequest,
  policy,
  review,
  REVIEWER,
  type Actor,
  ccDb,
  actorsForSuite,
} from './fixtures';

const SEARCH = '/api/search/';

interface Hit {
  object_type: string;
  id: number;
  display: string;
  url: string;
  field: string;
  value: string;
}

async function search(a: { client: Actor['client'] } | Actor, q: string): Promise<Hit[]> {
  return (await ok(a.client.get(`${SEARCH}?q=${encodeURIComponent(q)}&limit=1000`), `search ${q}`)).results;
}

describe('change control: search (contract 3.5, /api/search/)', () => {
  const svc = suiteService({
    config: { change_control: { required_external_checks: [['ci/lint', 'Lint pipeline']] } },
  });
  const [author, reviewer] = actorsForSuite(svc, ['author', AUTHOR], ['reviewer', REVIEWER]);
  let cr: any;
  let policyId: number;
  let ruleId: number;
  let reviewId: number;
  let commentId: number;
  let checkId: number;
  before(async () => {
    const p = await policy(svc, {
      name: 'Firewall governance',
      object_types: ['dcim.device'],
      rules: [{ name: 'security-approvers', users: [reviewer.id] }],
    });
    policyId = p.id;
    ruleId = p.rules[0]!.id;
    const { branch: b, inBranch } = await branch(author.client, 'edge-upgrade');
    await device(inBranch, { name: 'edge1' });
    cr = await openRequest(author.client, b.id, {
      ref: 'CHG-4711',
      title: 'Upgrade the edge routers',
      description: 'Replaces the line cards in both chassis.',
    });
    await ok(author.client.post(`/api/plugins/change-control/change-requests/${cr.id}/submit/`, {}));
    const r = await review(reviewer.client, cr.id, 'comment', 'Please double-check the ACL ordering.');
    expectStatus(r, 201);
    reviewId = r.body.id;
    const change = (await changesOf(svc, b.id))[0];
    commentId = (
      await created(
        reviewer.client.post(COMMENTS, {
          change_request: cr.id,
          change_diff: change.id,
          text: 'Why does this need a maintenance window?',
        }),
      )
    ).id;
    const ci = await checkNamed(svc.admin, cr.id, 'ci/lint');
    checkId = ci.id;
    await ok(svc.admin.patch(`${CHECKS}${ci.id}/`, { status: 'failure', summary: 'flake8 found 3 problems' }));
  });

  function hitOf(hits: Hit[], objectType: string, id: number): Hit {
    const hit = hits.find((h) => h.object_type === objectType && h.id === id);
    assert.ok(hit, `${objectType} ${id} among ${JSON.stringify(hits)}`);
    return hit;
  }

  it('Search: finds a change request by ref, title, branch name and description, naming the field and value', async () => {
    const cases: Array<[string, string, string]> = [
      ['CHG-4711', 'ref', 'CHG-4711'],
      ['edge routers', 'title', 'Upgrade the edge routers'],
      ['edge-upgrade', 'branch_name', 'edge-upgrade'],
      ['line cards', 'description', 'Replaces the line cards in both chassis.'],
    ];
    for (const [q, field, value] of cases) {
      const hit = hitOf(await search(author, q), 'change_control.changerequest', cr.id);
      assert.equal(hit.field, field, q);
      assert.equal(hit.value, value, q);
      assert.equal(hit.display, 'CHG-4711: Upgrade the edge routers');
      assert.equal(hit.url, `${svc.url}/api/plugins/change-control/change-requests/${cr.id}/`);
      assert.deepEqual(Object.keys(hit).sort(), ['display', 'field', 'id', 'object_type', 'url', 'value']);
    }
  });

  it('Search: is case-insensitive and matches parts of words', async () => {
    hitOf(await search(author, 'chg-47'), 'change_control.changerequest', cr.id);
    hitOf(await search(author, 'UPGRADE'), 'change_control.changerequest', cr.id);
  });

  /** Searching `q` finds object `id` of `objectType` (at `path`/`id`/ of the plugin's API) with the fields `expected`. */
  async function expectHit(
    q: string,
    objectType: string,
    id: number,
    path: string,
    expected: Partial<Hit>,
  ): Promise<void> {
    const hit = hitOf(await search(author, q), objectType, id);
    assert.deepEqual({ ...hit, ...expected }, hit, q);
    assert.equal(hit.url, `${svc.url}/api/plugins/change-control/${path}/${id}/`, q);
  }

  it('Search: finds policies and rules by name', async () => {
    await expectHit('firewall gov', 'change_control.policy', policyId, 'policies', {
      field: 'name',
      display: 'Firewall governance',
    });
    await expectHit('security-approvers', 'change_control.policyrule', ruleId, 'policy-rules', { field: 'name' });
  });

  it('Search: finds review and comment texts', async () => {
    await expectHit('ACL ordering', 'change_control.review', reviewId, 'reviews', {
      field: 'comment',
      value: 'Please double-check the ACL ordering.',
    });
    await expectHit('maintenance window', 'change_control.changecomment', commentId, 'change-comments', {
      field: 'text',
    });
  });

  it('Search: finds checks by name, label and summary', async () => {
    await expectHit('ci/lint', 'change_control.mergecheck', checkId, 'checks', {
      field: 'name',
      display: 'Lint pipeline',
    });
    await expectHit('lint pipe', 'change_control.mergecheck', checkId, 'checks', { field: 'label' });
    await expectHit('flake8', 'change_control.mergecheck', checkId, 'checks', {
      field: 'summary',
      value: 'flake8 found 3 problems',
    });
  });

  it('Search: case-insensitive beyond ASCII (ÉCOLE is found by école and the other way round)', async () => {
    const { branch: b, inBranch } = await branch(author.client, 'unicode');
    await device(inBranch, { name: 'u1' });
    const upper = await openRequest(author.client, b.id, { title: 'Câblage ÉCOLE Zürich' });
    for (const q of ['école', 'ÉCOLE', 'ZÜRICH', 'câblage']) {
      assert.ok(
        (await search(author, q)).some(
          (h) => h.id === upper.id && h.object_type === 'change_control.changerequest' && h.field === 'title',
        ),
        q,
      );
    }
  });

  it('Search: honours view permissions: a model the caller may not view yields nothing', async () => {
    const policiesOnly = await actor(svc, 'policies-only', [
      { object_types: ['change_control.policy'], actions: ['view'] },
    ]);
    assert.deepEqual(await search(policiesOnly, 'CHG-4711'), []);
    assert.deepEqual(await search(policiesOnly, 'ACL ordering'), []);
    assert.deepEqual(await search(policiesOnly, 'flake8'), []);
    assert.equal((await search(policiesOnly, 'firewall')).length, 1);
    const nobody = await actor(svc, 'nobody', []);
    assert.deepEqual(await search(nobody, 'edge'), []);
    expectStatus(await svc.anonymous.get(`${SEARCH}?q=edge`), 403);
  });

  it('Search: honours view constraints: a caller limited to their own change requests finds only those', async () => {
    const own = await actor(svc, 'own-only', [
      ...AUTHOR.filter((g) => !g.object_types.includes('change_control.changerequest')),
      { object_types: ['change_control.changerequest'], actions: ['view', 'add'], constraints: { requester: '$user' } },
    ]);
    const { branch: b, inBranch } = await branch(own.client, 'edge-mine');
    await device(inBranch, { name: 'edge-mine-1' });
    const mine = await openRequest(own.client, b.id, { title: 'My edge tweak' });
    const hits = (await search(own, 'edge')).filter((h) => h.object_type === 'change_control.changerequest');
    assert.deepEqual(
      hits.map((h) => h.id),
      [mine.id],
    );
    // Someone else's request stays hidden even when it matches.
    assert.deepEqual(
      (await search(own, 'CHG-4711')).filter((h) => h.object_type === 'change_control.changerequest'),
      [],
    );
  });

  it('Search: a constrained caller still finds a visible match behind many hidden ones', async () => {
    const own = await actor(svc, 'late-finder', [
      ...AUTHOR.filter((g) => !g.object_types.includes('change_control.changerequest')),
      { object_types: ['change_control.changerequest'], actions: ['view', 'add'], constraints: { requester: '$user' } },
    ]);
    const { branch: b } = await branch(own.client, 'needle-branch');
    const mine = await openRequest(own.client, b.id, { title: 'needle in a haystack' });
    // Many newer matching requests the caller may not see.
    const now = svc.clock.now().toISOString();
    const rows = Array.from({ length: 60 }, (_, i) => ({
      branch_id: null,
      branch_name: `gone-${i}`,
      branch_deleted: 1,
      title: `needle ${i}`,
      description: '',
      ref: '',
      status: 'abandoned' as const,
      priority: 'medium' as const,
      requester_id: author.id,
      scheduled_start: null,
      scheduled_end: null,
      auto_merge: 0,
      comments: '',
      approved: 0,
      gates_cleared: 0,
      has_conflicts: 0,
      created: now,
      last_updated: now,
    }));
    await ccDb(svc).insertInto('cc_change_requests').values(rows).execute();
    const res = await ok(own.client.get(`${SEARCH}?q=needle&limit=2`));
    assert.deepEqual(
      res.results.filter((h: Hit) => h.object_type === 'change_control.changerequest').map((h: Hit) => h.id),
      [mine.id],
    );
    // Hidden matches do not make the answer look capped.
    assert.equal(res.truncated, false);
  });

  it('Search: truncated says when more results matched than limit returned (across models), and only counts what the caller may view', async () => {
    const capped = await ok(svc.admin.get(`${SEARCH}?q=edge&limit=1`));
    assert.deepEqual([capped.results.length, capped.truncated], [1, true]);
    const all = await ok(svc.admin.get(`${SEARCH}?q=edge&limit=1000`));
    assert.equal(all.truncated, false);
    assert.ok(all.results.length > 1);
    const exact = await ok(svc.admin.get(`${SEARCH}?q=edge&limit=${all.results.length}`));
    assert.deepEqual([exact.results.length, exact.truncated], [all.results.length, false]);
    const fewer = await ok(svc.admin.get(`${SEARCH}?q=edge&limit=${all.results.length - 1}`));
    assert.deepEqual([fewer.results.length, fewer.truncated], [all.results.length - 1, true]);
    // One request matches "CHG-4711"; a caller who sees it finds it, uncapped.
    const one = await ok(reviewer.client.get(`${SEARCH}?q=CHG-4711&limit=1`));
    assert.deepEqual([one.results.length, one.truncated], [1, false]);
  });

  it('Search: % and _ in the query are plain characters, not wildcards', async () => {
    const { branch: b, inBranch } = await branch(author.client, 'wildcards');
    await device(inBranch, { name: 'wild1' });
    const pct = await openRequest(author.client, b.id, { title: 'Cut 50% of uplinks', ref: 'net_ops-1' });
    const titles = (await search(author, '50%')).map((h) => h.id);
    assert.ok(titles.includes(pct.id), 'finds a literal percent sign');
    assert.deepEqual(
      (await search(author, '0%o')).filter((h) => h.object_type === 'change_control.changerequest'),
      [],
      '% matches only itself',
    );
    assert.ok((await search(author, 'net_ops')).some((h) => h.id === pct.id && h.field === 'ref'));
    assert.deepEqual(
      (await search(author, 'netxops')).filter((h) => h.object_type === 'change_control.changerequest'),
      [],
    );
    assert.deepEqual(
      (await search(author, 'cu_ 50')).filter((h) => h.id === pct.id),
      [],
      '_ matches only itself',
    );
  });

  it('Search: any text is safe to look for: quotes, backslashes, lone wildcards and non-ASCII never yield a 5xx', async () => {
    for (const q of [
      "'",
      '"',
      '\\',
      '%',
      '_',
      '\\%',
      "'; drop table cc_change_requests; --",
      'Zürich',
      '🙂',
      'x'.repeat(200),
    ]) {
      const res = await author.client.get(`${SEARCH}?q=${encodeURIComponent(q)}`);
      expectStatus(res, 200, JSON.stringify(q));
      assert.ok(Array.isArray(res.body.results));
    }
    assert.deepEqual(
      (await search(author, '%')).filter((h) => h.object_type === 'change_control.changerequest' && h.id === cr.id),
      [],
      'a lone % is not "everything"',
    );
    expectStatus(await author.client.get(`${SEARCH}?q=${'x'.repeat(201)}`), 400);
  });

  it('Search: q is required (400 naming q)', async () => {
    const res = await author.client.get(SEARCH);
    expectStatus(res, 400);
    assert.ok(res.body.q);
  });
});
