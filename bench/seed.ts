import SQLite from 'better-sqlite3';
import { Api, CC } from './api';

/**
 * Seeding. Small, realistic data goes through the REST API (so every refresh and changelog
 * entry is real); bulk rows (thousands of changes or change requests) are written straight into
 * the service's SQLite file, which WAL mode allows while the service runs.
 */

export async function user(
  admin: Api,
  username: string,
  groups: number[] = [],
): Promise<{ id: number; token: string }> {
  const u = await admin.post('/api/users/users/', { username, groups });
  const t = await admin.post('/api/users/tokens/', { user: u.id });
  return { id: u.id, token: t.key };
}

export async function grantAll(admin: Api, userIds: number[]): Promise<void> {
  const types = [
    'change_control.changerequest',
    'change_control.review',
    'change_control.mergecheck',
    'change_control.changecomment',
    'change_control.policy',
    'change_control.policyrule',
  ];
  await admin.post('/api/users/permissions/', {
    name: `bench-${userIds.join('-')}`,
    object_types: types,
    actions: ['view', 'add', 'change'],
    users: userIds,
  });
  await admin.post('/api/users/permissions/', {
    name: `bench-branches-${userIds.join('-')}`,
    object_types: ['branching.branch', 'branching.changediff', 'dcim.device', 'dcim.site'],
    actions: ['view'],
    users: userIds,
  });
}

/**
 * Scenario 1's request: 3 policies × 2 rules, 200 changes, 10 reviews, 8 checks
 * (the four built-ins, two required external checks from the configuration, two named by a policy).
 */
export async function seedDetailScenario(
  admin: Api,
): Promise<{ crId: number; reviewerTokens: string[]; commentReviews: Array<{ id: number; token: string }> }> {
  const author = await user(admin, 'bench-author');
  const reviewers = [];
  for (let i = 0; i < 10; i++) reviewers.push(await user(admin, `bench-reviewer-${i}`));
  await grantAll(admin, [author.id, ...reviewers.map((r) => r.id)]);
  const teamA = await admin.post('/api/users/groups/', { name: 'bench-team-a' });
  const teamB = await admin.post('/api/users/groups/', { name: 'bench-team-b' });
  for (const [i, r] of reviewers.entries())
    await admin.patch(`/api/users/users/${r.id}/`, { groups: [i % 2 === 0 ? teamA.id : teamB.id] });

  const policies = [
    { name: 'bench-devices', object_types: ['dcim.device'], checks: ['has-changes', 'no-conflicts'] },
    {
      name: 'bench-core',
      object_types: ['dcim.device'],
      conditions: { attr: 'role', op: 'eq', value: 'core' },
      checks: ['not-stale', 'threads-resolved'],
    },
    { name: 'bench-any', object_types: [], checks: ['security/scan', 'lab/validate'] },
  ];
  for (const [i, p] of policies.entries()) {
    const made = await admin.post(`${CC}policies/`, p);
    await admin.post(`${CC}policy-rules/`, { policy: made.id, name: 'team-a', min_reviews: 2, groups: [teamA.id] });
    await admin.post(`${CC}policy-rules/`, {
      policy: made.id,
      name: 'named',
      min_reviews: 1,
      users: [reviewers[i]!.id, reviewers[i + 3]!.id],
    });
  }

  const authorApi = new Api(admin.base, author.token);
  const branch = await admin.post('/api/plugins/branching/branches/', { name: 'bench-detail' });
  const inBranch = admin.inBranch(branch.schema_id);
  for (let i = 0; i < 200; i++)
    await inBranch.post('/api/dcim/devices/', { name: `dev-${i}`, role: i % 10 === 0 ? 'core' : 'edge', site: i % 7 });
  const cr = await authorApi.post(`${CC}change-requests/`, {
    branch: branch.id,
    ref: 'BENCH-1',
    title: 'Bench detail',
  });
  await authorApi.post(`${CC}change-requests/${cr.id}/submit/`);
  const commentReviews: Array<{ id: number; token: string }> = [];
  for (const [i, r] of reviewers.entries()) {
    const review = await new Api(admin.base, r.token).post(`${CC}reviews/`, {
      change_request: cr.id,
      decision: i < 7 ? 'approve' : 'comment',
      comment: `Looks ${i}`,
    });
    if (i >= 7) commentReviews.push({ id: review.id as number, token: r.token });
  }
  return { crId: cr.id, reviewerTokens: reviewers.map((r) => r.token), commentReviews };
}

