import assert from 'node:assert/strict';
import { eachTestService, instancesForEachTest, type ApiClient, type ApiResponse } from '../../../support/service';
import { CHANGES, changelogOf, createBranch, createUser } from '../../plugins/branching/fixtures';

const DEVICES = '/api/dcim/devices/';

function etagOf(res: ApiResponse): string {
  const tag = res.headers.get('etag');
  assert.ok(tag, `an ETag (status ${res.status}: ${JSON.stringify(res.body)})`);
  return tag;
}

const ifMatch = (value: string) => ({ headers: { 'If-Match': value } });

async function createdDevice(client: ApiClient, attrs: Record<string, unknown>): Promise<{ id: number; etag: string }> {
  const res = await client.post(DEVICES, attrs);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.id, etag: etagOf(res) };
}

describe('source-of-truth objects: ETag and If-Match', () => {
  const svc = eachTestService();

  it('an object carries an ETag in its detail and write answers that moves with every write of it, even two in one millisecond', async () => {
    const dev = await createdDevice(svc.admin, { name: 'sw1', status: 'active' });
    const read = await svc.admin.get(`${DEVICES}${dev.id}/`);
    assert.equal(etagOf(read), dev.etag, 'the create answers the ETag a read gives');
    assert.match(dev.etag, /^"[^"]+"$/, 'a strong entity tag');

    // The manual clock does not move: both writes fall within one millisecond.
    const first = await svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'planned' });
    const second = await svc.admin.put(`${DEVICES}${dev.id}/`, { name: 'sw1', status: 'offline' });
    const tags = [dev.etag, etagOf(first), etagOf(second)];
    assert.equal(new Set(tags).size, 3, tags.join(' '));
    assert.equal(etagOf(await svc.admin.get(`${DEVICES}${dev.id}/`)), tags[2]);

    // A write that changes nothing keeps the version; a write of another object leaves it alone.
    const same = await svc.admin.patch(`${DEVICES}${dev.id}/`, { status: 'offline' });
    assert.equal(etagOf(same), tags[2]);
    await createdDevice(svc.admin, { name: 'sw2' });
    assert.equal(etagOf(await svc.admin.get(`${DEVICES}${dev.id}/`)), tags[2]);

    // A conditional read is answered by the same version (fetch adds no-cache unless told otherwise).
    const notModified = await svc.admin.get(`${DEVICES}${dev.id}/`, {
      headers: { 'If-None-Match': tags[2]!, 'Cache-Control': 'max-age=0' },
    });
    assert.equal(notModified.status, 304);
  });

  it('a stale If-Match is refused with 412 and nothing is written (PATCH, PUT, DELETE)', async () => {
    const dev = await createdDevice(svc.admin, { name: 'sw1', rack: 'R1' });
    const theirs = await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 'R2' });
    assert.equal(theirs.status, 200);
    const logged = (await changelogOf(svc, 'dcim.device', dev.id)).length;

    for (const [method, body] of [
      ['PATCH', { rack: 'R3' }],
      ['PUT', { name: 'sw1', rack: 'R3' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await svc.admin.request(method, `${DEVICES}${dev.id}/`, body, ifMatch(dev.etag));
      assert.equal(res.status, 412, `${method}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.detail, /has changed since the version If-Match names/);
    }
    const now = await svc.admin.get(`${DEVICES}${dev.id}/`);
    assert.equal(now.body.rack, 'R2', 'their write stands');
    assert.equal(etagOf(now), etagOf(theirs));
    assert.equal((await changelogOf(svc, 'dcim.device', dev.id)).length, logged, 'nothing logged');
  });

  it('If-Match holds for the current ETag, for *, and for a list naming it; a weak tag never matches', async () => {
    const dev = await createdDevice(svc.admin, { name: 'sw1', rack: 'R1' });
    const one = await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 'R2' }, ifMatch(dev.etag));
    assert.equal(one.status, 200);
    const two = await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 'R3' }, ifMatch('*'));
    assert.equal(two.status, 200);
    const three = await svc.admin.patch(
      `${DEVICES}${dev.id}/`,
      { rack: 'R4' },
      ifMatch(`"nope", ${dev.etag},${etagOf(two)}`),
    );
    assert.equal(three.status, 200, JSON.stringify(three.body));
    const weak = await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 'R5' }, ifMatch(`W/${etagOf(three)}`));
    assert.equal(weak.status, 412, 'strong comparison');
    const del = await svc.admin.delete(`${DEVICES}${dev.id}/`, ifMatch(etagOf(three)));
    assert.equal(del.status, 204);
    assert.equal((await svc.admin.delete(`${DEVICES}${dev.id}/`, ifMatch('*'))).status, 404, '* on nothing');
  });

  it('a malformed If-Match is a 400 naming the header, and a list write takes none', async () => {
    const dev = await createdDevice(svc.admin, { name: 'sw1', rack: 'R1' });
    for (const bad of ['abc', '', 'W/', '"a" "b"', '*, "a"', '"a', 'W/x']) {
      const res = await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 'R9' }, ifMatch(bad));
      assert.equal(res.status, 400, `${bad}: ${JSON.stringify(res.body)}`);
      assert.ok(res.body['If-Match'], JSON.stringify(res.body));
    }
    assert.equal((await svc.admin.delete(`${DEVICES}${dev.id}/`, ifMatch('x'))).status, 400);
    const bulk = await svc.admin.patch(DEVICES, [{ id: dev.id, rack: 'R9' }], ifMatch(dev.etag));
    assert.equal(bulk.status, 400);
    assert.ok(bulk.body['If-Match'], JSON.stringify(bulk.body));
    assert.equal((await svc.admin.request('DELETE', DEVICES, [{ id: dev.id }], ifMatch('*'))).status, 400);
    assert.equal((await svc.admin.get(`${DEVICES}${dev.id}/`)).body.rack, 'R1', 'nothing written');
  });

  it('a write without If-Match is unchanged: it writes over any version, as NetBox clients expect', async () => {
    const dev = await createdDevice(svc.admin, { name: 'sw1', rack: 'R1' });
    await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 'R2' });
    const res = await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 'R3' });
    assert.equal(res.status, 200);
    assert.equal(res.body.rack, 'R3');
    assert.equal((await svc.admin.delete(`${DEVICES}${dev.id}/`)).status, 204);
  });

  it('permissions are judged before If-Match: an object the caller may not view is 404, one it may not change 403, whatever the ETag', async () => {
    const hidden = await createdDevice(svc.admin, { name: 'hidden', rack: 'R1' });
    const fixed = await createdDevice(svc.admin, { name: 'fixed', rack: 'R1' });
    await svc.admin.patch(`${DEVICES}${hidden.id}/`, { rack: 'R2' });
    await svc.admin.patch(`${DEVICES}${fixed.id}/`, { rack: 'R2' });
    const carol = await createUser(svc, 'carol', [
      { object_types: ['dcim.device'], actions: ['view', 'delete'], constraints: { name: 'fixed' } },
      { object_types: ['dcim.device'], actions: ['change'], constraints: { name: 'other' } },
    ]);
    for (const tag of [hidden.etag, '"nope"', '*']) {
      assert.equal((await carol.client.patch(`${DEVICES}${hidden.id}/`, { rack: 'R3' }, ifMatch(tag))).status, 404);
      assert.equal((await carol.client.delete(`${DEVICES}${hidden.id}/`, ifMatch(tag))).status, 404);
      assert.equal((await carol.client.patch(`${DEVICES}${fixed.id}/`, { rack: 'R3' }, ifMatch(tag))).status, 403);
    }
    // Allowed, the stale version is what refuses.
    assert.equal((await carol.client.delete(`${DEVICES}${fixed.id}/`, ifMatch(fixed.etag))).status, 412);
    const noChange = await createUser(svc, 'dan', [{ object_types: ['dcim.device'], actions: ['view'] }]);
    assert.equal((await noChange.client.put(`${DEVICES}${fixed.id}/`, { name: 'x' }, ifMatch('"nope"'))).status, 403);
  });

  it('an object has its own ETag in each branch and on main; a version of one context never passes in another', async () => {
    const dev = await createdDevice(svc.admin, { name: 'sw1', rack: 'R1' });
    const b1 = await createBranch(svc, 'one');
    const b2 = await createBranch(svc, 'two');
    const in1 = svc.admin.inBranch(b1.schema_id);
    const in2 = svc.admin.inBranch(b2.schema_id);
    const untouched1 = etagOf(await in1.get(`${DEVICES}${dev.id}/`));
    const untouched2 = etagOf(await in2.get(`${DEVICES}${dev.id}/`));
    assert.equal(new Set([dev.etag, untouched1, untouched2]).size, 3, 'three contexts, three tags');
    assert.equal((await in1.patch(`${DEVICES}${dev.id}/`, { rack: 'R5' }, ifMatch(dev.etag))).status, 412, "main's");
    assert.equal((await in1.patch(`${DEVICES}${dev.id}/`, { rack: 'R5' }, ifMatch(untouched2))).status, 412);

    const written = await in1.patch(`${DEVICES}${dev.id}/`, { rack: 'R5' }, ifMatch(untouched1));
    assert.equal(written.status, 200, JSON.stringify(written.body));
    const changed1 = etagOf(written);
    assert.notEqual(changed1, untouched1);
    assert.equal(etagOf(await svc.admin.get(`${DEVICES}${dev.id}/`)), dev.etag, "main's version stays");
    assert.equal(etagOf(await in2.get(`${DEVICES}${dev.id}/`)), untouched2, "the other branch's stays");
    assert.equal((await svc.admin.patch(`${DEVICES}${dev.id}/`, { rack: 'R6' }, ifMatch(changed1))).status, 412);

    // Two writes in the branch within one millisecond: two versions.
    const again = await in1.patch(`${DEVICES}${dev.id}/`, { rack: 'R7' }, ifMatch(changed1));
    assert.equal(again.status, 200);
    assert.notEqual(etagOf(again), changed1);
    assert.equal((await in1.patch(`${DEVICES}${dev.id}/`, { rack: 'R8' }, ifMatch(changed1))).status, 412);

    // A write on main moves main's version as every branch not changing the object sees it.
    const onMain = await svc.admin.patch(`${DEVICES}${dev.id}/`, { serial: 'X' }, ifMatch(dev.etag));
    assert.equal(onMain.status, 200);
    assert.notEqual(etagOf(await in2.get(`${DEVICES}${dev.id}/`)), untouched2);
    assert.equal(etagOf(await in1.get(`${DEVICES}${dev.id}/`)), etagOf(again), "the branch's change stands");

    // The change reverted and written again: never a version seen before.
    const change = (await svc.admin.get(`${CHANGES}?branch_id=${b1.id}&object_id=${dev.id}`)).body.results[0];
    assert.equal((await svc.admin.post(`${CHANGES}${change.id}/revert/`, {})).status, 200);
    const reverted = etagOf(await in1.get(`${DEVICES}${dev.id}/`));
    const rewritten = await in1.patch(`${DEVICES}${dev.id}/`, { rack: 'R5' }, ifMatch(reverted));
    assert.equal(rewritten.status, 200);
    const seen = [untouched1, changed1, etagOf(again), reverted];
    assert.ok(!seen.includes(etagOf(rewritten)), `${etagOf(rewritten)} among ${seen.join(' ')}`);
  });
});

// Writes take one lock of the database in turn (every instance's): the second save reads the
// version the first one wrote.
describe('source-of-truth objects: two saves at once with one If-Match', () => {
  const [a, b] = instancesForEachTest();

  it('two saves at once with the same If-Match, on two instances, write once: one answers 200, the other 412', async () => {
    const dev = await createdDevice(a.admin, { name: 'sw1', rack: 'R1' });
    const branch = await createBranch(a, 'race');
    const inBranch = (client: ApiClient) => client.inBranch(branch.schema_id);
    for (const [label, via] of [
      ['main', (c: ApiClient) => c],
      ['branch', inBranch],
    ] as const) {
      const tag = etagOf(await via(a.admin).get(`${DEVICES}${dev.id}/`));
      const saves = await Promise.all(
        [a, b].map((svc, n) =>
          via(svc.admin).put(`${DEVICES}${dev.id}/`, { name: 'sw1', rack: `${label}-${n}` }, ifMatch(tag)),
        ),
      );
      assert.deepEqual(
        saves.map((s) => s.status).sort(),
        [200, 412],
        `${label}: ${JSON.stringify(saves.map((s) => s.body))}`,
      );
      const winner = saves.find((s) => s.status === 200)!;
      const now = await via(b.admin).get(`${DEVICES}${dev.id}/`);
      assert.equal(now.body.rack, winner.body.rack, label);
      assert.equal(etagOf(now), etagOf(winner), label);
    }
    const log = await a.host.db
      .selectFrom('object_changes')
      .select('id')
      .where('changed_object_type', '=', 'dcim.device')
      .where('changed_object_id', '=', dev.id)
      .execute();
    assert.equal(log.length, 3, 'the create and one save in each context');
  });
});
