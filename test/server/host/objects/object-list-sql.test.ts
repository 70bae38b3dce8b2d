import assert from 'node:assert/strict';
import { matchesObjectFilters, parseObjectFilters } from '../../../../server/host/http/object-filters';
import { sortObjects } from '../../../../server/host/http/query';
import { eachTestService } from '../../../support/service';
import { createBranch, createUser, DEVICES } from '../../plugins/branching/fixtures';

type Attrs = Record<string, unknown>;

/** A small seeded generator (mulberry32): the same sequence on every run. */
function rng(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

const STATUSES = ['active', 'planned', 'offline'];
const TAGS = ['a', 'b', 'c'];
const ORDERINGS = ['', 'name', '-name', 'status,-site', '-id', 'site', 'status,name'];

function randomAttrs(r: ReturnType<typeof rng>): Attrs {
  const attrs: Attrs = { site: 1 + r.int(4), tags: TAGS.filter(() => r.next() < 0.4) };
  if (r.next() < 0.8) attrs.name = `dev-${'xyzw'[r.int(4)]}${r.int(50)}`;
  if (r.next() < 0.85) attrs.status = r.pick(STATUSES);
  if (r.next() < 0.3) attrs.tenant = r.pick(['blue', 'red']);
  return attrs;
}

/** What the list should answer, computed in code from the objects the test wrote (the reference the SQL must equal). */
function expected(objects: Map<number, Attrs>, params: URLSearchParams, visible: (a: Attrs) => boolean) {
  const query: Record<string, string[]> = {};
  for (const [k, v] of params) if (!['limit', 'offset', 'ordering'].includes(k)) (query[k] ??= []).push(v);
  const filters = parseObjectFilters(query);
  const rows = [...objects].map(([id, attrs]) => ({ ...attrs, id })).filter((o) => visible(o));
  const matching = rows.filter((o) => matchesObjectFilters({ ...o, url: '', display: '' }, filters));
  const raw = params.get('ordering');
  const ordering = raw
    ? raw.split(',').map((p) => ({ field: p.replace(/^-/, ''), desc: p.startsWith('-') }))
    : [{ field: 'id', desc: false }];
  if (ordering.at(-1)!.field !== 'id') ordering.push({ field: 'id', desc: false });
  const sorted = sortObjects(matching, ordering);
  const offset = Number(params.get('offset') ?? 0);
  const limit = Number(params.get('limit') ?? 50);
  return { count: sorted.length, ids: sorted.slice(offset, offset + limit).map((o) => o.id) };
}

describe('object lists paged in SQL', () => {
  const svc = eachTestService();

  it('filters, view constraints, ordering, count and paging in SQL equal the in-code reference, on main and in a branch', async function () {
    this.timeout(60_000);
    const r = rng(20261128);
    const main = new Map<number, Attrs>();
    const made = await svc.admin.post(
      DEVICES,
      Array.from({ length: 60 }, () => randomAttrs(r)),
    );
    assert.equal(made.status, 201);
    for (const o of made.body as Array<Attrs & { id: number }>) {
      const attrs: Attrs = {};
      for (const k of ['name', 'status', 'site', 'tags', 'tenant']) if (k in o) attrs[k] = o[k];
      main.set(o.id, attrs);
    }

    // A branch: objects created, updated (merged, as PATCH does) and deleted.
    const branch = await createBranch(svc, 'paging');
    const client = svc.admin.inBranch(branch.schema_id);
    const inBranch = new Map([...main].map(([id, a]) => [id, { ...a }]));
    const created = await client.post(
      DEVICES,
      Array.from({ length: 15 }, () => randomAttrs(r)),
    );
    for (const o of created.body as Array<Attrs & { id: number }>) {
      const attrs: Attrs = {};
      for (const k of ['name', 'status', 'site', 'tags', 'tenant']) if (k in o) attrs[k] = o[k];
      inBranch.set(o.id, attrs);
    }
    const ids = [...main.keys()];
    const updates = ids.slice(0, 15).map((id) => ({ id, status: r.pick(STATUSES), site: 1 + r.int(4) }));
    assert.equal((await client.patch(DEVICES, updates)).status, 200);
    for (const u of updates) Object.assign(inBranch.get(u.id)!, { status: u.status, site: u.site });
    const deletes = ids.slice(15, 25).map((id) => ({ id }));
    assert.equal((await client.request('DELETE', DEVICES, deletes)).status, 204);
    for (const d of deletes) inBranch.delete(d.id);

    const blue = await createUser(svc, 'blue', [
      { object_types: ['dcim.device'], actions: ['view'], constraints: [{ tenant: 'blue' }, { site: 2 }] },
      { object_types: ['branching.branch'], actions: ['view'] },
    ]);
    const blueSees = (o: Attrs) => o.tenant === 'blue' || o.site === 2;

    for (let i = 0; i < 60; i++) {
      const params = new URLSearchParams();
      if (r.next() < 0.4) for (const s of STATUSES.filter(() => r.next() < 0.5)) params.append('status', s);
      if (r.next() < 0.3) params.append('site', String(1 + r.int(4)));
      if (r.next() < 0.3) params.append('tags', r.pick(TAGS));
      if (r.next() < 0.2) params.append('q', r.pick(['x', 'Y', 'dev-z', '1']));
      if (r.next() < 0.15)
        for (const id of [...inBranch.keys()].filter(() => r.next() < 0.2)) params.append('id', String(id));
      const ordering = r.pick(ORDERINGS);
      if (ordering) params.set('ordering', ordering);
      params.set('limit', String(1 + r.int(20)));
      params.set('offset', String(r.int(40)));
      const asBlue = r.next() < 0.3;
      const useBranch = r.next() < 0.5;
      const caller = asBlue ? blue.client : svc.admin;
      const answer = await (useBranch ? caller.inBranch(branch.schema_id) : caller).get(`${DEVICES}?${params}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const want = expected(useBranch ? inBranch : main, params, asBlue ? blueSees : () => true);
      const what = `${useBranch ? 'branch' : 'main'}${asBlue ? ' as blue' : ''}: ?${params}`;
      assert.equal(answer.body.count, want.count, what);
      assert.deepEqual(
        answer.body.results.map((o: { id: number }) => o.id),
        want.ids,
        what,
      );
    }
  });
});
