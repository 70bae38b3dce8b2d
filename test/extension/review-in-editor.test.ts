// Reviewing in the editor against the real service, in process, on the seeded world (seed.ts):
// what the editor loads of a request (RequestDataCache), a pending review posted through the
// REST client with an Idempotency-Key per write, the author's first steps (a branch, the title
// and description edited), and the documents' YAML of a real change.
import assert from 'node:assert/strict';
import type { ApiClient } from '../../extension/core/api-client';
import {
  attributeAtLine,
  attributeSpans,
  lineOfAttribute,
  serializeState,
} from '../../extension/core/change-documents';
import { buildThreads } from '../../extension/core/comment-threads';
import {
  addDraft,
  discardReview,
  postPendingReview,
  startReview,
  type PendingReview,
  type PendingReviews,
} from '../../extension/core/pending-review';
import { RequestDataCache, type DataPart } from '../../extension/core/request-data';
import { API, extensionClient, seededServicePerTest, type World } from './seed';

describe('extension: reviewing in the editor, against the service', () => {
  const seeded = seededServicePerTest();
  let world: World;
  let alice: ApiClient;
  let bob: ApiClient;
  let crId: number;
  const sent: { method: string; path: string; key: string | null }[] = [];

  beforeEach(() => {
    ({ world } = seeded);
    sent.length = 0;
    const recording: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      sent.push({
        method: init?.method ?? 'GET',
        path: new URL(String(input)).pathname,
        key: headers.get('Idempotency-Key'),
      });
      return fetch(input, init);
    };
    alice = extensionClient(world, world.author);
    bob = extensionClient(world, world.reviewer, { fetch: recording });
    crId = world.changeRequest.id;
  });

  it('loads a request with its changes and comments, reloads the parts asked for, and tells who listens', async () => {
    const cache = new RequestDataCache(() => bob);
    const heard: [number, DataPart[]][] = [];
    cache.onDidChange((id, parts) => heard.push([id, [...parts].sort()]));
    const [a, b] = await Promise.all([cache.ensure(crId), cache.ensure(crId)]);
    assert.equal(a, b, 'one load for two callers');
    assert.equal(a.changeRequest.title, 'Move sw1 to rack R2');
    assert.deepEqual(a.changes.map((c) => c.object_repr).sort(), ['sw1', 'sw2']);
    assert.equal(
      a.byObject.get(`dcim.device:${a.changes.find((c) => c.object_repr === 'sw1')!.object_id}`)?.id,
      world.changes.sw1,
    );
    assert.deepEqual(a.comments, []);
    assert.deepEqual(heard, [[crId, ['changes', 'comments', 'request']]]);

    await bob.createComment({ change_request: crId, change_diff: world.changes.sw1, text: 'R2?' });
    const after = await cache.reload(crId, ['comments']);
    assert.equal(after?.comments.length, 1);
    assert.equal(after?.changesVersion, a.changesVersion, 'the changes were not reloaded');
    assert.deepEqual(heard.at(-1), [crId, ['comments']]);
    assert.equal(await cache.reload(9999, ['comments']), undefined, 'a request not followed is not loaded');
    cache.forget(crId);
    assert.equal(cache.get(crId), undefined);
    assert.deepEqual(heard.at(-1), [crId, ['changes', 'comments', 'request']], 'listeners hear that it is gone');
    assert.deepEqual(cache.tracked(), []);
    await cache.ensure(crId);
    cache.clear();
    assert.equal(cache.get(crId), undefined);
  });

  it('serialises a real change so that the rack line differs and maps back to "rack"', async () => {
    const sw1 = (await bob.listChanges(world.branch.id)).find((c) => c.id === world.changes.sw1)!;
    const before = serializeState(sw1.original);
    const after = serializeState(sw1.modified);
    const differing = after.split('\n').filter((line, i) => line !== before.split('\n')[i]);
    assert.deepEqual(differing.sort(), ['rack: R2', 'status: planned']);
    const spans = attributeSpans(after);
    const line = lineOfAttribute(spans, 'rack').line;
    assert.equal(after.split('\n')[line], 'rack: R2');
    assert.equal(attributeAtLine(spans, line), 'rack');
  });

  it('posts a pending review: each draft and the approval once, with its own Idempotency-Key, the reply in its thread', async () => {
    let all: PendingReviews = startReview({}, crId, new Date());
    const root = addDraft(
      all,
      crId,
      { changeDiff: world.changes.sw1, attribute: 'rack', parent: null, parentDraft: null, text: 'Why R2?' },
      new Date(),
    );
    all = root.all;
    all = addDraft(
      all,
      crId,
      {
        changeDiff: world.changes.sw1,
        attribute: null,
        parent: null,
        parentDraft: root.draft.key,
        text: 'And planned?',
      },
      new Date(),
    ).all;
    const store = {
      load: () => all[crId] as PendingReview | undefined,
      save: async (r: PendingReview | undefined) => {
        all = r ? { ...all, [crId]: r } : discardReview(all, crId);
      },
    };
    const result = await postPendingReview(bob, store, crId, {
      decision: 'approve',
      comment: 'Rack R2 has room.',
      reviewId: null,
    });
    assert.deepEqual(all, {});
    const writes = sent.filter((s) => s.method !== 'GET');
    assert.deepEqual(
      writes.map((w) => [w.method, w.path]),
      [
        ['POST', API.comments],
        ['POST', API.comments],
        ['POST', API.reviews],
      ],
    );
    assert.equal(new Set(writes.map((w) => w.key)).size, 3);
    assert.ok(writes.every((w) => w.key && /^[\x21-\x7e]{1,200}$/.test(w.key)));

    const comments = await bob.listComments(crId);
    assert.equal(comments.length, 2);
    const posted = comments.find((c) => c.parent === null)!;
    assert.equal(comments.find((c) => c.parent !== null)?.parent, posted.id);
    assert.equal(result.review?.decision, 'approve');
    assert.equal((await bob.getChangeRequest(crId)).status, 'approved');

    // The threads the gutter shows: one thread, both comments, bob's.
    const threads = buildThreads({
      comments,
      drafts: [],
      changes: await bob.listChanges(world.branch.id),
      me: { id: world.reviewer.id, display: 'bob' },
    });
    assert.equal(threads.length, 1);
    assert.deepEqual(
      threads[0].comments.map((c) => [c.text, c.mine]),
      [
        ['Why R2?', true],
        ['And planned?', true],
      ],
    );
  });

  it("resolves a thread by its root only, leaving the author's text alone", async () => {
    const root = await alice.createComment({
      change_request: crId,
      change_diff: world.changes.sw1,
      text: 'Please check the rack.',
    });
    const resolved = await bob.updateComment(root.id, { resolved: true });
    assert.equal(resolved.resolved, true);
    assert.equal(resolved.text, 'Please check the rack.');
    assert.deepEqual(
      sent.filter((s) => s.method === 'PATCH').map((s) => s.path),
      [`${API.comments}${root.id}/`],
    );
  });

  it("lets an author create a branch, and edit a request's title and description", async () => {
    const branch = await alice.createBranch({ name: 'move-sw3', description: 'Racks' });
    assert.equal(branch.name, 'move-sw3');
    assert.ok(branch.schema_id);
    const cr = await alice.createChangeRequest({ branch: branch.id, title: 'Move sw3' });
    const renamed = await alice.updateChangeRequest(cr.id, { title: 'Move sw3 to R4' });
    assert.equal(renamed.title, 'Move sw3 to R4');
    const described = await alice.updateChangeRequest(cr.id, { description: '## Why\n\nR1 is **full**.' });
    assert.equal(described.description, '## Why\n\nR1 is **full**.');
    assert.equal((await bob.getChangeRequest(cr.id)).description, '## Why\n\nR1 is **full**.');
  });
});
