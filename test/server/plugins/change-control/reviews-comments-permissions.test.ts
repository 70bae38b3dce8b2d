import assert from 'node:assert/strict';
import { ApiClient, suiteService, type TestService } from '../../../support/service';
import { forSuite } from '../../../support/prepared';
import { createToken } from '../../host/users/fixtures';
import {
  actor,
  COMMENTS,
  created,
  expectMalformedInputRefused,
  expectStatus,
  grant,
  ok,
  REVIEWS,
  type Actor,
  type MalformedInput,
  type PermissionGrant,
} from './fixtures';
import {
  commentsOf,
  postComment,
  postReview,
  reply,
  reviewsOf,
  revokeAll,
  rootComment,
  scene,
  world,
  type Scene,
} from './reviews-comments-fixtures';

/** Seeing everything except the two models under test (their view is granted per test). */
const VIEW_OTHERS: PermissionGrant[] = [
  {
    object_types: [
      'change_control.changerequest',
      'change_control.policy',
      'change_control.policyrule',
      'change_control.mergecheck',
    ],
    actions: ['view'],
  },
  { object_types: ['branching.branch', 'branching.changediff', 'dcim.device'], actions: ['view'] },
];
const REVIEW = 'change_control.review';
const COMMENT = 'change_control.changecomment';

let n = 0;
/** A new user holding exactly `grants` besides seeing the other models. */
async function person(svc: TestService, grants: PermissionGrant[]): Promise<Actor> {
  return actor(svc, `p${++n}`, [...VIEW_OTHERS, ...grants]);
}

/** Replaces everything `who` holds with `grants` (besides seeing the other models). */
async function regrant(svc: TestService, who: Actor, grants: PermissionGrant[]): Promise<void> {
  await revokeAll(svc, who.id);
  for (const g of [...VIEW_OTHERS, ...grants]) await grant(svc, { users: [who.id] }, g);
}

/** A DELETE of `url` by `client` answers `status`; afterwards the object is gone (204) or still there (refused). */
async function expectDeleted(svc: TestService, client: ApiClient, url: string, status: 204 | 403 | 404): Promise<void> {
  expectStatus(await client.delete(url), status, `DELETE ${url}`);
  expectStatus(await svc.admin.get(url), status === 204 ? 404 : 200, 'afterwards');
}