/** Scenario 3's checks: one submitted request carrying 64 reported checks named by a policy. */
export async function seedReportScenario(admin: Api): Promise<number[]> {
  const names = Array.from({ length: 64 }, (_, i) => `pipeline/${i}`);
  await admin.post(`${CC}policies/`, { name: 'bench-pipelines', object_types: ['dcim.site'], checks: names });
  const branch = await admin.post('/api/plugins/branching/branches/', { name: 'bench-report' });
  await admin.inBranch(branch.schema_id).post('/api/dcim/sites/', { name: 'bench-site' });
  const cr = await admin.post(`${CC}change-requests/`, { branch: branch.id, title: 'Bench reports' });
  await admin.post(`${CC}change-requests/${cr.id}/submit/`);
  const checks = await admin.get(`${CC}checks/?change_request_id=${cr.id}&limit=1000`);
  return checks.results
    .filter((c: { name: string }) => c.name.startsWith('pipeline/'))
    .map((c: { id: number }) => c.id);
}

/**
 * Writes made beside the service (on a connection of their own) move the data version, as the
 * service's own write transactions do, so that its caches see them (docs/architecture.md).
 */
function moveDataVersion(db: SQLite.Database): void {
  db.prepare('UPDATE data_version SET version = version + 1 WHERE id = 1').run();
}

/**
 * Change rows written beside the service move their branch's changes revision, as the
 * service's own writes do, so that state kept per branch is rebuilt before it is read
 * (`server/host/objects/branch-state.ts`).
 */
function moveChangesRevision(db: SQLite.Database, branchId: number): void {
  db.prepare('UPDATE branches SET changes_revision = changes_revision + 1 WHERE id = ?').run(branchId);
}

/** Scenario 8's rare type: the branches of 25 of scenario 2's requests (all open) touch it. */
export const RARE_TYPE = 'ipam.vlan';
const isRare = (i: number) => i % 798 === 0 && i / 798 < 25;

/**
 * Scenario 2's data: `count` change requests (each on its own branch), about a third with gates
 * cleared. Each branch creates one object: an interface, or on 25 of them (scenario 8) a VLAN.
 */
export function seedManyRequests(dbFile: string, count: number, requesterId: number): void {
  const db = new SQLite(dbFile);
  db.pragma('busy_timeout = 10000');
  const now = new Date().toISOString();
  const insertBranch = db.prepare(
    `INSERT INTO branches (name, description, status, schema_id, owner, last_sync, merged_time, merged_by, created, last_updated)
     VALUES (?, '', 'ready', ?, ?, NULL, NULL, NULL, ?, ?)`,
  );
  const insertRequest = db.prepare(
    `INSERT INTO cc_change_requests (branch_id, branch_name, branch_deleted, title, description, ref, status, priority, requester_id,
       scheduled_start, scheduled_end, auto_merge, comments, approved, gates_cleared, has_conflicts, created, last_updated)
     VALUES (?, ?, 0, ?, '', ?, ?, 'medium', ?, NULL, NULL, 0, '', ?, ?, 0, ?, ?)`,
  );
  const insertChange = db.prepare(
    `INSERT INTO branch_changes (branch_id, object_type, object_id, action, original, modified, premerge, created, last_updated)
     VALUES (?, ?, ?, 'create', NULL, ?, NULL, ?, ?)`,
  );
  const firstObjectId = 5_000_000;
  const statuses = ['draft', 'needs-review', 'approved', 'rejected', 'completed', 'abandoned'];
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const name = `bulk-${i}`;
      const branchId = Number(
        insertBranch.run(name, `b${i.toString(36).padStart(7, '0')}`, requesterId, now, now).lastInsertRowid,
      );
      const cleared = i % 3 === 0 ? 1 : 0;
      const status = cleared ? 'approved' : statuses[i % statuses.length]!;
      insertRequest.run(
        branchId,
        name,
        `Bulk change ${i}`,
        `BULK-${i}`,
        status,
        requesterId,
        cleared,
        cleared,
        now,
        now,
      );
      const type = isRare(i) ? RARE_TYPE : 'dcim.interface';
      insertChange.run(
        branchId,
        type,
        firstObjectId + i,
        JSON.stringify(isRare(i) ? { vid: 100 + (i % 3000), name: `vlan-${i}` } : { name: `eth${i}` }),
        now,
        now,
      );
      moveChangesRevision(db, branchId);
    }
    db.prepare(
      `INSERT INTO sequences (name, value) VALUES ('objects', ?) ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`,
    ).run(firstObjectId + count);
    moveDataVersion(db);
  })();
  db.close();
}

/**
 * Scenario 4's branch: `changes` updates of devices (objects on main plus the branch's net
 * effect), written in bulk. Returns nothing; the branch is found by name.
 */
