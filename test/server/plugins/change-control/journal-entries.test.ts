import assert from 'node:assert/strict';
import { startService, type TestService } from '../../../support/service';
import { actor, AUTHOR, created, expectStatus, ok, REQUESTS, type Actor, type PermissionGrant } from './fixtures';
import { CR_TYPE, draftRequest, ids, VIEW_ONLY } from './requests-support';

const JOURNAL = '/api/extras/journal-entries/';
const JE = 'extras.journalentry';

function entry(id: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { assigned_object_type: CR_TYPE, assigned_object_id: id, comments: 'Checked with the **NOC**.', ...fields };
}

/** View on everything but change requests, the given grants on change requests, and these journal actions. */
function grants(
  journal: string[],
  requests: { actions: string[]; constraints?: unknown } = { actions: ['view'] },
): PermissionGrant[] {
  const others = VIEW_ONLY.map((g) => ({ ...g, object_types: g.object_types.filter((t) => t !== CR_TYPE) }));
  return [
    ...others,
    { object_types: [CR_TYPE], ...requests },
    ...(journal.length > 0 ? [{ object_types: [JE], actions: journal }] : []),
  ];
}

describe('journal entries on change requests (/api/extras/journal-entries/)', () => {
  let svc: TestService;
  let author: Actor;
  let writer: Actor;
  let n = 0;

  async function requestId(): Promise<number> {
    return (await draftRequest(author, `journal-${++n}`)).cr.id;
  }

  before(async () => {
    svc = await startService();
    author = await actor(svc, 'alice', AUTHOR);
    writer = await actor(svc, 'jo', grants(['view', 'add', 'change', 'delete']));
  });
  after(async () => svc.close());

  it('creates an entry (kind info by default, the caller as created_by, comments rendered safely) and shows it in detail', async () => {
    const cr = await requestId();
    const made = await created(
      writer.client.post(
        JOURNAL,
        entry(cr, { comments: 'Checked with the **NOC**. <script>x</script>', created_by: author.id }),
      ),
    );
    assert.equal(made.kind, 'info');
    assert.equal(made.assigned_object_type, CR_TYPE);
    assert.equal(made.assigned_object_id, cr);
    assert.equal(made.created_by.id, writer.id, 'created_by is always the caller');
    assert.equal(made.comments, 'Checked with the **NOC**. <script>x</script>');
    assert.match(made.comments_html, /<strong>NOC<\/strong>/);
    assert.doesNotMatch(made.comments_html, /<script>/);
    assert.ok(made.created && made.last_updated);
    assert.equal(made.url.endsWith(`${JOURNAL}${made.id}/`), true);
    const got = await ok(writer.client.get(`${JOURNAL}${made.id}/`));
    assert.equal(got.comments, made.comments);
  });

  it('refuses a bad kind, an empty comment, another object type and an unknown request (400, nothing written)', async () => {
    const cr = await requestId();
    const before = (await ok(svc.admin.get(`${JOURNAL}?limit=1000`))).count;
    for (const [body, field] of [
      [entry(cr, { kind: 'critical' }), 'kind'],
      [entry(cr, { comments: '  ' }), 'comments'],
      [entry(cr, { assigned_object_type: 'dcim.device' }), 'assigned_object_type'],
      [entry(999999), 'assigned_object_id'],
    ] as const) {
      const res = await writer.client.post(JOURNAL, body);
      expectStatus(res, 400, JSON.stringify(body));
      assert.ok(res.body[field], `${field} named: ${JSON.stringify(res.body)}`);
    }
    assert.match(JSON.stringify((await writer.client.post(JOURNAL, entry(999999))).body), /does not exist/);
    assert.equal((await ok(svc.admin.get(`${JOURNAL}?limit=1000`))).count, before);
  });

  it('edits kind and comments (created_by stays), refuses moving an entry to another request, and deletes', async () => {
    const cr = await requestId();
    const other = await requestId();
    const made = await created(writer.client.post(JOURNAL, entry(cr)));
    const editor = await actor(svc, `editor-${++n}`, grants(['view', 'change']));
    const edited = await ok(
      editor.client.patch(`${JOURNAL}${made.id}/`, { kind: 'warning', comments: 'Rollback plan missing.' }),
    );
    assert.equal(edited.kind, 'warning');
    assert.equal(edited.comments, 'Rollback plan missing.');
    assert.equal(edited.created_by.id, writer.id);
    expectStatus(await writer.client.patch(`${JOURNAL}${made.id}/`, { assigned_object_id: other }), 400);
    expectStatus(await writer.client.delete(`${JOURNAL}${made.id}/`), 204);
    expectStatus(await writer.client.get(`${JOURNAL}${made.id}/`), 404);
  });

  it('needs the journal permissions: view to read, add to create, change to edit, delete to delete (the author of an entry gets nothing more)', async () => {
    const cr = await requestId();
    const noJournal = await actor(svc, `nojournal-${++n}`, grants([]));
    expectStatus(await noJournal.client.get(JOURNAL), 403);
    expectStatus(await noJournal.client.post(JOURNAL, entry(cr)), 403);
    const addOnly = await actor(svc, `addonly-${++n}`, grants(['view', 'add']));
    const mine = await created(addOnly.client.post(JOURNAL, entry(cr)));
    expectStatus(await addOnly.client.patch(`${JOURNAL}${mine.id}/`, { kind: 'danger' }), 403);
    expectStatus(await addOnly.client.delete(`${JOURNAL}${mine.id}/`), 403);
    const viewOnly = await actor(svc, `viewonly-${++n}`, grants(['view']));
    expectStatus(await viewOnly.client.post(JOURNAL, entry(cr)), 403);
    assert.equal((await ok(viewOnly.client.get(`${JOURNAL}${mine.id}/`))).kind, 'info');
    expectStatus(await viewOnly.client.delete(`${JOURNAL}${mine.id}/`), 403);
    assert.equal((await ok(svc.admin.get(`${JOURNAL}${mine.id}/`))).kind, 'info');
  });

  it('an entry of a change request the caller cannot view does not exist for them: absent from lists, 404, and writing one is 400 "does not exist"', async () => {
    const cr = await requestId();
    const hidden = await created(writer.client.post(JOURNAL, entry(cr, { comments: 'hidden note' })));
    // Sees and writes journal entries, but only change requests they requested (this one is alice's).
    const outsider = await actor(
      svc,
      `outsider-${++n}`,
      grants(['view', 'add', 'change', 'delete'], { actions: ['view'], constraints: { requester: '$user' } }),
    );
    expectStatus(await outsider.client.get(`${REQUESTS}${cr}/`), 404);
    assert.ok(!ids(await outsider.client.get(`${JOURNAL}?limit=1000`)).includes(hidden.id));
    assert.equal((await ok(outsider.client.get(`${JOURNAL}?assigned_object_id=${cr}`))).count, 0);
    expectStatus(await outsider.client.get(`${JOURNAL}${hidden.id}/`), 404);
    expectStatus(await outsider.client.patch(`${JOURNAL}${hidden.id}/`, { kind: 'danger' }), 404);
    expectStatus(await outsider.client.delete(`${JOURNAL}${hidden.id}/`), 404);
    const res = await outsider.client.post(JOURNAL, entry(cr));
    expectStatus(res, 400);
    const unknown = (await outsider.client.post(JOURNAL, entry(999999))).body;
    assert.equal(
      JSON.stringify(res.body),
      JSON.stringify(unknown).replace('999999', String(cr)),
      'a hidden request answers as an unknown id',
    );
    assert.match(JSON.stringify(res.body.assigned_object_id), /does not exist/);
    // Without any view of change requests, no entry at all.
    const blind = await actor(svc, `blind-${++n}`, [
      ...grants(['view']).filter((g) => !g.object_types.includes(CR_TYPE)),
    ]);
    assert.equal((await ok(blind.client.get(JOURNAL))).count, 0);
    assert.equal((await ok(svc.admin.get(`${JOURNAL}${hidden.id}/`))).comments, 'hidden note');
  });

  it('the list filters on assigned_object_type, assigned_object_id, kind, created_by_id and created ranges, searches comments with q, and orders', async () => {
    const cr = await requestId();
    const other = await requestId();
    const a = await created(
      writer.client.post(JOURNAL, entry(cr, { kind: 'success', comments: 'Maintenance window agreed' })),
    );
    const b = await created(svc.admin.post(JOURNAL, entry(cr, { kind: 'danger', comments: 'Outage risk' })));
    const c = await created(writer.client.post(JOURNAL, entry(other, { kind: 'danger', comments: 'Unrelated' })));
    const q = async (query: string): Promise<number[]> =>
      ids(await writer.client.get(`${JOURNAL}?limit=1000&${query}`));
    assert.deepEqual(await q(`assigned_object_id=${cr}&ordering=id`), [a.id, b.id]);
    assert.deepEqual(await q(`assigned_object_id=${cr}&ordering=-id`), [b.id, a.id]);
    assert.deepEqual(await q(`assigned_object_id=${cr}&assigned_object_id=${other}&kind=danger&ordering=id`), [
      b.id,
      c.id,
    ]);
    assert.deepEqual(await q(`assigned_object_type=${CR_TYPE}&assigned_object_id=${other}`), [c.id]);
    assert.deepEqual(await q(`assigned_object_type=dcim.device`), []);
    assert.deepEqual(await q(`created_by_id=me&assigned_object_id=${cr}`), [a.id]);
    assert.deepEqual(await q(`created_by_id=${writer.id}&assigned_object_id=${other}`), [c.id]);
    assert.deepEqual(await q(`q=window agreed`), [a.id]);
    assert.deepEqual(await q(`assigned_object_id=${cr}&created__gte=${encodeURIComponent(a.created)}&ordering=id`), [
      a.id,
      b.id,
    ]);
    assert.deepEqual(await q(`assigned_object_id=${cr}&created__lt=${encodeURIComponent(a.created)}`), []);
    expectStatus(await writer.client.get(`${JOURNAL}?nonsense=1`), 400);
  });

  it('deleting a change request deletes its journal entries', async () => {
    const cr = await requestId();
    const made = await created(writer.client.post(JOURNAL, entry(cr)));
    expectStatus(await svc.admin.delete(`${REQUESTS}${cr}/`), 204);
    expectStatus(await svc.admin.get(`${JOURNAL}${made.id}/`), 404);
    assert.equal((await ok(svc.admin.get(`${JOURNAL}?assigned_object_id=${cr}`))).count, 0);
  });
});