describe('change control: permission matrix of reviews', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  /** A reviewer of the scene's request who is not one of the shared people (their grants change). */
  async function reviewerWithReview(
    s: Scene,
    decision: 'approve' | 'comment' = 'comment',
  ): Promise<{ who: Actor; review: any }> {
    const who = await person(svc, [{ object_types: [REVIEW], actions: ['view', 'add'] }]);
    const r = await created(postReview(who.client, { change_request: s.cr.id, decision, comment: 'first' }));
    return { who, review: r };
  }

  it('create: without add_review, POST reviews/ is 403 and no review exists', async () => {
    const s = await scene(w);
    const who = await person(svc, [{ object_types: [REVIEW], actions: ['view', 'change', 'delete'] }]);
    expectStatus(await postReview(who.client, { change_request: s.cr.id, decision: 'approve' }), 403);
    assert.deepEqual(await reviewsOf(svc, s.cr.id), []);
  });

  it('create: with add_review under a constraint the new review does not satisfy, it is refused (403) and nothing is written', async () => {
    const s = await scene(w);
    const who = await person(svc, [
      { object_types: [REVIEW], actions: ['view', 'add'], constraints: { decision: 'comment' } },
    ]);
    expectStatus(await postReview(who.client, { change_request: s.cr.id, decision: 'approve' }), 403);
    assert.deepEqual(await reviewsOf(svc, s.cr.id), []);
    assert.equal(
      (await ok(svc.admin.get(`/api/plugins/change-control/change-requests/${s.cr.id}/`))).status,
      'needs-review',
    );
    expectStatus(await postReview(who.client, { change_request: s.cr.id, decision: 'comment', comment: 'fine' }), 201);
  });

  it('create: a change request the caller may not see (a view constraint excludes it) is answered like one that does not exist (400 on change_request)', async () => {
    const s = await scene(w);
    const who = await actor(svc, `p${++n}`, [
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { ref: 'NOT-THIS-ONE' } },
      { object_types: [REVIEW], actions: ['view', 'add'] },
    ]);
    const res = await postReview(who.client, { change_request: s.cr.id, decision: 'approve' });
    expectStatus(res, 400);
    assert.ok(res.body.change_request);
    assert.deepEqual(await reviewsOf(svc, s.cr.id), []);
  });

  it('create: with add_review, POST reviews/ is 201 and the reviewer is the caller', async () => {
    const s = await scene(w);
    const who = await person(svc, [{ object_types: [REVIEW], actions: ['add'] }]);
    const res = await postReview(who.client, { change_request: s.cr.id, decision: 'comment', comment: 'ok' });
    expectStatus(res, 201);
    assert.equal(res.body.reviewer.id, who.id);
  });

  it('edit: the author without add_review or change_review is refused (403) and the review is unchanged', async () => {
    const s = await scene(w);
    const { who, review } = await reviewerWithReview(s);
    await regrant(svc, who, [{ object_types: [REVIEW], actions: ['view', 'delete'] }]);
    const res = await who.client.patch(`${REVIEWS}${review.id}/`, { comment: 'second' });
    expectStatus(res, 403);
    assert.match(res.body.detail, /change_review/);
    assert.equal((await ok(svc.admin.get(`${REVIEWS}${review.id}/`))).comment, 'first');
  });

  it('edit: with change_review under a constraint that excludes the review, PATCH and PUT are 404', async () => {
    const s = await scene(w);
    const { who, review } = await reviewerWithReview(s);
    await regrant(svc, who, [
      { object_types: [REVIEW], actions: ['view', 'change'], constraints: { change_request: s.cr.id + 100_000 } },
    ]);
    expectStatus(await who.client.patch(`${REVIEWS}${review.id}/`, { comment: 'second' }), 404);
    expectStatus(await who.client.put(`${REVIEWS}${review.id}/`, { decision: 'comment', comment: 'second' }), 404);
    assert.equal((await ok(svc.admin.get(`${REVIEWS}${review.id}/`))).comment, 'first');
  });

  it('edit: a visible review that the change_review constraint excludes is 403; an edit taking it outside the constraint is 403 and rolled back', async () => {
    const s = await scene(w);
    const { who, review } = await reviewerWithReview(s);
    await regrant(svc, who, [
      { object_types: [REVIEW], actions: ['view'] },
      { object_types: [REVIEW], actions: ['change'], constraints: { decision: 'approve' } },
    ]);
    expectStatus(await who.client.patch(`${REVIEWS}${review.id}/`, { comment: 'second' }), 403);
    await regrant(svc, who, [
      { object_types: [REVIEW], actions: ['view', 'change'], constraints: { decision: 'comment' } },
    ]);
    expectStatus(await who.client.patch(`${REVIEWS}${review.id}/`, { decision: 'approve' }), 403);
    const kept = await ok(svc.admin.get(`${REVIEWS}${review.id}/`));
    assert.equal(kept.decision, 'comment');
    assert.equal(kept.comment, 'first');
    assert.equal(
      (await ok(svc.admin.get(`/api/plugins/change-control/change-requests/${s.cr.id}/`))).status,
      'needs-review',
    );
  });

  it('edit: the author with change_review (and no add_review) edits the review (200)', async () => {
    const s = await scene(w);
    const { who, review } = await reviewerWithReview(s);
    await regrant(svc, who, [{ object_types: [REVIEW], actions: ['view', 'change'] }]);
    const edited = await ok(who.client.patch(`${REVIEWS}${review.id}/`, { comment: 'second' }));
    assert.equal(edited.comment, 'second');
  });

  it('delete: without delete_review, add_review or change_review, the author is refused (403) and the review stays', async () => {
    const s = await scene(w);
    const { who, review } = await reviewerWithReview(s);
    await regrant(svc, who, [{ object_types: [REVIEW], actions: ['view'] }]);
    await expectDeleted(svc, who.client, `${REVIEWS}${review.id}/`, 403);
  });

  it('delete: with delete_review under a constraint that excludes the review, DELETE is 404', async () => {
    const s = await scene(w);
    const { review } = await reviewerWithReview(s);
    const who = await person(svc, [
      { object_types: [REVIEW], actions: ['view', 'delete'], constraints: { reviewer: '$user' } },
    ]);
    await expectDeleted(svc, who.client, `${REVIEWS}${review.id}/`, 404);
  });

  it('delete: its author holding only a delete_review whose constraint excludes the review is refused (403)', async () => {
    const s = await scene(w);
    const { who, review } = await reviewerWithReview(s);
    await regrant(svc, who, [
      { object_types: [REVIEW], actions: ['view'] },
      { object_types: [REVIEW], actions: ['delete'], constraints: { decision: 'reject' } },
    ]);
    await expectDeleted(svc, who.client, `${REVIEWS}${review.id}/`, 403);
  });

  it('Reviews are records: delete_review lets its author withdraw the review (204), and nobody else delete it (403)', async () => {
    const s = await scene(w);
    const { who, review } = await reviewerWithReview(s, 'approve');
    const other = await person(svc, [{ object_types: [REVIEW], actions: ['view', 'delete'] }]);
    await expectDeleted(svc, other.client, `${REVIEWS}${review.id}/`, 403);
    await regrant(svc, who, [{ object_types: [REVIEW], actions: ['view', 'delete'] }]);
    await expectDeleted(svc, who.client, `${REVIEWS}${review.id}/`, 204);
  });

  it('view: a view constraint hides other reviews (absent from the list, 404 on detail)', async () => {
    const s = await scene(w);
    const { review } = await reviewerWithReview(s);
    const who = await person(svc, [
      { object_types: [REVIEW], actions: ['view', 'add'], constraints: { reviewer: '$user' } },
    ]);
    const mine = await created(postReview(who.client, { change_request: s.cr.id, decision: 'comment' }));
    assert.deepEqual(
      (await ok(who.client.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).results.map((r: any) => r.id),
      [mine.id],
    );
    expectStatus(await who.client.get(`${REVIEWS}${review.id}/`), 404);
    expectStatus(await (await person(svc, [])).client.get(REVIEWS), 403);
  });
});

