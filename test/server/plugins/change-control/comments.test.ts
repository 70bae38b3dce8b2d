import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { changeControlMigrations } from '../../../../server/plugins/change-control/db/migrations';
import { migrate, openDatabase } from '../../../../server/host/db/database';
import { hostMigrations } from '../../../../server/host/db/migrations/host';
import { suiteService, type TestService } from '../../../support/service';
import { forSuite } from '../../../support/prepared';
import {
  act,
  actor,
  branch,
  BRANCHES,
  changesOf,
  checkNamed,
  COMMENTS,
  created,
  detail,
  device,
  DEVICES,
  expectStatus,
  ok,
  openRequest,
  review,
} from './fixtures';
import {
  assertRefused,
  commentsOf,
  otherBranchChange,
  postComment,
  reply,
  rootComment,
  scene,
  scenePerTest,
  world,
  type Scene,
} from './reviews-comments-fixtures';

const changelogOf = (svc: TestService, id: number) =>
  ok(
    svc.admin.get(`/api/core/object-changes/?changed_object_type=change_control.changecomment&changed_object_id=${id}`),
  );

describe('change control: comment fields', () => {
  const svc = suiteService();
  const s = scenePerTest(svc);

  it('ChangeComment fields: change_request, change_diff, text (Markdown, with text_html), author, parent, resolved and change_label', async () => {
    const c = await created(
      postComment(s.bob.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: 'Why *planned*?' }),
    );
    assert.equal(c.change_request, s.cr.id);
    assert.equal(c.change_diff, s.changes[0]!.id);
    assert.equal(c.text, 'Why *planned*?');
    assert.equal(c.text_html, '<p>Why <em>planned</em>?</p>\n');
    assert.deepEqual(c.author, { id: s.bob.id, username: 'bob', display: 'bob' });
    assert.equal(c.parent, null);
    assert.equal(c.resolved, false);
    assert.equal(c.change_label, s.changes[0]!.object_repr);
    assert.equal(c.change_label, s.devices[0]!.name);
    assert.equal(c.url, `${svc.url}${COMMENTS}${c.id}/`);
    assert.deepEqual(await ok(s.dave.client.get(`${COMMENTS}${c.id}/`)), c);
  });

  it('ChangeComment field change_request, change_diff and text are required (400 naming each)', async () => {
    assertRefused(await postComment(s.bob.client, { change_diff: s.changes[0]!.id, text: 'x' }), 'change_request');
    assertRefused(await postComment(s.bob.client, { change_request: s.cr.id, text: 'x' }), 'change_diff');
    assertRefused(
      await postComment(s.bob.client, { change_request: s.cr.id, change_diff: null, text: 'x' }),
      'change_diff',
    );
    assertRefused(await postComment(s.bob.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id }), 'text');
    assertRefused(
      await postComment(s.bob.client, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text: '   ' }),
      'text',
    );
    assertRefused(
      await postComment(s.bob.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 'x'.repeat(65_537),
      }),
      'text',
    );
    assertRefused(
      await postComment(s.bob.client, { change_request: 999_999, change_diff: s.changes[0]!.id, text: 'x' }),
      'change_request',
      /does not exist/,
    );
    assert.equal((await commentsOf(svc, s.cr.id)).length, 0);
  });

  it('ChangeComment field author is read-only: always the caller; naming someone else is not an error', async () => {
    const c = await created(
      postComment(s.bob.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 'mine',
        author: s.carol.id,
      }),
    );
    assert.equal(c.author.id, s.bob.id);
    const r = await created(
      postComment(s.carol.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 're',
        parent: c.id,
        author: { id: s.bob.id },
      }),
    );
    assert.equal(r.author.id, s.carol.id);
    const edited = await ok(s.bob.client.patch(`${COMMENTS}${c.id}/`, { text: 'mine, edited', author: s.alice.id }));
    assert.equal(edited.author.id, s.bob.id);
    assert.deepEqual(
      (await commentsOf(svc, s.cr.id)).map((x) => x.author.username),
      ['bob', 'carol'],
    );
  });

  it('ChangeComment field change_diff / Errors: a change of another branch is refused (400 naming change_diff)', async () => {
    const other = await otherBranchChange(s);
    const res = await postComment(s.bob.client, {
      change_request: s.cr.id,
      change_diff: other.changeId,
      text: 'wrong branch',
    });
    assertRefused(res, 'change_diff', /not a change in this change request's branch/);
    assert.equal((await commentsOf(svc, s.cr.id)).length, 0);
  });

  it('ChangeComment field change_label is read-only and kept after the branch is gone', async () => {
    const c = await created(
      postComment(s.bob.client, {
        change_request: s.cr.id,
        change_diff: s.changes[1]!.id,
        text: 'About router b',
        change_label: 'forged',
      }),
    );
    assert.equal(c.change_label, s.devices[1]!.name);
    const r = await reply(s, s.carol.client, c.id, 'ok', 1);
    expectStatus(await svc.admin.delete(`${BRANCHES}${s.branchId}/`), 204);
    const cr = await detail(s.alice.client, s.cr.id);
    assert.equal(cr.branch_deleted, true);
    const kept = await commentsOf(svc, s.cr.id);
    assert.deepEqual(
      kept.map((x) => [x.id, x.change_label, x.text, x.parent]),
      [
        [c.id, s.devices[1]!.name, 'About router b', null],
        [r.id, s.devices[1]!.name, 'ok', c.id],
      ],
    );
    // The branch is gone: its changes take no new comments (a validation error, not a server error).
    assertRefused(
      await postComment(s.bob.client, { change_request: s.cr.id, change_diff: s.changes[1]!.id, text: 'late' }),
      'change_diff',
      /deleted/,
    );
  });

  it('ChangeComment field resolved: only on a thread root; setting it on a reply is 400 naming resolved', async () => {
    const root = await rootComment(s, s.bob.client);
    const r = await reply(s, s.alice.client, root.id);
    assert.equal(r.resolved, false);
    assertRefused(await s.bob.client.patch(`${COMMENTS}${r.id}/`, { resolved: true }), 'resolved', /root/);
    assertRefused(await s.bob.client.patch(`${COMMENTS}${r.id}/`, { resolved: false }), 'resolved', /root/);
    const resolved = await ok(s.bob.client.patch(`${COMMENTS}${root.id}/`, { resolved: true }));
    assert.equal(resolved.resolved, true);
    // Sending resolved on create is ignored: a new thread is open.
    const fresh = await created(
      postComment(s.bob.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 'new',
        resolved: true,
      }),
    );
    assert.equal(fresh.resolved, false);
  });

  it("ChangeComment field resolved: a holder of change_changecomment resolves and reopens anyone's thread", async () => {
    const root = await rootComment(s, s.alice.client, 'Please check the status.');
    // carol holds change_changecomment; she did not write the thread.
    assert.equal((await ok(s.carol.client.patch(`${COMMENTS}${root.id}/`, { resolved: true }))).resolved, true);
    assert.deepEqual(
      (await ok(s.dave.client.get(`${COMMENTS}?change_request_id=${s.cr.id}&resolved=true`))).results.map(
        (x: any) => x.id,
      ),
      [root.id],
    );
    assert.equal((await ok(s.carol.client.patch(`${COMMENTS}${root.id}/`, { resolved: false }))).resolved, false);
    assert.deepEqual(
      (await ok(s.dave.client.get(`${COMMENTS}?change_request_id=${s.cr.id}&resolved=false`))).results.map(
        (x: any) => x.id,
      ),
      [root.id],
    );
    const log = await changelogOf(svc, root.id);
    assert.equal(log.count, 3, 'created, resolved, reopened');
  });

  it('ChangeComment field edited: true once the author changes the text; resolving or reopening a thread is no edit', async () => {
    const root = await rootComment(s, s.alice.client, 'Please check the status.');
    assert.equal(root.edited, false);
    const resolved = await ok(s.carol.client.patch(`${COMMENTS}${root.id}/`, { resolved: true }));
    assert.equal(resolved.edited, false);
    assert.equal((await ok(s.carol.client.patch(`${COMMENTS}${root.id}/`, { resolved: false }))).edited, false);
    assert.equal(
      (await ok(s.alice.client.patch(`${COMMENTS}${root.id}/`, { text: 'Please check the status.' }))).edited,
      false,
      'the same text is no edit',
    );
    const edited = await ok(
      s.alice.client.patch(`${COMMENTS}${root.id}/`, { text: 'Please check the status and the rack.' }),
    );
    assert.equal(edited.edited, true);
    // Each answer is the comment as a read right after shows it.
    const read = () => ok(s.alice.client.get(`${COMMENTS}${root.id}/`));
    assert.deepEqual(edited, await read());
    const resolvedAgain = await ok(s.carol.client.patch(`${COMMENTS}${root.id}/`, { resolved: true }));
    assert.equal(resolvedAgain.edited, true);
    assert.deepEqual(resolvedAgain, await read());
    assert.deepEqual(
      await ok(s.alice.client.patch(`${COMMENTS}${root.id}/`, { text: 'Please check the status and the rack.' })),
      await read(),
    );
  });

  it('ChangeComment field edited: comments written before the field existed are marked from the changelog', async () => {
    const { db, close } = openDatabase(':memory:');
    try {
      const { '20-change-control-0006-comment-edited': edited, ...earlier } = changeControlMigrations;
      assert.ok(edited);
      await migrate(db, { ...hostMigrations, ...earlier });
      const now = '2026-11-01T09:00:00.000Z';
      await sql`INSERT INTO users (id, username) VALUES (1, 'u')`.execute(db);
      await sql`INSERT INTO cc_change_requests (id, branch_name, title, created, last_updated) VALUES (1, 'b', 't', ${now}, ${now})`.execute(
        db,
      );
      for (const id of [1, 2, 3]) {
        await sql`INSERT INTO cc_change_comments (id, change_request_id, change_object_type, change_object_id, change_label, text, author_id, created, last_updated)
          VALUES (${id}, 1, 'dcim.device', 1, 'd', 'text', 1, ${now}, ${now})`.execute(db);
      }
      const change = (id: number, pre: object, post: object) =>
        sql`INSERT INTO object_changes (time, user_name, request_id, action, changed_object_type, changed_object_id, object_repr, prechange_data, postchange_data)
        VALUES (${now}, 'u', 'r', 'update', 'change_control.changecomment', ${id}, 'c', ${JSON.stringify(pre)}, ${JSON.stringify(post)})`.execute(
          db,
        );
      await change(1, { text: 'a', resolved: false }, { text: 'b', resolved: false });
      await change(2, { text: 'a', resolved: false }, { text: 'a', resolved: true });
      await migrate(db, { ...hostMigrations, ...changeControlMigrations });
      const rows = await sql<{
        id: number;
        edited: number;
      }>`SELECT id, edited FROM cc_change_comments ORDER BY id`.execute(db);
      assert.deepEqual(rows.rows, [
        { id: 1, edited: 1 },
        { id: 2, edited: 0 },
        { id: 3, edited: 0 },
      ]);
    } finally {
      await close();
    }
  });
});

