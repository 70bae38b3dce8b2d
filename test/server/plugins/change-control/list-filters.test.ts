import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import {
  ccDb,
  CC_TYPES,
  CHECKS,
  COMMENTS,
  created,
  expectStatus,
  group,
  ok,
  POLICIES,
  policy,
  REQUESTS,
  REVIEWS,
  RULES,
  actor,
  type Actor,
  actorsForSuite,
} from './fixtures';
import { ids } from './requests-support';
import { editInBranch, postReview, reply, rootComment, scene, world } from './reviews-comments-fixtures';
import { forSuite } from '../../../support/prepared';

const sorted = (list: number[]): number[] => [...list].sort((a, b) => a - b);

async function listIds(client: { get(path: string): Promise<any> }, path: string, query: string): Promise<number[]> {
  return sorted(ids(await client.get(`${path}?limit=1000&${query}`)));
}

describe('list filters: policies and rules', () => {
  const svc = suiteService();
  const [member, outsider] = actorsForSuite(
    svc,
    ['member', [{ object_types: CC_TYPES, actions: ['view'] }]],
    ['outsider', []],
  );
  const p: Record<string, number> = {};
  const r: Record<string, number> = {};
  let viewer: Actor;
  before(async () => {
    // Sees policies and rules, but no user.
    viewer = await actor(svc, 'viewer', [{ object_types: CC_TYPES, actions: ['view'] }]);
    const netops = await group(svc, 'netops', [member.id]);
    const light = await policy(svc, {
      name: 'Light',
      weight: 10,
      object_types: ['dcim.device'],
      rules: [{ name: 'one', min_reviews: 1, users: [outsider.id] }],
    });
    const heavy = await policy(svc, {
      name: 'Heavy',
      weight: 100,
      object_types: ['dcim.site'],
      conditions: { attr: 'status', value: 'active' },
      condition_state: 'after',
      checks: ['ext/build'],
      rules: [{ name: 'three', min_reviews: 3, groups: [netops] }],
    });
    const middle = await policy(svc, {
      name: 'Middle',
      weight: 50,
      object_types: ['dcim.device', 'ipam.prefix'],
      rules: [{ name: 'two', min_reviews: 2, users: [member.id] }],
    });
    Object.assign(p, { light: light.id, heavy: heavy.id, middle: middle.id });
    Object.assign(r, { one: light.rules[0]!.id, three: heavy.rules[0]!.id, two: middle.rules[0]!.id });
  });

  it('policies: weight, and its ranges (__gte, __lte, __gt, __lt)', async () => {
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'weight=50'), [p.middle]);
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'weight__gte=50'), sorted([p.middle!, p.heavy!]));
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'weight__lte=50'), sorted([p.light!, p.middle!]));
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'weight__gt=10&weight__lt=100'), [p.middle]);
  });

  it('policies: object_type_id (an id of /api/core/object-types/)', async () => {
    const types = (await ok(svc.admin.get('/api/core/object-types/?limit=1000'))).results as Array<{
      id: number;
      app_label: string;
      model: string;
    }>;
    const idOf = (name: string): number => types.find((t) => `${t.app_label}.${t.model}` === name)!.id;
    assert.deepEqual(
      await listIds(svc.admin, POLICIES, `object_type_id=${idOf('dcim.device')}`),
      sorted([p.light!, p.middle!]),
    );
    assert.deepEqual(await listIds(svc.admin, POLICIES, `object_type_id=${idOf('ipam.prefix')}`), [p.middle]);
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'object_type_id=99999'), []);
  });

  it('policies: condition_state, has_conditions, has_checks', async () => {
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'condition_state=after'), [p.heavy]);
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'has_conditions=true'), [p.heavy]);
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'has_conditions=false'), sorted([p.light!, p.middle!]));
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'has_checks=true'), [p.heavy]);
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'has_checks=false'), sorted([p.light!, p.middle!]));
  });

  it('policies: q searches name and description; malformed values are 400 naming the filter', async () => {
    assert.deepEqual(await listIds(svc.admin, POLICIES, 'q=HEAV'), [p.heavy]);
    for (const [query, name] of [
      ['weight__gte=x', 'weight__gte'],
      ['condition_state=sometimes', 'condition_state'],
      ['has_checks=perhaps', 'has_checks'],
      ['object_type_id=dcim', 'object_type_id'],
      ['weight__between=1', 'weight__between'],
    ]) {
      const res = await svc.admin.get(`${POLICIES}?${query}`);
      assert.equal(res.status, 400, query);
      assert.ok(Array.isArray(res.body[name!]), `${query}: ${JSON.stringify(res.body)}`);
    }
  });

  it('rules: min_reviews and its ranges', async () => {
    assert.deepEqual(await listIds(svc.admin, RULES, 'min_reviews=2'), [r.two]);
    assert.deepEqual(await listIds(svc.admin, RULES, 'min_reviews__gte=2'), sorted([r.two!, r.three!]));
    assert.deepEqual(await listIds(svc.admin, RULES, 'min_reviews__lt=3'), sorted([r.one!, r.two!]));
  });

  it('rules: eligible_for a user: rules naming them or one of their groups; "me" is the caller', async () => {
    assert.deepEqual(await listIds(svc.admin, RULES, `eligible_for=${member.id}`), sorted([r.two!, r.three!]));
    assert.deepEqual(await listIds(svc.admin, RULES, `eligible_for=${outsider.id}`), [r.one]);
    assert.deepEqual(await listIds(member.client, RULES, 'eligible_for=me'), sorted([r.two!, r.three!]));
  });

  it('rules: eligible_for never reveals the groups of a user the caller may not view', async () => {
    // The viewer sees rules (and whom they name) but no user: membership of netops is not counted.
    assert.deepEqual(await listIds(viewer.client, RULES, `eligible_for=${member.id}`), [r.two]);
  });
});

