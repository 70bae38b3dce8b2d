import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import { actor, CC_TYPES, created, expectStatus, ok, POLICIES, policy, REQUESTS, REVIEWS, RULES } from './fixtures';
import { ids } from './requests-support';
import { postReview, scene, world } from './reviews-comments-fixtures';

const TAGS = '/api/extras/tags/';

describe('tags: /api/extras/tags/ and tags on policies, rules, change requests and reviews', () => {
  const svc = suiteService();
  let urgent: { id: number; slug: string };
  let network: { id: number; slug: string };
  before(async () => {
    urgent = await created(svc.admin.post(TAGS, { name: 'Urgent', slug: 'urgent', color: 'FF0000' }));
    network = await created(svc.admin.post(TAGS, { name: 'Network', slug: 'network' }));
  });

  it('tags are a resource of their own: unique name and slug, a six-digit color, permissions extras.*_tag', async () => {
    const got = await ok(svc.admin.get(`${TAGS}${urgent.id}/`));
    assert.deepEqual(
      { name: got.name, slug: got.slug, color: got.color, display: got.display },
      { name: 'Urgent', slug: 'urgent', color: 'ff0000', display: 'Urgent' },
    );
    expectStatus(await svc.admin.post(TAGS, { name: 'Urgent', slug: 'other' }), 400);
    expectStatus(await svc.admin.post(TAGS, { name: 'Other', slug: 'urgent' }), 400);
    expectStatus(await svc.admin.post(TAGS, { name: 'Bad', slug: 'bad', color: '#fff' }), 400);
    const nobody = await actor(svc, 'no-tags', [{ object_types: CC_TYPES, actions: ['view'] }]);
    expectStatus(await nobody.client.get(TAGS), 403);
    expectStatus(await nobody.client.post(TAGS, { name: 'X', slug: 'x' }), 403);
    assert.deepEqual(ids(await svc.admin.get(`${TAGS}?q=netw`)), [network.id]);
  });

  it('policies and rules take tags by id, name, {name} or {slug}, show them as {id, url, display, name, slug, color}, and filter by tag', async () => {
    const p = await created(svc.admin.post(POLICIES, { name: 'Tagged', tags: [urgent.id, 'Network'] }));
    assert.deepEqual(
      p.tags.map((t: { slug: string }) => t.slug),
      ['network', 'urgent'],
    );
    assert.deepEqual(Object.keys(p.tags[0]).sort(), ['color', 'display', 'id', 'name', 'slug', 'url']);
    const plain = await policy(svc, { name: 'Plain' });
    const r = await created(svc.admin.post(RULES, { policy: p.id, name: 'tagged rule', tags: [{ slug: 'urgent' }] }));
    assert.deepEqual(
      r.tags.map((t: { name: string }) => t.name),
      ['Urgent'],
    );
    assert.deepEqual(ids(await svc.admin.get(`${POLICIES}?tag=network`)), [p.id]);
    assert.deepEqual(ids(await svc.admin.get(`${RULES}?tag=urgent`)), [r.id]);
    const patched = await ok(svc.admin.patch(`${POLICIES}${plain.id}/`, { tags: [{ name: 'Urgent' }] }));
    assert.deepEqual(
      patched.tags.map((t: { slug: string }) => t.slug),
      ['urgent'],
    );
    const unknown = await svc.admin.patch(`${POLICIES}${plain.id}/`, { tags: ['Nope', 99999] });
    expectStatus(unknown, 400);
    assert.equal(unknown.body.tags.length, 2, JSON.stringify(unknown.body));
    const cleared = await ok(svc.admin.patch(`${POLICIES}${plain.id}/`, { tags: [] }));
    assert.deepEqual(cleared.tags, []);
  });

  it('change requests and reviews carry tags; the lists filter by tag; deleting a tag removes it everywhere', async () => {
    const w = await world(svc);
    const s = await scene(w);
    const other = await scene(w);
    const cr = await ok(w.alice.client.patch(`${REQUESTS}${s.cr.id}/`, { tags: ['Urgent'] }));
    assert.deepEqual(
      cr.tags.map((t: { slug: string }) => t.slug),
      ['urgent'],
    );
    assert.deepEqual(ids(await svc.admin.get(`${REQUESTS}?tag=urgent`)), [s.cr.id]);
    assert.deepEqual(ids(await svc.admin.get(`${REQUESTS}?tag=network`)), []);
    const rev = await created(
      postReview(w.bob.client, {
        change_request: other.cr.id,
        decision: 'comment',
        comment: 'x',
        tags: [{ slug: 'network' }],
      }),
    );
    assert.deepEqual(
      rev.tags.map((t: { slug: string }) => t.slug),
      ['network'],
    );
    assert.deepEqual(ids(await svc.admin.get(`${REVIEWS}?tag=network`)), [rev.id]);
    expectStatus(await svc.admin.delete(`${TAGS}${urgent.id}/`), 204);
    assert.deepEqual((await ok(svc.admin.get(`${REQUESTS}${s.cr.id}/`))).tags, []);
    assert.deepEqual(ids(await svc.admin.get(`${REQUESTS}?tag=urgent`)), []);
  });
});
