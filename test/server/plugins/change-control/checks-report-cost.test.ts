import assert from 'node:assert/strict';
import pg from 'pg';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { postgresUrlOf, withTables } from '../../../../server/host/db/database';
import { onPostgres, TEST_DATABASE_URL } from '../../../support/database';
import type { TestService } from '../../../support/service';
import { statementsOf } from '../../../support/quiet';
import { CHECKS, ok, REQUESTS } from './fixtures';
import type { ChangeControlTables } from '../../../../server/plugins/change-control/db/tables';
import { ccTables, checksByName, setup, startWithChecks } from './checks-support';

/**
 * The pipeline's check report is the service's most frequent write. Its cost is counted in
 * statements (on PostgreSQL each is a round trip, and writes run one at a time), not in time:
 * these bounds fail when a change makes one report read or write more.
 */
describe('change control checks: the statements of one report', () => {
  let svc: TestService;
  before(async () => {
    svc = await startWithChecks({
      config: { change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'] } },
    });
  });
  after(async () => svc.close());

  /** The statements of the write transaction `work` runs, BEGIN to COMMIT. */
  async function transactionOf(work: () => Promise<unknown>): Promise<string[]> {
    const seen = await statementsOf(svc, work);
    const begin = seen.findIndex((q) => /^(begin|start transaction)\b/i.test(q));
    const commit = seen.findIndex((q, i) => i > begin && /^commit$/i.test(q));
    assert.ok(begin >= 0 && commit > begin, `one transaction expected:\n${seen.join('\n')}`);
    return seen.slice(begin, commit + 1);
  }

  const writes = (statements: string[]) => statements.filter((q) => /^(insert|update|delete)\b/i.test(q));

  async function reportedCheck() {
    const s = await setup(svc, { policy: { checks: ['pipeline/a', 'pipeline/b'] } });
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    return { s, id: (await checksByName(svc.admin, s.cr.id))['pipeline/a'].id as number };
  }

  it('a changed result is one transaction of at most 16 statements, and 7 when the last write moved only checks', async () => {
    const { s, id } = await reportedCheck();
    // PostgreSQL adds a read of the versions inside the transaction (BEGIN takes the write lock).
    const extra = onPostgres ? 1 : 0;
    let first = true;
    for (const [who, client] of [
      ['a pipeline', s.pipeline.client],
      ['a superuser', svc.admin],
    ] as const) {
      for (const status of ['success', 'failure']) {
        const statements = await transactionOf(() => ok(client.patch(`${CHECKS}${id}/`, { status })));
        const listed = `${who} reporting ${status}: ${statements.length} statements:\n${statements.join('\n')}`;
        assert.equal(
          writes(statements).filter((q) => /cc_merge_checks/.test(q)).length,
          1,
          `one write of the check: ${listed}`,
        );
        assert.ok(
          statements.filter((q) => /from "cc_change_requests"/.test(q)).length <= 1,
          `the request read once at most: ${listed}`,
        );
        if (first) {
          // BEGIN, the check, the request's policies (3), the request, its branch's changes (the
          // digest), the permission rows, the result, its changelog entry, its stream event, the
          // event rules, the request's checks (the gate), the check for the answer, the data
          // version, COMMIT.
          assert.ok(statements.length <= 16 + extra, listed);
          first = false;
          continue;
        }
        // What the last report read of the tables it did not write is still good, the request is
        // not approved (its checks cannot clear its gates) and the answer is the row written:
        // BEGIN, the check, the result, its changelog entry and stream event, the data version, COMMIT.
        assert.ok(statements.length <= 7 + extra, listed);
        const reads = statements.filter(
          (q) => /^select\b/i.test(q) && !/"data_version"|pg_advisory_xact_lock|pg_notify/.test(q),
        );
        assert.ok(
          reads.every((q) => /from "cc_merge_checks"/.test(q)),
          `only checks read again: ${listed}`,
        );
      }
    }
  });

  it('a repeated result writes nothing', async () => {
    const { s, id } = await reportedCheck();
    await ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success', summary: 'green' }));
    const statements = await transactionOf(() =>
      ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success', summary: 'green' })),
    );
    assert.deepEqual(writes(statements), [], statements.join('\n'));
  });

  if (onPostgres) {
    it('a report and a read still answer after another instance changed the checks table', async () => {
      const { s, id } = await reportedCheck();
      const schema = /search_path=(\w+)/.exec(decodeURIComponent(postgresUrlOf(svc.host.db)!))![1]!;
      const readCheck = () =>
        ccTables(svc).selectFrom('cc_merge_checks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        await ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success' }));
        await readCheck();
        // A rolling upgrade: another instance's migration adds a column.
        await admin.query(`alter table "${schema}".cc_merge_checks add column rollout_note text`);
        const inside = await inTransaction(
          createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url }),
          async (tx) => {
            const db = withTables<ChangeControlTables>(tx.db);
            await db.selectFrom('cc_merge_checks').select('id').where('id', '=', id).execute();
            return db.selectFrom('cc_merge_checks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
          },
        );
        assert.ok('rollout_note' in inside, JSON.stringify(inside));
        await ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'failure' }));
        assert.equal((await ok(svc.admin.get(`${CHECKS}${id}/`))).status, 'failure');
        await admin.query(`alter table "${schema}".cc_merge_checks drop column rollout_note`);
        await admin.query(`alter table "${schema}".cc_merge_checks add column rollout_stage integer`);
        const row = await readCheck();
        assert.ok('rollout_stage' in row && !('rollout_note' in row), JSON.stringify(row));
      } finally {
        await admin.query(`alter table "${schema}".cc_merge_checks drop column if exists rollout_note`);
        await admin.query(`alter table "${schema}".cc_merge_checks drop column if exists rollout_stage`);
        await admin.end();
      }
    });
  }
});
