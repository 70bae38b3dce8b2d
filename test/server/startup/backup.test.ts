import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { backupDatabase, restoreDatabase, tableContents } from '../../../server/host/db/backup';
import { duringSchemaChange, onPostgres, openTestDatabase } from '../../support/database';
import { startService, withService } from '../../support/service';
import {
  actor,
  AUTHOR,
  BRANCHES,
  created,
  DEVICES,
  ok,
  REQUESTS,
  REVIEWER,
  REVIEWS,
  POLICIES,
  RULES,
} from '../plugins/change-control/fixtures';
import { runToExit } from './run-service';
import { tempDirForEachTest } from '../../support/prepared';

describe(`backup and restore (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  this.timeout(60_000);
  const dir = tempDirForEachTest('cc-backup-');

  it('change-control backup FILE, then restore FILE into a new database: every table holds the same rows, and the restored service goes on numbering after them', async () => {
    const source = dir('source.sqlite3');
    await withService(startService({ db: source }), async (svc) => {
      const author = await actor(svc, 'author', AUTHOR);
      const reviewer = await actor(svc, 'reviewer', REVIEWER);
      const p = await created(svc.admin.post(POLICIES, { name: 'devices', object_types: ['dcim.device'] }));
      await created(svc.admin.post(RULES, { policy: p.id, name: 'one', users: [reviewer.id] }));
      const branch = await created(author.client.post(BRANCHES, { name: 'work' }));
      await created(
        author.client
          .inBranch(branch.schema_id)
          .post(DEVICES, { name: 'édge-1', status: 'planned', comments: 'ünïcode ✓, "quotes", \\ and \n lines' }),
      );
      const cr = await created(
        author.client.post(REQUESTS, { branch: branch.id, title: 'A change', description: '**bold**' }),
      );
      await ok(author.client.post(`${REQUESTS}${cr.id}/submit/`, {}));
      await created(reviewer.client.post(REVIEWS, { change_request: cr.id, decision: 'approve', comment: '' }));
    });
    const from = await openTestDatabase({}, source);
    const into = await openTestDatabase({}, dir('restored.sqlite3'));
    try {
      const file = dir('backup.jsonl');
      const backup = await runToExit(['backup', file, '--db', from.url]);
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /backed up \d+ rows/);
      const restore = await runToExit(['restore', file, '--db', into.url]);
      assert.equal(restore.code, 0, restore.stderr);
      const before = await tableContents(from.db);
      const after = await tableContents(into.db);
      assert.deepEqual(Object.keys(after).sort(), Object.keys(before).sort());
      for (const table of Object.keys(before)) assert.deepEqual(after[table], before[table], table);
      assert.ok(before.cc_reviews!.length === 1 && before.objects!.length === 0 && before.branch_changes!.length === 1);
    } finally {
      await from.close();
      await into.close();
    }
    // The restored database serves: new rows take ids after the restored ones.
    await withService(startService({ db: dir('restored.sqlite3') }), async (restored) => {
      const group = await created(restored.admin.post('/api/users/groups/', { name: 'after-restore' }));
      const users = await ok(restored.admin.get('/api/users/users/?limit=100'));
      assert.equal(users.count, 3);
      assert.ok(group.id >= 1);
      const again = await created(restored.admin.post('/api/users/users/', { username: 'new-user' }));
      assert.ok(again.id > Math.max(...users.results.map((u: { id: number }) => u.id)));
    });
  });

  it('refuses a file that is not a backup (exit 2, the reason said)', async () => {
    const file = dir('not-a-backup.jsonl');
    writeFileSync(file, '{"hello":"world"}\n');
    const target = await openTestDatabase({}, dir('target.sqlite3'));
    try {
      const { code, stderr } = await runToExit(['restore', file, '--db', target.url]);
      assert.equal(code, 2);
      assert.match(stderr, /not a Change Control backup/);
    } finally {
      await target.close();
    }
  });

  if (onPostgres) {
    it('backs up and restores again after another instance changed a table (a rolling upgrade): the new column is in the file', async () => {
      const svc = await startService();
      const undo = (schema: string) => [
        `alter table "${schema}".users drop column if exists rollout_note`,
        `alter table "${schema}".users alter column is_active type bigint`,
      ];
      try {
        await duringSchemaChange(svc.host.db, undo, async ({ own, admin, schema }) => {
          await backupDatabase(own.db, dir('one.jsonl'));
          await admin.query(`alter table "${schema}".users add column rollout_note text`);
          await admin.query(`alter table "${schema}".users alter column is_active type integer`);
          const file = dir('two.jsonl');
          const rows = await backupDatabase(own.db, file);
          assert.ok(readFileSync(file, 'utf8').includes('"rollout_note":null'));
          assert.equal(await restoreDatabase(own.db, file), rows);
        });
      } finally {
        await svc.close();
      }
    });
  }
});