describe('change control: permission matrix of comments', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  async function authorWithComment(s: Scene): Promise<{ who: Actor; comment: any }> {
    const who = await person(svc, [{ object_types: [COMMENT], actions: ['view', 'add'] }]);
    return { who, comment: await rootComment(s, who.client, 'first') };
  }

  it('Authentication rule 2: creating a change comment needs add_changecomment (403 without; nothing written)', async () => {
    const s = await scene(w);
    const who = await person(svc, [{ object_types: [COMMENT], actions: ['view', 'change', 'delete'] }]);
    const res = await postComment(who.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'x' });
    expectStatus(res, 403);
    assert.ok(res.body.detail);
    assert.deepEqual(await commentsOf(svc, s.cr.id), []);
  });

  it('create: with add_changecomment under a constraint the new comment does not satisfy, it is refused (403) and nothing is written', async () => {
    const s = await scene(w);
    const who = await person(svc, [
      { object_types: [COMMENT], actions: ['view', 'add'], constraints: { change_diff: s.changes[1]!.id } },
    ]);
    expectStatus(
      await postComment(who.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'x' }),
      403,
    );
    assert.deepEqual(await commentsOf(svc, s.cr.id), []);
    expectStatus(
      await postComment(who.client, { change_request: s.cr.id, change_diff: s.changes[1]!.id, text: 'y' }),
      201,
    );
  });

  it('create: a change request the caller may not see is answered like one that does not exist (400 on change_request)', async () => {
    const s = await scene(w);
    const who = await actor(svc, `p${++n}`, [
      { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { requester: '$user' } },
      { object_types: [COMMENT], actions: ['view', 'add'] },
    ]);
    const res = await postComment(who.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'x' });
    expectStatus(res, 400);
    assert.ok(res.body.change_request);
  });

  it('Authentication rule 2: with add_changecomment, POST change-comments/ is 201 and the author is the caller', async () => {
    const s = await scene(w);
    const who = await person(svc, [{ object_types: [COMMENT], actions: ['add'] }]);
    const res = await postComment(who.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'x' });
    expectStatus(res, 201);
    assert.equal(res.body.author.id, who.id);
  });

  it('edit: the author without add_changecomment or change_changecomment is refused (403), text unchanged', async () => {
    const s = await scene(w);
    const { who, comment } = await authorWithComment(s);
    await regrant(svc, who, [{ object_types: [COMMENT], actions: ['view', 'delete'] }]);
    const res = await who.client.patch(`${COMMENTS}${comment.id}/`, { text: 'second' });
    expectStatus(res, 403);
    assert.match(res.body.detail, /change_changecomment/);
    expectStatus(await who.client.patch(`${COMMENTS}${comment.id}/`, {}), 403);
    assert.equal((await ok(svc.admin.get(`${COMMENTS}${comment.id}/`))).text, 'first');
  });

  it('edit: with change_changecomment under a constraint that excludes the comment, PATCH and PUT are 404', async () => {
    const s = await scene(w);
    const { who, comment } = await authorWithComment(s);
    await regrant(svc, who, [
      { object_types: [COMMENT], actions: ['view', 'change'], constraints: { change_diff: s.changes[1]!.id } },
    ]);
    expectStatus(await who.client.patch(`${COMMENTS}${comment.id}/`, { text: 'second' }), 404);
    expectStatus(await who.client.put(`${COMMENTS}${comment.id}/`, { text: 'second' }), 404);
    assert.equal((await ok(svc.admin.get(`${COMMENTS}${comment.id}/`))).text, 'first');
  });

  it('edit: a visible comment that the change constraint excludes is 403', async () => {
    const s = await scene(w);
    const { who, comment } = await authorWithComment(s);
    await regrant(svc, who, [
      { object_types: [COMMENT], actions: ['view'] },
      { object_types: [COMMENT], actions: ['change'], constraints: { change_diff: s.changes[1]!.id } },
    ]);
    expectStatus(await who.client.patch(`${COMMENTS}${comment.id}/`, { text: 'second' }), 403);
    assert.equal((await ok(svc.admin.get(`${COMMENTS}${comment.id}/`))).text, 'first');
  });

  it('edit: the author with change_changecomment (and no add) edits the text (200)', async () => {
    const s = await scene(w);
    const { who, comment } = await authorWithComment(s);
    await regrant(svc, who, [{ object_types: [COMMENT], actions: ['view', 'change'] }]);
    assert.equal((await ok(who.client.patch(`${COMMENTS}${comment.id}/`, { text: 'second' }))).text, 'second');
  });

  it('resolve: without change_changecomment (add only, even as the author) resolving is 403 and the thread stays open', async () => {
    const s = await scene(w);
    const { who, comment } = await authorWithComment(s);
    const res = await who.client.patch(`${COMMENTS}${comment.id}/`, { resolved: true });
    expectStatus(res, 403);
    assert.match(res.body.detail, /change_changecomment/);
    assert.equal((await ok(svc.admin.get(`${COMMENTS}${comment.id}/`))).resolved, false);
  });

  it('resolve: with change_changecomment under a constraint that excludes the thread, resolving is 404', async () => {
    const s = await scene(w);
    const { comment } = await authorWithComment(s);
    const who = await person(svc, [
      { object_types: [COMMENT], actions: ['view', 'change'], constraints: { resolved: true } },
    ]);
    expectStatus(await who.client.patch(`${COMMENTS}${comment.id}/`, { resolved: true }), 404);
    assert.equal((await ok(svc.admin.get(`${COMMENTS}${comment.id}/`))).resolved, false);
  });

  it('resolve: a visible thread that the change constraint excludes is 403', async () => {
    const s = await scene(w);
    const { comment } = await authorWithComment(s);
    const who = await person(svc, [
      { object_types: [COMMENT], actions: ['view'] },
      { object_types: [COMMENT], actions: ['change'], constraints: { change_diff: s.changes[1]!.id } },
    ]);
    expectStatus(await who.client.patch(`${COMMENTS}${comment.id}/`, { resolved: true }), 403);
    assert.equal((await ok(svc.admin.get(`${COMMENTS}${comment.id}/`))).resolved, false);
  });

  it('resolve: with change_changecomment, anyone resolves the thread (200)', async () => {
    const s = await scene(w);
    const { comment } = await authorWithComment(s);
    const who = await person(svc, [{ object_types: [COMMENT], actions: ['view', 'change'] }]);
    assert.equal((await ok(who.client.patch(`${COMMENTS}${comment.id}/`, { resolved: true }))).resolved, true);
    // Resolving touches nothing else: the text stays the author's.
    assert.equal((await ok(svc.admin.get(`${COMMENTS}${comment.id}/`))).text, 'first');
  });

  it("delete: someone else's comment without delete_changecomment is 403 and it stays", async () => {
    const s = await scene(w);
    const { comment } = await authorWithComment(s);
    const who = await person(svc, [{ object_types: [COMMENT], actions: ['view', 'add', 'change'] }]);
    await expectDeleted(svc, who.client, `${COMMENTS}${comment.id}/`, 403);
  });

  it('delete: the author without add, change or delete permission is refused (403)', async () => {
    const s = await scene(w);
    const { who, comment } = await authorWithComment(s);
    await regrant(svc, who, [{ object_types: [COMMENT], actions: ['view'] }]);
    await expectDeleted(svc, who.client, `${COMMENTS}${comment.id}/`, 403);
  });

  it('delete: with delete_changecomment under a constraint that excludes the comment, DELETE is 404', async () => {
    const s = await scene(w);
    const { comment } = await authorWithComment(s);
    const who = await person(svc, [
      { object_types: [COMMENT], actions: ['view', 'delete'], constraints: { author: '$user' } },
    ]);
    await expectDeleted(svc, who.client, `${COMMENTS}${comment.id}/`, 404);
  });

  it('delete: a visible comment that the delete constraint excludes is 403', async () => {
    const s = await scene(w);
    const { comment } = await authorWithComment(s);
    const who = await person(svc, [
      { object_types: [COMMENT], actions: ['view'] },
      { object_types: [COMMENT], actions: ['delete'], constraints: { author: '$user' } },
    ]);
    await expectDeleted(svc, who.client, `${COMMENTS}${comment.id}/`, 403);
  });

  it('delete: with delete_changecomment DELETE is 204, a thread root with its replies', async () => {
    const s = await scene(w);
    const { comment } = await authorWithComment(s);
    const r = await reply(s, s.bob.client, comment.id);
    const who = await person(svc, [{ object_types: [COMMENT], actions: ['view', 'delete'] }]);
    await expectDeleted(svc, who.client, `${COMMENTS}${comment.id}/`, 204);
    expectStatus(await svc.admin.get(`${COMMENTS}${r.id}/`), 404);
  });
});