describe('list filters: change requests', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));
  const a = forSuite(() => scene(w));
  const b = forSuite(() => scene(w, { submit: false }));
  const c = forSuite(() => scene(w));
  let blind: Actor;
  before(async () => {
    await ok(
      w.alice.client.patch(`${REQUESTS}${a.cr.id}/`, { title: 'Replace Core routers', description: 'Old hardware' }),
    );
    await ok(
      w.alice.client.patch(`${REQUESTS}${b.cr.id}/`, {
        title: 'Add edge',
        description: 'New racks in the core room',
        scheduled_start: '2030-01-01T10:00:00Z',
        scheduled_end: '2030-01-01T12:00:00Z',
      }),
    );
    await ok(svc.admin.patch(`${REQUESTS}${c.cr.id}/`, { auto_merge: true, scheduled_end: '2030-02-01T00:00:00Z' }));
    expectStatus(
      await postReview(w.bob.client, { change_request: a.cr.id, decision: 'comment', comment: 'looks fine' }),
      201,
    );
    await rootComment(c, w.bob.client, 'Why?');
    // A user who sees change requests but no device: threads on devices are hidden from them.
    blind = await actor(svc, 'blind', [
      { object_types: CC_TYPES, actions: ['view'] },
      { object_types: ['branching.branch', 'branching.changediff'], actions: ['view'] },
    ]);
  });

  it('title and description: case-insensitive substrings', async () => {
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'title=core'), [a.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'description=CORE'), [b.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'q=core'), sorted([a.cr.id, b.cr.id]));
  });

  it('auto_merge, has_window and the scheduled_start / scheduled_end ranges', async () => {
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'auto_merge=true'), [c.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'auto_merge=false'), sorted([a.cr.id, b.cr.id]));
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'has_window=true'), sorted([b.cr.id, c.cr.id]));
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'has_window=false'), [a.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'scheduled_start__gte=2029-12-31T00:00:00Z'), [b.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'scheduled_end__gte=2030-01-15T00:00:00Z'), [c.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'scheduled_end__lte=2030-01-15T00:00:00Z'), [b.cr.id]);
    const bad = await svc.admin.get(`${REQUESTS}?scheduled_start__gte=tomorrow`);
    assert.equal(bad.status, 400);
    assert.ok(bad.body.scheduled_start__gte);
  });

  it('branch (by name, also once the branch is deleted) and branch_deleted', async () => {
    const name = (await ok(svc.admin.get(`${REQUESTS}${b.cr.id}/`))).branch_name as string;
    assert.deepEqual(await listIds(svc.admin, REQUESTS, `branch=${encodeURIComponent(name)}`), [b.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'branch_deleted=true'), []);
    await ccDb(svc).updateTable('cc_change_requests').set({ branch_deleted: 1 }).where('id', '=', b.cr.id).execute();
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'branch_deleted=true'), [b.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, `branch=${encodeURIComponent(name)}`), [b.cr.id]);
    await ccDb(svc).updateTable('cc_change_requests').set({ branch_deleted: 0 }).where('id', '=', b.cr.id).execute();
  });

  it('policy_id: requests a policy governs', async () => {
    assert.deepEqual(
      await listIds(svc.admin, REQUESTS, `policy_id=${w.policyId}`),
      sorted([a.cr.id, b.cr.id, c.cr.id]),
    );
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'policy_id=99999'), []);
  });

  it('has_reviews and has_open_threads', async () => {
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'has_reviews=true'), [a.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'has_reviews=false'), sorted([b.cr.id, c.cr.id]));
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'has_open_threads=true'), [c.cr.id]);
    assert.deepEqual(await listIds(svc.admin, REQUESTS, 'has_open_threads=false'), sorted([a.cr.id, b.cr.id]));
  });

  it('has_open_threads counts only threads the caller may see', async () => {
    assert.deepEqual(await listIds(blind.client, REQUESTS, 'has_open_threads=true'), []);
    assert.deepEqual(
      await listIds(blind.client, REQUESTS, 'has_open_threads=false'),
      sorted([a.cr.id, b.cr.id, c.cr.id]),
    );
  });

  it('orders by branch and scheduled_end; brief and fields shape the results', async () => {
    const brief = (await ok(svc.admin.get(`${REQUESTS}?brief=true&ordering=branch`))).results;
    assert.deepEqual(Object.keys(brief[0]).sort(), ['display', 'id', 'url']);
    const fields = (await ok(svc.admin.get(`${REQUESTS}?fields=id,status&ordering=-scheduled_end`))).results;
    assert.deepEqual(Object.keys(fields[0]).sort(), ['id', 'status']);
  });
});

