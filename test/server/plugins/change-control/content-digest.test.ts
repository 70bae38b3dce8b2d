import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { migrate, openDatabase } from '../../../../server/host/db/database';
import { hostMigrations } from '../../../../server/host/db/migrations/host';
import { branchingMigrations } from '../../../../server/plugins/branching/db/migrations';
import { digestOfChanges, formerDigestOfChanges } from '../../../../server/plugins/branching/digest';
import { changeControlMigrations } from '../../../../server/plugins/change-control/db/migrations';
import { startService, suiteService, withService, type TestService } from '../../../support/service';
import { CHANGES, created, detail, DEVICES, device, ok, REVIEWS, SITES } from './fixtures';
import { gateCast, scenario, type GateCast, type Scenario } from './gate-support';
import { forSuite } from '../../../support/prepared';

/** The documented algorithm, written again from its description (docs/digest-and-override.md). */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  return `{${Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}
async function documentedDigest(svc: TestService, branchId: number): Promise<string> {
  const changes = (await ok(svc.admin.get(`${CHANGES}?branch_id=${branchId}&limit=1000`))).results as any[];
  const state = Buffer.alloc(2048);
  for (const c of changes) {
    const lanes = createHash('shake256', { outputLength: 2048 })
      .update(`${canonical([c.object_type, c.object_id, c.original, c.modified])}\n`, 'utf8')
      .digest();
    for (let i = 0; i < 2048; i += 2) state.writeUInt16LE((state.readUInt16LE(i) + lanes.readUInt16LE(i)) % 65536, i);
  }
  return createHash('sha256').update(state).digest('hex');
}

async function reviewOf(s: Scenario, cast: GateCast): Promise<any> {
  return (await ok(cast.reviewer.client.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).results[0];
}

/** The device the scenario's branch created. */
async function branchDevice(s: Scenario): Promise<any> {
  return (await ok(s.inBranch.get(`${DEVICES}?name=${s.branch.name}-dev`))).results[0];
}

describe('change control: staleness by content (digest of the net diff)', () => {
  const svc = suiteService();
  const cast = forSuite(() => gateCast(svc));

  it('Digest: the request shows the digest of its branch net diff, computed as documented; each review shows the digest it was given on', async () => {
    const s = await scenario(cast, 'dg-field');
    const cr = await detail(cast.author.client, s.cr.id);
    assert.match(cr.digest, /^[0-9a-f]{64}$/);
    assert.equal(cr.digest, await documentedDigest(svc, s.branch.id));
    assert.equal((await reviewOf(s, cast)).digest, cr.digest);
    const listed = (await ok(cast.author.client.get(`/api/plugins/change-control/change-requests/?id=${s.cr.id}`)))
      .results[0];
    assert.equal(listed.digest, cr.digest, 'the list shows the same digest');

    await device(s.inBranch, { name: 'dg-field-second', status: 'planned' });
    const moved = await detail(cast.author.client, s.cr.id);
    assert.notEqual(moved.digest, cr.digest);
    assert.equal(moved.digest, await documentedDigest(svc, s.branch.id));
  });

  it('Staleness by content: an edit makes the approval stale; undoing the edit makes it count again', async () => {
    const s = await scenario(cast, 'dg-undo');
    const dev = await branchDevice(s);
    await ok(s.inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'active' }));
    assert.equal((await reviewOf(s, cast)).stale, true);
    assert.equal((await detail(cast.author.client, s.cr.id)).status, 'needs-review');

    await ok(s.inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' }));
    assert.equal((await reviewOf(s, cast)).stale, false, 'the net diff is the one approved');
    const cr = await detail(cast.author.client, s.cr.id);
    assert.equal(cr.status, 'approved');
    assert.equal(cr.ready_to_merge, true);
  });

  it('Staleness by content: a sync bringing unrelated changes from main keeps the approval; one that rebases a changed object makes it stale', async () => {
    const site = await created(svc.admin.post(SITES, { name: 'dg-site', status: 'active' }));
    const s = await scenario(cast, 'dg-sync');
    const digest = (await detail(cast.author.client, s.cr.id)).digest;
    await created(svc.admin.post(DEVICES, { name: 'dg-unrelated-on-main', status: 'active' }));
    await ok(cast.author.client.post(`/api/plugins/branching/branches/${s.branch.id}/sync/`, { commit: true }));
    assert.equal((await detail(cast.author.client, s.cr.id)).digest, digest);
    assert.equal((await reviewOf(s, cast)).stale, false);
    assert.equal((await detail(cast.author.client, s.cr.id)).status, 'approved');

    // The branch changes the site; main changes another attribute of it; the sync rebases the change.
    await ok(s.inBranch.patch(`${SITES}${site.id}/`, { status: 'planned' }));
    await ok(cast.reviewer.client.patch(`${REVIEWS}${(await reviewOf(s, cast)).id}/`, {}));
    assert.equal((await reviewOf(s, cast)).stale, false);
    await ok(svc.admin.patch(`${SITES}${site.id}/`, { description: 'moved on main' }));
    await ok(cast.author.client.post(`/api/plugins/branching/branches/${s.branch.id}/sync/`, { commit: true }));
    assert.equal((await reviewOf(s, cast)).stale, true, 'what the branch changes now differs from what was approved');
  });

  it('stale_approval_basis "write": any write in the branch makes the approval stale, and undoing it does not restore it', async () => {
    await withService(
      startService({ config: { change_control: { stale_approval_basis: 'write' } } }),
      async (other) => {
        const c = await gateCast(other);
        const s = await scenario(c, 'dg-write');
        const dev = (await ok(s.inBranch.get(`${DEVICES}?name=dg-write-dev`))).results[0];
        await ok(s.inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'active' }));
        await ok(s.inBranch.patch(`${DEVICES}${dev.id}/`, { status: 'planned' }));
        assert.equal((await reviewOf(s, c)).stale, true);
        assert.equal((await detail(c.author.client, s.cr.id)).status, 'needs-review');
      },
    );
  });
});

describe('change control: digests recorded before the multiset hash', () => {
  it('Digest: a digest recorded under the former algorithm that matches the branch now is rewritten by the migration to the digest of the same content; an older one stays', async () => {
    const { db, close } = openDatabase(':memory:');
    try {
      const { '20-change-control-0025-multiset-digests': rewrite, ...earlier } = changeControlMigrations;
      assert.ok(rewrite);
      await migrate(db, { ...hostMigrations, ...branchingMigrations, ...earlier });
      const now = '2026-11-01T09:00:00.000Z';
      const changes = [
        { objectType: 'dcim.site', objectId: 7, original: null, modified: { name: 's', slug: 's' } },
        {
          objectType: 'dcim.device',
          objectId: 9,
          original: { name: 'd', status: 'active' },
          modified: { name: 'd', status: 'planned' },
        },
      ];
      const former = formerDigestOfChanges(changes);
      const older = formerDigestOfChanges(changes.slice(0, 1));
      await sql`INSERT INTO users (id, username) VALUES (1, 'u'), (2, 'v')`.execute(db);
      await sql`INSERT INTO branches (id, name, description, status, schema_id, created, last_updated) VALUES (1, 'b', '', 'ready', 'sabc', ${now}, ${now})`.execute(
        db,
      );
      for (const c of changes) {
        await sql`INSERT INTO branch_changes (branch_id, object_type, object_id, action, original, modified, created, last_updated)
          VALUES (1, ${c.objectType}, ${c.objectId}, ${c.original ? 'update' : 'create'}, ${c.original ? JSON.stringify(c.original) : null}, ${JSON.stringify(c.modified)}, ${now}, ${now})`.execute(
          db,
        );
      }
      await sql`INSERT INTO cc_change_requests (id, branch_id, branch_name, title, digest, created, last_updated) VALUES (1, 1, 'b', 't', ${former}, ${now}, ${now})`.execute(
        db,
      );
      await sql`INSERT INTO cc_reviews (id, change_request_id, reviewer_id, decision, digest, created, last_updated) VALUES (1, 1, 1, 'approved', ${former}, ${now}, ${now}), (2, 1, 2, 'approved', ${older}, ${now}, ${now})`.execute(
        db,
      );
      await sql`INSERT INTO cc_merge_checks (id, change_request_id, name, label, digest, created, last_updated) VALUES (1, 1, 'ci/build', 'CI', ${former}, ${now}, ${now})`.execute(
        db,
      );
      await migrate(db, { ...hostMigrations, ...branchingMigrations, ...changeControlMigrations });
      const digest = digestOfChanges(changes);
      assert.notEqual(digest, former);
      assert.deepEqual((await sql<{ digest: string }>`SELECT digest FROM cc_change_requests`.execute(db)).rows, [
        { digest },
      ]);
      assert.deepEqual((await sql<{ digest: string }>`SELECT digest FROM cc_reviews ORDER BY id`.execute(db)).rows, [
        { digest },
        { digest: older },
      ]);
      assert.deepEqual((await sql<{ digest: string }>`SELECT digest FROM cc_merge_checks`.execute(db)).rows, [
        { digest },
      ]);
    } finally {
      await close();
    }
  });
});