describe('change control: authentication of reviews and comments', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));
  const s = forSuite(() => scene(w));

  it('Authentication rule 1: without a token, or with an unknown one, every review and comment endpoint is 403 with detail', async () => {
    const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment' }));
    const c = await rootComment(s, s.bob.client);
    for (const client of [svc.anonymous, svc.as('not-a-real-token-0000000000000000000000').fromManyAddresses()]) {
      const answers = [
        await client.get(REVIEWS),
        await client.get(`${REVIEWS}${r.id}/`),
        await client.post(REVIEWS, { change_request: s.cr.id, decision: 'approve' }),
        await client.patch(`${REVIEWS}${r.id}/`, { decision: 'approve' }),
        await client.delete(`${REVIEWS}${r.id}/`),
        await client.get(COMMENTS),
        await client.get(`${COMMENTS}${c.id}/`),
        await client.post(COMMENTS, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'x' }),
        await client.patch(`${COMMENTS}${c.id}/`, { resolved: true }),
        await client.delete(`${COMMENTS}${c.id}/`),
      ];
      for (const a of answers) {
        expectStatus(a, 403);
        assert.equal(typeof a.body.detail, 'string');
      }
    }
    assert.equal((await reviewsOf(svc, s.cr.id)).length, 1);
    assert.equal((await commentsOf(svc, s.cr.id)).length, 1);
  });

  it('Authentication rule 1: a read-only token (write_enabled false) reads reviews and comments but may not write them (403)', async () => {
    const key = await createToken(svc, s.carol.id, { write_enabled: false });
    const readOnly = svc.as(key);
    await ok(readOnly.get(REVIEWS));
    await ok(readOnly.get(COMMENTS));
    expectStatus(await postReview(readOnly, { change_request: s.cr.id, decision: 'approve' }), 403);
    expectStatus(
      await postComment(readOnly, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'x' }),
      403,
    );
    assert.equal((await reviewsOf(svc, s.cr.id)).filter((r) => r.reviewer.id === s.carol.id).length, 0);
  });

  it('Authentication rule 5: identity cannot be forged: reviewer and author are always the caller, whatever the body names', async () => {
    const t = await scene(w);
    const r = await created(
      postReview(t.carol.client, {
        change_request: t.cr.id,
        decision: 'approve',
        reviewer: t.bob.id,
        reviewer_id: t.bob.id,
      }),
    );
    assert.equal(r.reviewer.id, t.carol.id);
    const c = await created(
      postComment(t.carol.client, {
        change_request: t.cr.id,
        change_diff: t.changes[0]!.id,
        text: 'x',
        author: t.bob.id,
        author_id: t.bob.id,
      }),
    );
    assert.equal(c.author.id, t.carol.id);
    const log = await ok(
      svc.admin.get(`/api/core/object-changes/?changed_object_type=change_control.review&changed_object_id=${r.id}`),
    );
    assert.equal(log.results[0].user_name, 'carol');
    assert.equal(log.results[0].postchange_data.reviewer, t.carol.id);
  });
});