describe('change control: comment rules', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  it('ChangeComment rule 1 / Errors: a reply must be on the same change as its parent (400 otherwise)', async () => {
    const s = await scene(w);
    const root = await rootComment(s, s.bob.client, 'On router a', 0);
    const res = await postComment(s.alice.client, {
      change_request: s.cr.id,
      change_diff: s.changes[1]!.id,
      text: 'on b',
      parent: root.id,
    });
    assertRefused(res, 'parent', /same change/);
    const ok1 = await reply(s, s.alice.client, root.id, 'on a', 0);
    assert.equal(ok1.parent, root.id);
    assert.equal(ok1.change_diff, root.change_diff);
    assert.equal((await commentsOf(svc, s.cr.id)).length, 2);
  });

  it('ChangeComment rule 1: a parent on another change request, or one that does not exist, is refused (400)', async () => {
    const s = await scene(w);
    const t = await scene(w);
    const elsewhere = await rootComment(t, t.bob.client);
    assertRefused(
      await postComment(s.alice.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 'x',
        parent: elsewhere.id,
      }),
      'parent',
      /does not exist on this change request/,
    );
    assertRefused(
      await postComment(s.alice.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 'x',
        parent: 987_654,
      }),
      'parent',
    );
    assertRefused(
      await postComment(s.alice.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 'x',
        parent: 'first',
      }),
      'parent',
    );
  });

  it('ChangeComment rule 2: threads are one level deep; a reply to a reply is stored with the thread root as its parent (API)', async () => {
    const s = await scene(w);
    const root = await rootComment(s, s.bob.client);
    const first = await reply(s, s.alice.client, root.id, 'first');
    const second = await reply(s, s.carol.client, first.id, 'reply to the reply');
    assert.equal(second.parent, root.id);
    const third = await reply(s, s.bob.client, second.id, 'and again');
    assert.equal(third.parent, root.id);
    assert.equal((await ok(s.dave.client.get(`${COMMENTS}${second.id}/`))).parent, root.id);
    const thread = await ok(s.dave.client.get(`${COMMENTS}?parent_id=${root.id}&ordering=id`));
    assert.deepEqual(
      thread.results.map((c: any) => c.id),
      [first.id, second.id, third.id],
    );
    assert.equal((await ok(s.dave.client.get(`${COMMENTS}?parent_id=${first.id}`))).count, 0);
    assert.deepEqual(
      (await ok(s.dave.client.get(`${COMMENTS}?change_request_id=${s.cr.id}&is_root=true`))).results.map(
        (c: any) => c.id,
      ),
      [root.id],
    );
    // The changelog records the flattened parent too.
    const log = await changelogOf(svc, second.id);
    assert.equal(log.results[0].postchange_data.parent, root.id);
  });

  it('ChangeComment rule 2: a reply to a reply on another change is refused like any reply on another change', async () => {
    const s = await scene(w);
    const root = await rootComment(s, s.bob.client, 'a', 0);
    const first = await reply(s, s.alice.client, root.id, 'first', 0);
    assertRefused(
      await postComment(s.carol.client, {
        change_request: s.cr.id,
        change_diff: s.changes[1]!.id,
        text: 'x',
        parent: first.id,
      }),
      'parent',
      /same change/,
    );
  });

  it('ChangeComment rule 2: an edit cannot move a comment into or out of a thread (parent is kept on PATCH and PUT)', async () => {
    const s = await scene(w);
    const root = await rootComment(s, s.bob.client);
    const other = await rootComment(s, s.bob.client, 'another thread');
    const r = await reply(s, s.bob.client, root.id);
    assert.equal(
      (await ok(s.bob.client.patch(`${COMMENTS}${r.id}/`, { parent: other.id, text: 'moved?' }))).parent,
      root.id,
    );
    assert.equal((await ok(s.bob.client.patch(`${COMMENTS}${r.id}/`, { parent: null }))).parent, root.id);
    assert.equal(
      (await ok(s.bob.client.put(`${COMMENTS}${other.id}/`, { parent: r.id, text: 'nested?' }))).parent,
      null,
    );
    const all = await commentsOf(svc, s.cr.id);
    assert.deepEqual(
      all.map((c) => [c.id, c.parent]),
      [
        [root.id, null],
        [other.id, null],
        [r.id, root.id],
      ],
    );
  });

  it('ChangeComment rule 3: a comment naming a change that does not exist is a validation error (400), never a server error', async () => {
    const s = await scene(w);
    for (const change_diff of [999_999, 0, -5, 2 ** 53 - 1]) {
      assertRefused(
        await postComment(s.bob.client, { change_request: s.cr.id, change_diff, text: 'x' }),
        'change_diff',
      );
    }
    for (const change_diff of ['12', 1.5, 2 ** 64, {}, []]) {
      assertRefused(
        await postComment(s.bob.client, { change_request: s.cr.id, change_diff, text: 'x' }),
        'change_diff',
      );
    }
  });

  it('ChangeComment rule 3 (Errors): a comment naming a change that no longer exists is a validation error (400)', async () => {
    const s = await scene(w);
    // A third device created then deleted in the branch: its change comes and goes.
    const extra = await created(s.inBranch.post(DEVICES, { name: `gone-${s.cr.id}` }));
    const change = (
      await ok(svc.admin.get(`/api/plugins/branching/changes/?branch_id=${s.branchId}&limit=100`))
    ).results.find((c: any) => c.object_id === extra.id);
    assert.ok(change);
    const early = await created(
      postComment(s.bob.client, { change_request: s.cr.id, change_diff: change.id, text: 'Why this one?' }),
    );
    expectStatus(await s.inBranch.delete(`${DEVICES}${extra.id}/`), 204);
    expectStatus(await svc.admin.get(`/api/plugins/branching/changes/${change.id}/`), 404);
    const res = await postComment(s.bob.client, { change_request: s.cr.id, change_diff: change.id, text: 'still?' });
    assertRefused(res, 'change_diff', /does not exist/);
    // A reply in the thread of the vanished change names that change too.
    assertRefused(
      await postComment(s.alice.client, {
        change_request: s.cr.id,
        change_diff: change.id,
        text: 'gone',
        parent: early.id,
      }),
      'change_diff',
    );
    // The old thread is kept, with its label.
    assert.equal((await ok(s.dave.client.get(`${COMMENTS}${early.id}/`))).change_label, `gone-${s.cr.id}`);
  });

  it('ChangeComment rule 4: comments are edited by their author only (403 for anyone else, a superuser included)', async () => {
    const s = await scene(w);
    const c = await rootComment(s, s.bob.client, 'original');
    for (const [who, client] of [
      ['carol', s.carol.client],
      ['alice', s.alice.client],
      ['admin', svc.admin],
    ] as const) {
      const res = await client.patch(`${COMMENTS}${c.id}/`, { text: 'hijacked' });
      expectStatus(res, 403, who);
      assert.match(res.body.detail, /Only the author/, who);
      expectStatus(await client.put(`${COMMENTS}${c.id}/`, { text: 'hijacked' }), 403, `${who} put`);
    }
    assert.equal((await ok(s.dave.client.get(`${COMMENTS}${c.id}/`))).text, 'original');
    const edited = await ok(s.bob.client.patch(`${COMMENTS}${c.id}/`, { text: 'edited **text**' }));
    assert.equal(edited.text, 'edited **text**');
    assert.equal(edited.text_html, '<p>edited <strong>text</strong></p>\n');
    assertRefused(await s.bob.client.patch(`${COMMENTS}${c.id}/`, { text: '' }), 'text');
  });

  it('ChangeComment rule 4: the author deletes a comment (204); deleting a thread root removes its replies', async () => {
    const s = await scene(w);
    const root = await rootComment(s, s.bob.client);
    const r1 = await reply(s, s.alice.client, root.id);
    const r2 = await reply(s, s.carol.client, r1.id);
    expectStatus(await s.alice.client.delete(`${COMMENTS}${r1.id}/`), 204);
    assert.deepEqual(
      (await commentsOf(svc, s.cr.id)).map((c) => c.id),
      [root.id, r2.id],
    );
    expectStatus(await s.bob.client.delete(`${COMMENTS}${root.id}/`), 204);
    assert.deepEqual(await commentsOf(svc, s.cr.id), []);
    expectStatus(await s.carol.client.get(`${COMMENTS}${r2.id}/`), 404);
    for (const id of [root.id, r1.id, r2.id]) {
      assert.equal(
        (
          await ok(
            svc.admin.get(
              `/api/core/object-changes/?changed_object_type=change_control.changecomment&changed_object_id=${id}&action=delete`,
            ),
          )
        ).count,
        1,
        `comment ${id}`,
      );
    }
  });

  it("ChangeComment rule 4: someone else's comment is deleted only by a holder of delete_changecomment (403 otherwise)", async () => {
    const s = await scene(w);
    const c = await rootComment(s, s.bob.client);
    const res = await s.carol.client.delete(`${COMMENTS}${c.id}/`);
    expectStatus(res, 403);
    assert.match(res.body.detail, /delete_changecomment/);
    expectStatus(await svc.admin.delete(`${COMMENTS}${c.id}/`), 204);
  });
});