export function seedBranchChanges(dbFile: string, branchId: number, changes: number, firstObjectId: number): void {
  const db = new SQLite(dbFile);
  db.pragma('busy_timeout = 10000');
  const now = new Date().toISOString();
  const insertObject = db.prepare(
    `INSERT INTO objects (id, object_type, data, created, last_updated) VALUES (?, 'dcim.device', ?, ?, ?)`,
  );
  const insertChange = db.prepare(
    `INSERT INTO branch_changes (branch_id, object_type, object_id, action, original, modified, premerge, created, last_updated)
     VALUES (?, 'dcim.device', ?, 'update', ?, ?, NULL, ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < changes; i++) {
      const id = firstObjectId + i;
      const original = JSON.stringify({
        name: `bulk-dev-${id}`,
        site: `site-${i % 500}`,
        status: 'active',
        role: 'edge',
        serial: `SN${id}`,
      });
      const modified = JSON.stringify({
        name: `bulk-dev-${id}`,
        site: `site-${i % 500}`,
        status: i % 2 ? 'planned' : 'active',
        role: 'edge',
        serial: `SN${id}-new`,
      });
      insertObject.run(id, original, now, now);
      insertChange.run(branchId, id, original, modified, now, now);
    }
    db.prepare(
      `INSERT INTO sequences (name, value) VALUES ('objects', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    ).run(firstObjectId + changes);
    moveChangesRevision(db, branchId);
    moveDataVersion(db);
  })();
  db.close();
}

/** Fifty policies carrying conditions, for the submit scenario (a few match, most must scan every change). */
export async function seedConditionPolicies(admin: Api): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const conditions =
      i % 5 === 0
        ? {
            and: [
              { attr: 'site', op: 'eq', value: `site-${i}` },
              { attr: 'status', op: 'changed' },
            ],
          }
        : {
            or: [
              { attr: 'role', op: 'eq', value: `role-${i}` },
              { attr: 'snapshots.prechange.serial', op: 'regex', value: `^XX${i}$` },
            ],
          };
    const p = await admin.post(`${CC}policies/`, {
      name: `bench-cond-${i}`,
      object_types: ['dcim.device'],
      conditions,
      condition_state: i % 3 === 0 ? 'after' : 'either',
    });
    await admin.post(`${CC}policy-rules/`, { policy: p.id, name: 'one', min_reviews: 1, users: [1] });
  }
}

/**
 * Scenario 5's threads: `threads` root comments on the request's changes, each naming an
 * attribute (half still differ, half no longer do), written in bulk.
 */
export function seedCommentThreads(dbFile: string, crId: number, threads: number, authorId: number): void {
  const db = new SQLite(dbFile);
  db.pragma('busy_timeout = 10000');
  const now = new Date().toISOString();
  const branch = db.prepare('SELECT branch_id FROM cc_change_requests WHERE id = ?').get(crId) as { branch_id: number };
  const changes = db
    .prepare('SELECT id, object_type, object_id FROM branch_changes WHERE branch_id = ? ORDER BY id')
    .all(branch.branch_id) as Array<{ id: number; object_type: string; object_id: number }>;
  const insert = db.prepare(
    `INSERT INTO cc_change_comments (change_request_id, change_diff_id, change_object_type, change_object_id, change_label, text, author_id, parent_id, attribute, resolved, edited, created, last_updated)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, 0, 0, ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < threads; i++) {
      const c = changes[i % changes.length]!;
      insert.run(
        crId,
        c.id,
        c.object_type,
        c.object_id,
        `dev-${i}`,
        `Why is **${i % 2 ? 'role' : 'name'}** set this way?`,
        authorId,
        i % 2 ? 'role' : 'name',
        now,
        now,
      );
    }
    moveDataVersion(db);
  })();
  db.close();
}

/**
 * Scenario 16's data: `count` objects of `objectType` on main (ids from `firstObjectId`), and
 * `changes` of them updated in branch `branchId` (every `count / changes`-th), written in bulk.
 */
export function seedManyObjects(
  dbFile: string,
  objectType: string,
  count: number,
  firstObjectId: number,
  branchId: number,
  changes: number,
): void {
  const db = new SQLite(dbFile);
  db.pragma('busy_timeout = 10000');
  const now = new Date().toISOString();
  const insertObject = db.prepare(
    `INSERT INTO objects (id, object_type, data, created, last_updated) VALUES (?, ?, ?, ?, ?)`,
  );
  const insertChange = db.prepare(
    `INSERT INTO branch_changes (branch_id, object_type, object_id, action, original, modified, premerge, created, last_updated)
     VALUES (?, ?, ?, 'update', ?, ?, NULL, ?, ?)`,
  );
  const every = Math.max(1, Math.floor(count / Math.max(1, changes)));
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = firstObjectId + i;
      const attrs = {
        name: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32`,
        status: i % 3 ? 'active' : 'reserved',
        tenant: `tenant-${i % 50}`,
      };
      insertObject.run(id, objectType, JSON.stringify(attrs), now, now);
      if (i % every === 0 && i / every < changes)
        insertChange.run(
          branchId,
          objectType,
          id,
          JSON.stringify(attrs),
          JSON.stringify({ ...attrs, status: 'deprecated' }),
          now,
          now,
        );
    }
    db.prepare(
      `INSERT INTO sequences (name, value) VALUES ('objects', ?) ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`,
    ).run(firstObjectId + count);
    moveChangesRevision(db, branchId);
    moveDataVersion(db);
  })();
  db.close();
}