describe('list filters: checks, reviews and comments', () => {
  const svc = suiteService({
    config: { change_control: { required_external_checks: [['ext/build', 'Build pipeline']] } },
  });
  const w = forSuite(() => world(svc, { checks: ['ext/lint'] }));
  const s = forSuite(() => scene(w));
  const other = forSuite(() => scene(w));

  it('checks: label and summary (substrings), required and blocks_merge as the API shows them', async () => {
    const all = (await ok(svc.admin.get(`${CHECKS}?limit=1000&change_request_id=${s.cr.id}`))).results as Array<{
      id: number;
      name: string;
      required: boolean;
      blocks_merge: boolean;
    }>;
    const build = all.find((c) => c.name === 'ext/build')!;
    await ok(svc.admin.patch(`${CHECKS}${build.id}/`, { status: 'success', summary: 'All 12 jobs passed' }));
    const now = (await ok(svc.admin.get(`${CHECKS}?limit=1000&change_request_id=${s.cr.id}`))).results as typeof all;
    const q = (extra: string) => listIds(svc.admin, CHECKS, `change_request_id=${s.cr.id}&${extra}`);
    assert.deepEqual(await q('label=pipeline'), [build.id]);
    assert.deepEqual(await q('summary=12 JOBS'), [build.id]);
    assert.deepEqual(await q('required=true'), sorted(now.filter((c) => c.required).map((c) => c.id)));
    assert.deepEqual(await q('required=false'), sorted(now.filter((c) => !c.required).map((c) => c.id)));
    assert.deepEqual(await q('blocks_merge=true'), sorted(now.filter((c) => c.blocks_merge).map((c) => c.id)));
    assert.deepEqual(await q('blocks_merge=false'), sorted(now.filter((c) => !c.blocks_merge).map((c) => c.id)));
    assert.ok(
      now.some((c) => c.required) && now.some((c) => c.blocks_merge) && now.some((c) => c.required && !c.blocks_merge),
    );
  });

  it('reviews: by author, decision, stale, and creation time ranges', async () => {
    const t0 = svc.clock.now().toISOString();
    const first = await created(postReview(w.bob.client, { change_request: s.cr.id, decision: 'approve' }));
    svc.clock.advance(60_000);
    const t1 = svc.clock.now().toISOString();
    const second = await created(
      postReview(w.carol.client, { change_request: other.cr.id, decision: 'comment', comment: 'hm' }),
    );
    await editInBranch(s);
    const q = (extra: string) => listIds(svc.admin, REVIEWS, extra);
    assert.deepEqual(await q(`author_id=${w.bob.id}`), [first.id]);
    assert.deepEqual(await listIds(w.carol.client, REVIEWS, 'author_id=me'), [second.id]);
    assert.deepEqual(await q('decision=comment'), [second.id]);
    assert.deepEqual(await q('stale=true'), [first.id]);
    assert.deepEqual(await q(`created__gte=${t1}`), [second.id]);
    assert.deepEqual(await q(`created__lt=${t1}&created__gte=${t0}`), [first.id]);
  });

  it('comments: by author, thread, resolved, and creation time ranges', async () => {
    const root = await rootComment(other, w.bob.client, 'Why planned?');
    svc.clock.advance(60_000);
    const t = svc.clock.now().toISOString();
    const answer = await reply(other, w.alice.client, root.id, 'Because.');
    const lone = await rootComment(other, w.carol.client, 'And this?', 1);
    await ok(w.bob.client.patch(`${COMMENTS}${root.id}/`, { resolved: true }));
    const q = (extra: string) => listIds(svc.admin, COMMENTS, `change_request_id=${other.cr.id}&${extra}`);
    assert.deepEqual(await q(`thread=${root.id}`), sorted([root.id, answer.id]));
    assert.deepEqual(await q(`author_id=${w.alice.id}`), [answer.id]);
    assert.deepEqual(await q('resolved=true'), [root.id]);
    assert.deepEqual(await q('resolved=false'), [lone.id]);
    assert.deepEqual(await q(`created__gte=${t}`), sorted([answer.id, lone.id]));
    assert.deepEqual(await q('q=because'), [answer.id]);
  });
});