describe('change control: comment threads anchored to an attribute', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc, { checks: ['threads-resolved'] }));

  let n = 0;
  /** Alice's branch updates a device that exists on main: status, a nested config and an interface name change. */
  async function updateScene() {
    const name = `edge${++n}`;
    const onMain = await device(w.alice.client, {
      name,
      status: 'planned',
      config: { hostname: name, lines: ['a', 'b'] },
      interfaces: [{ name: 'eth0' }, { name: 'eth1' }],
      custom_fields: { owner: 'netops', rack: null },
    });
    const { branch: b, inBranch } = await branch(w.alice.client, `edit-${name}`);
    await ok(
      inBranch.patch(`${DEVICES}${onMain.id}/`, {
        status: 'active',
        config: { hostname: name, lines: ['a', 'c'] },
        interfaces: [{ name: 'ge0' }, { name: 'eth1' }],
      }),
    );
    const cr = await openRequest(w.alice.client, b.id);
    await ok(act(w.alice.client, cr.id, 'submit'));
    const change = (await changesOf(svc, b.id)).find((c) => c.object_id === onMain.id);
    assert.equal(change.action, 'update');
    const post = (body: Record<string, unknown>) =>
      w.bob.client.post(COMMENTS, { change_request: cr.id, change_diff: change.id, text: 'About this', ...body });
    return { cr, change, inBranch, deviceId: onMain.id as number, branchId: b.id as number, post };
  }

  it('ChangeComment field attribute: a thread root names a dot path of its change (keys, nested keys, array indices); null means the whole object', async () => {
    const u = await updateScene();
    for (const path of [
      'status',
      'config',
      'config.lines.1',
      'interfaces.0.name',
      'custom_fields.owner',
      'custom_fields.rack',
    ]) {
      const c = await created(u.post({ attribute: path }), path);
      assert.equal(c.attribute, path);
      assert.deepEqual(await ok(w.dave.client.get(`${COMMENTS}${c.id}/`)), c);
    }
    assert.equal((await created(u.post({}))).attribute, null);
    assert.equal((await created(u.post({ attribute: null }))).attribute, null);
    // A created object has only a modified state: its attributes anchor threads too.
    const s = await scene(w);
    assert.equal((await rootComment(s, s.bob.client)).attribute, null);
    const onCreate = await created(
      postComment(s.bob.client, {
        change_request: s.cr.id,
        change_diff: s.changes[0]!.id,
        text: 'x',
        attribute: 'name',
      }),
    );
    assert.equal(onCreate.attribute, 'name');
  });

  it('ChangeComment field attribute: a path in neither state, a malformed path or a non-string is 400 naming attribute, and nothing is written', async () => {
    const u = await updateScene();
    for (const attribute of [
      'nosuch',
      'config.nosuch',
      'interfaces.2.name',
      'interfaces.01.name',
      'interfaces.x',
      'status.length',
      'config..lines',
      '.status',
      'x'.repeat(201),
      5,
      ['status'],
      { path: 'status' },
    ]) {
      assertRefused(await u.post({ attribute }), 'attribute');
    }
    assert.equal((await commentsOf(svc, u.cr.id)).length, 0);
  });

  it("ChangeComment field attribute: replies carry their root's; a reply naming another attribute is 400 naming attribute", async () => {
    const u = await updateScene();
    const root = await created(u.post({ attribute: 'config.lines' }));
    const plain = await created(u.post({ parent: root.id }));
    const same = await created(u.post({ parent: root.id, attribute: 'config.lines' }));
    assert.equal(plain.attribute, 'config.lines');
    assert.equal(same.attribute, 'config.lines');
    assertRefused(await u.post({ parent: root.id, attribute: 'status' }), 'attribute', /config\.lines/);
    const whole = await created(u.post({}));
    assertRefused(await u.post({ parent: whole.id, attribute: 'status' }), 'attribute');
    // A reply to a reply joins the root's thread, and its attribute.
    const flattened = await created(u.post({ parent: plain.id }));
    assert.equal(flattened.parent, root.id);
    assert.equal(flattened.attribute, 'config.lines');
    assert.equal((await commentsOf(svc, u.cr.id)).length, 5);
  });

  it('ChangeComment filters attribute (repeatable: any of them) and attribute__isnull', async () => {
    const u = await updateScene();
    const a = await created(u.post({ attribute: 'status' }));
    const b = await created(u.post({ attribute: 'config.lines.1' }));
    const r = await created(u.post({ parent: a.id }));
    const whole = await created(u.post({}));
    const ids = async (q: string) =>
      (await ok(w.bob.client.get(`${COMMENTS}?change_request_id=${u.cr.id}&ordering=id&${q}`))).results.map(
        (c: any) => c.id,
      );
    assert.deepEqual(await ids('attribute=status'), [a.id, r.id]);
    assert.deepEqual(await ids('attribute=status&attribute=config.lines.1'), [a.id, b.id, r.id]);
    assert.deepEqual(await ids('attribute=config'), []);
    assert.deepEqual(await ids('attribute__isnull=true'), [whole.id]);
    assert.deepEqual(await ids('attribute__isnull=false&is_root=true'), [a.id, b.id]);
    expectStatus(await w.bob.client.get(`${COMMENTS}?attribute__isnull=perhaps`), 400);
  });

  it('ChangeComment field outdated: a thread whose attribute no longer differs, or whose change is gone, is outdated, never lost, and still counts while open', async () => {
    const u = await updateScene();
    const onStatus = await created(u.post({ attribute: 'status' }));
    const replyOnStatus = await created(u.post({ parent: onStatus.id }));
    const onLines = await created(u.post({ attribute: 'config.lines' }));
    const onName = await created(u.post({ attribute: 'name' }));
    const whole = await created(u.post({}));
    const outdated = async () => Object.fromEntries((await commentsOf(svc, u.cr.id)).map((c) => [c.id, c.outdated]));
    // `name` exists on both sides but never differed: such a thread is outdated from the start.
    assert.deepEqual(await outdated(), {
      [onStatus.id]: false,
      [replyOnStatus.id]: false,
      [onLines.id]: false,
      [onName.id]: true,
      [whole.id]: false,
    });

    // The branch sets status back: that thread (root and reply) is outdated, the others are not.
    await ok(u.inBranch.patch(`${DEVICES}${u.deviceId}/`, { status: 'planned' }));
    assert.deepEqual(await outdated(), {
      [onStatus.id]: true,
      [replyOnStatus.id]: true,
      [onLines.id]: false,
      [onName.id]: true,
      [whole.id]: false,
    });
    const threads = await checkNamed(w.dave.client, u.cr.id, 'threads-resolved');
    assert.match(threads.summary, /4 comment threads are still open/);

    // The branch drops its change of the device altogether (another device keeps the policy on): every thread on it is outdated.
    await device(u.inBranch, { name: `spare${n}` });
    await ok(
      u.inBranch.patch(`${DEVICES}${u.deviceId}/`, {
        config: { hostname: `edge${n}`, lines: ['a', 'b'] },
        interfaces: [{ name: 'eth0' }, { name: 'eth1' }],
      }),
    );
    assert.equal((await changesOf(svc, u.branchId)).filter((c) => c.object_id === u.deviceId).length, 0);
    const after = await commentsOf(svc, u.cr.id);
    assert.equal(after.length, 5);
    assert.ok(after.every((c) => c.outdated === true));
    assert.match(
      (await checkNamed(w.dave.client, u.cr.id, 'threads-resolved')).summary,
      /4 comment threads are still open/,
    );
  });
});