describe('change control: reviews and comments never answer client input with a server error', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  // One row per collection: who creates and edits, what is malformed, and how many objects the request keeps (the one made here).
  const collections = [
    {
      path: REVIEWS,
      async input(s: Scene): Promise<MalformedInput> {
        const r = await created(postReview(s.bob.client, { change_request: s.cr.id, decision: 'comment' }));
        return {
          poster: s.carol.client,
          bodies: [
            null,
            [],
            'approve',
            42,
            { change_request: s.cr.id, decision: 'approve', comment: { text: 'x' } },
            { change_request: s.cr.id, decision: ['approve'] },
            { change_request: 1.5, decision: 'approve' },
            { change_request: '1; DROP TABLE cc_reviews', decision: 'approve' },
            { change_request: 1e308, decision: 'approve' },
          ],
          editor: s.bob.client,
          patch: { decision: 'approve' },
          ids: ['abc', '0', '-1', '99999999999999999999', '1.5'],
          existing: r.id,
          patches: [{ decision: 'maybe' }, { comment: 7 }, { decision: null }],
        };
      },
      kept: (s: Scene) => reviewsOf(svc, s.cr.id),
    },
    {
      path: COMMENTS,
      async input(s: Scene): Promise<MalformedInput> {
        const c = await rootComment(s, s.bob.client);
        const change = s.changes[0]!.id;
        return {
          poster: s.bob.client,
          bodies: [
            null,
            [],
            'text',
            { change_request: s.cr.id, change_diff: change, text: { md: 'x' } },
            { change_request: s.cr.id, change_diff: change, text: 'x', parent: { id: c.id } },
            { change_request: s.cr.id, change_diff: change, text: 'x', parent: -1 },
            { change_request: s.cr.id, change_diff: change, text: 'x', parent: 1e300 },
            { change_request: [s.cr.id], change_diff: change, text: 'x' },
            { change_request: s.cr.id, change_diff: '1 OR 1=1', text: 'x' },
          ],
          editor: s.bob.client,
          patch: { text: 'x' },
          ids: ['abc', '0', '99999999999999999999'],
          existing: c.id,
          patches: [{ resolved: 'yes' }, { text: 5 }, { text: null }, { resolved: null }],
        };
      },
      kept: (s: Scene) => commentsOf(svc, s.cr.id),
    },
  ];

  for (const { path, input, kept } of collections) {
    const name = path.split('/').at(-2);
    it(`malformed bodies, ids and values on ${name}/ are 4xx naming the problem`, async () => {
      const s = await scene(w);
      await expectMalformedInputRefused(path, await input(s));
      assert.equal((await kept(s)).length, 1, 'only the object made before');
    });
  }
});