describe('change control: open threads and threads-resolved (ChangeComment rule 5)', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc, { checks: ['threads-resolved'] }));

  const threadsCheck = (s: Scene) => checkNamed(s.dave.client, s.cr.id, 'threads-resolved');

  it('ChangeComment rule 5: an open thread fails threads-resolved and blocks the merge; resolving it clears the check', async () => {
    const s = await scene(w);
    assert.equal((await threadsCheck(s)).status, 'success');
    expectStatus(await review(s.bob.client, s.cr.id, 'approve'), 201);
    assert.equal((await detail(s.alice.client, s.cr.id)).ready_to_merge, true);

    const root = await rootComment(s, s.carol.client, 'Is router a racked?');
    const failing = await threadsCheck(s);
    assert.equal(failing.status, 'failure');
    assert.match(failing.summary, /1 comment thread is still open/);
    const blocked = await detail(s.alice.client, s.cr.id);
    assert.equal(blocked.status, 'approved');
    assert.equal(blocked.ready_to_merge, false);
    assert.match(blocked.merge_blocked_reason, /Comment threads resolved/);
    const refused = await svc.admin.post(`${BRANCHES}${s.branchId}/merge/`, { commit: true });
    expectStatus(refused, 409);

    // A reply is not a thread of its own.
    await reply(s, s.alice.client, root.id, 'Yes.');
    assert.match((await threadsCheck(s)).summary, /1 comment thread is still open/);

    await ok(s.carol.client.patch(`${COMMENTS}${root.id}/`, { resolved: true }));
    assert.equal((await threadsCheck(s)).status, 'success');
    assert.equal((await detail(s.alice.client, s.cr.id)).ready_to_merge, true);
  });

  it('ChangeComment rule 5: each open thread counts; reopening fails the check again; deleting the thread clears it', async () => {
    const s = await scene(w);
    const a = await rootComment(s, s.bob.client, 'one', 0);
    const b = await rootComment(s, s.bob.client, 'two', 1);
    assert.match((await threadsCheck(s)).summary, /2 comment threads are still open/);
    await ok(s.bob.client.patch(`${COMMENTS}${a.id}/`, { resolved: true }));
    assert.match((await threadsCheck(s)).summary, /1 comment thread is still open/);
    await ok(s.bob.client.patch(`${COMMENTS}${b.id}/`, { resolved: true }));
    const clear = await threadsCheck(s);
    assert.equal(clear.status, 'success');
    assert.match(clear.summary, /Every comment thread is resolved/);
    await ok(s.bob.client.patch(`${COMMENTS}${a.id}/`, { resolved: false }));
    assert.equal((await threadsCheck(s)).status, 'failure');
    expectStatus(await s.bob.client.delete(`${COMMENTS}${a.id}/`), 204);
    assert.equal((await threadsCheck(s)).status, 'success');
  });

  it('ChangeComment rule 5: threads of another change request do not count', async () => {
    const s = await scene(w);
    const t = await scene(w);
    await rootComment(t, t.bob.client, 'elsewhere');
    assert.equal((await threadsCheck(t)).status, 'failure');
    assert.equal((await threadsCheck(s)).status, 'success');
  });
});

describe('change control: comments and the change request', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  it('the change request offers commenting to a holder of add_changecomment, and not once the branch is gone', async () => {
    const s = await scene(w);
    assert.deepEqual((await detail(s.bob.client, s.cr.id)).actions.comment, { allowed: true, reason: null });
    assert.equal((await detail(s.dave.client, s.cr.id)).actions.comment.allowed, false);
    expectStatus(await svc.admin.delete(`${BRANCHES}${s.branchId}/`), 204);
    assert.equal((await detail(s.bob.client, s.cr.id)).actions.comment.allowed, false);
  });

  it('Visibility: a comment anchored to an object the caller may not view, or in a branch they cannot view, is hidden from the list, the detail and search; commenting on such a change is refused as for one that does not exist', async () => {
    const s = await scene(w);
    const hiddenThread = await rootComment(s, s.bob.client, `zebra-${s.cr.id} on the first router`, 0);
    const shownThread = await rootComment(s, s.bob.client, `zebra-${s.cr.id} on the second router`, 1);
    const ccView = {
      object_types: ['change_control.changerequest', 'change_control.changecomment', 'branching.changediff'],
      actions: ['view', 'add'],
    };
    const narrow = await actor(svc, `narrow-${s.cr.id}`, [
      ccView,
      { object_types: ['branching.branch'], actions: ['view'] },
      { object_types: ['dcim.device'], actions: ['view'], constraints: { name: s.devices[1]!.name } },
    ]);
    const blind = await actor(svc, `blind-${s.cr.id}`, [
      ccView,
      { object_types: ['branching.branch'], actions: ['view'], constraints: { name: 'another' } },
      { object_types: ['dcim.device'], actions: ['view'] },
    ]);

    const ids = async (client: typeof narrow.client) =>
      (await ok(client.get(`${COMMENTS}?change_request_id=${s.cr.id}`))).results.map((c: { id: number }) => c.id);
    assert.deepEqual(await ids(narrow.client), [shownThread.id]);
    assert.equal((await ok(narrow.client.get(`${COMMENTS}?change_request_id=${s.cr.id}&limit=1`))).count, 1);
    expectStatus(await narrow.client.get(`${COMMENTS}${hiddenThread.id}/`), 404);
    expectStatus(await narrow.client.get(`${COMMENTS}${shownThread.id}/`), 200);
    const found = (await ok(narrow.client.get(`/api/search/?q=zebra-${s.cr.id}`))).results.filter(
      (h: { object_type: string }) => h.object_type === 'change_control.changecomment',
    );
    assert.deepEqual(
      found.map((h: { id: number }) => h.id),
      [shownThread.id],
    );

    assert.deepEqual(await ids(blind.client), []);
    expectStatus(await blind.client.get(`${COMMENTS}${shownThread.id}/`), 404);
    assert.equal((await ok(blind.client.get(`/api/search/?q=zebra-${s.cr.id}`))).results.length, 0);

    const refused = await postComment(narrow.client, {
      change_request: s.cr.id,
      change_diff: s.changes[0]!.id,
      text: 'probe',
    });
    const missing = await postComment(narrow.client, { change_request: s.cr.id, change_diff: 999_999, text: 'probe' });
    expectStatus(refused, 400);
    assert.deepEqual(refused.body, { change_diff: [`Change ${s.changes[0]!.id} does not exist.`] });
    assert.equal(missing.status, refused.status);
    expectStatus(
      await postComment(narrow.client, { change_request: s.cr.id, change_diff: s.changes[1]!.id, text: 'fine' }),
      201,
    );
  });

  it('the comments list filters by change_request_id, change_diff_id, author_id (me), is_root and resolved', async () => {
    const s = await scene(w);
    const a = await rootComment(s, s.bob.client, 'a', 0);
    const b = await rootComment(s, s.carol.client, 'b', 1);
    const r = await reply(s, s.carol.client, a.id, 'r', 0);
    await ok(s.bob.client.patch(`${COMMENTS}${b.id}/`, { resolved: true }));
    const ids = async (q: string) =>
      (await ok(s.bob.client.get(`${COMMENTS}?change_request_id=${s.cr.id}&ordering=id&${q}`))).results.map(
        (c: any) => c.id,
      );
    assert.deepEqual(await ids(''), [a.id, b.id, r.id]);
    assert.deepEqual(await ids(`change_diff_id=${s.changes[1]!.id}`), [b.id]);
    assert.deepEqual(await ids('author_id=me'), [a.id]);
    assert.deepEqual(await ids('is_root=false'), [r.id]);
    assert.deepEqual(await ids('resolved=true'), [b.id]);
    assert.deepEqual(await ids('resolved=false'), [a.id]);
    expectStatus(await s.bob.client.get(`${COMMENTS}?resolved=maybe`), 400);
    expectStatus(await s.bob.client.get(`${COMMENTS}?change_diff_id=x`), 400);
  });
});
