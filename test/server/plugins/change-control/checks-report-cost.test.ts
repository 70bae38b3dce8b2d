import assert from 'node:assert/strict';
import pg from 'pg';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { observeStatements, postgresUrlOf, withTables } from '../../../../server/host/db/database';
import { COMMIT_TEXT, onPostgres, TEST_DATABASE_URL } from '../../../support/database';
import type { TestService } from '../../../support/service';
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

  /** The statements of the write transaction `work` runs, BEGIN to COMMIT (`sent`: the texts as sent). */
  async function transactionOf(
    work: () => Promise<unknown>,
    sent: string[] = [],
    all: string[] = [],
  ): Promise<string[]> {
    const seen: string[] = [];
    const texts: string[] = [];
    const stop = observeStatements(svc.host.db, (sql, _ms, text) => {
      seen.push(sql);
      texts.push(text);
    });
    try {
      await work();
    } finally {
      stop();
    }
    const begin = seen.findIndex((q) => /^(begin|start transaction)\b/i.test(q));
    const commit = seen.findIndex((q, i) => i > begin && new RegExp(`(^|;\\s*)${COMMIT_TEXT}$`).test(q));
    assert.ok(begin >= 0 && commit > begin, `one transaction expected:\n${seen.join('\n')}`);
    sent.push(...texts.slice(begin, commit + 1));
    all.push(...seen);
    return seen.slice(begin, commit + 1);
  }

  const writes = (statements: string[]) => statements.filter((q) => /^(insert|update|delete)\b/i.test(q));

  async function reportedCheck() {
    const s = await setup(svc, { policy: { checks: ['pipeline/a', 'pipeline/b'] } });
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    return { s, id: (await checksByName(svc.admin, s.cr.id))['pipeline/a'].id as number };
  }

  it('a changed result is one transaction of at most 16 statements, and 7 when the last write moved only checks (2 round trips on PostgreSQL)', async () => {
    const { s, id } = await reportedCheck();
    let first = true;
    for (const [who, client] of [
      ['a pipeline', s.pipeline.client],
      ['a superuser', svc.admin],
    ] as const) {
      for (const status of ['success', 'failure']) {
        const sent: string[] = [];
        const all: string[] = [];
        const statements = await transactionOf(() => ok(client.patch(`${CHECKS}${id}/`, { status })), sent, all);
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
          // BEGIN (with the write lock), the check, the request's policies (3), the request, its
          // branch's changes (the digest), the permission rows, the result, its changelog entry, its
          // stream event, the event rules, the request's checks (the gate), the check for the
          // answer, the data version, COMMIT.
          assert.ok(statements.length <= 16, listed);
          first = false;
          continue;
        }
        // What the last report read of the tables it did not write is still good, the request is
        // not approved (its checks cannot clear its gates) and the answer is the row written:
        // BEGIN, the check, the result, its changelog entry and stream event, the data version,
        // COMMIT. On PostgreSQL (round trips) BEGIN, the versions and the check go in one round
        // trip, and the result, its changelog entry, its stream event, the signal to the other
        // instances' streams and the data version go with COMMIT.
        if (onPostgres) {
          assert.match(
            statements[0]!,
            /^begin; select pg_advisory_xact_lock\(.*\); select "id", "version" from "data_version"; select \* from "cc_merge_checks" where "id" = '\d+'$/,
            listed,
          );
          assert.match(
            statements[1]!,
            new RegExp(
              `^update "cc_merge_checks" .*; insert into "object_changes" .*; insert into "cc_stream_events" .*; select pg_notify\\('change_control_stream', '[0-9a-f-]{36}'\\) .*; insert into "data_version" .*; ${COMMIT_TEXT}$`,
            ),
            listed,
          );
          // Sent as prepared statements with their values (PostgreSQL neither parses nor plans
          // them again under the lock); once prepared on the connection, not prepared again.
          const raw = sent.join('\n');
          assert.match(sent[0]!, /; execute cc_\d+_\d+\('\d+'\)$/, raw);
          assert.match(
            sent[1]!,
            new RegExp(`^(prepare .*; )?execute cc_\\d+_\\d+\\('(success|failure)', .*; ${COMMIT_TEXT}$`),
            raw,
          );
          assert.doesNotMatch(raw, /set "status" = '/, raw);
          if (who === 'a superuser' && status === 'failure') assert.doesNotMatch(raw, /prepare /, raw);
          // The caller's identity, kept, is confirmed by the versions read with BEGIN: no round
          // trip before the transaction. (A token's last use, written at its first report, moves every kept identity.)
          if (who === 'a superuser' && status === 'failure') assert.deepEqual(all, statements, listed);
        }
        assert.ok(statements.length <= (onPostgres ? 2 : 7), listed);
        const reads = statements.filter((q) => /^select\b/i.test(q) && !/"data_version"/.test(q));
        assert.ok(
          reads.every((q) => /from "cc_merge_checks"/.test(q)),
          `only checks read again: ${listed}`,
        );
      }
    }
    if (onPostgres) {
      // The same for a pipeline (its identity and its permission rows).
      const all: string[] = [];
      const statements = await transactionOf(
        () => ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success' })),
        [],
        all,
      );
      assert.deepEqual(all, statements);
    }
  });

  it('an edit of another request between two reports keeps what the second reads of its own request: only checks read again', async () => {
    const { s, id } = await reportedCheck();
    const other = await reportedCheck();
    await ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success' }));
    await ok(other.s.author.client.patch(`${REQUESTS}${other.s.cr.id}/`, { title: 'Renamed between two reports' }));
    const statements = await transactionOf(() => ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'failure' })));
    const reads = statements.filter((q) => /^select\b/i.test(q) && !/"data_version"/.test(q));
    assert.ok(
      reads.every((q) => /from "cc_merge_checks"/.test(q)),
      statements.join('\n'),
    );
    // An edit of its own request is read at once.
    await ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { title: 'Renamed' }));
    const after = await transactionOf(() => ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success' })));
    assert.ok(
      after.some((q) => /from "cc_change_requests"/.test(q)),
      after.join('\n'),
    );
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
    it('a report and a read still answer after another instance changed the checks table: statements prepared before it are prepared again', async () => {
      const { s, id } = await reportedCheck();
      const schema = /search_path=(\w+)/.exec(decodeURIComponent(postgresUrlOf(svc.host.db)!))![1]!;
      const readCheck = () =>
        ccTables(svc).selectFrom('cc_merge_checks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      const seen: string[] = [];
      const stop = observeStatements(svc.host.db, (sql) => seen.push(sql));
      try {
        // Prepared on the connection the pool hands out next (the last one given back).
        await ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success' }));
        await readCheck();
        // A rolling upgrade: another instance's migration adds a column.
        await admin.query(`alter table "${schema}".cc_merge_checks add column rollout_note text`);
        seen.length = 0;
        // In a transaction: the stale statement ends it, and it runs again. (Its first statement
        // goes with BEGIN, written in; the second is the named statement prepared before.)
        let attempts = 0;
        const inside = await inTransaction(
          createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url }),
          async (tx) => {
            attempts++;
            const db = withTables<ChangeControlTables>(tx.db);
            await db.selectFrom('cc_merge_checks').select('id').where('id', '=', id).execute();
            return db.selectFrom('cc_merge_checks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
          },
        );
        assert.equal(attempts, 2);
        assert.ok('rollout_note' in inside, JSON.stringify(inside));
        assert.ok(seen.includes('deallocate all'), seen.join('\n'));
        // A report answers after the change too.
        await ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'failure' }));
        assert.equal((await ok(svc.admin.get(`${CHECKS}${id}/`))).status, 'failure');
        // Outside a transaction: the statement is sent again.
        await readCheck();
        await admin.query(`alter table "${schema}".cc_merge_checks drop column rollout_note`);
        await admin.query(`alter table "${schema}".cc_merge_checks add column rollout_stage integer`);
        seen.length = 0;
        const row = await readCheck();
        assert.ok('rollout_stage' in row && !('rollout_note' in row), JSON.stringify(row));
        assert.ok(seen.includes('deallocate all'), seen.join('\n'));
      } finally {
        stop();
        await admin.query(`alter table "${schema}".cc_merge_checks drop column if exists rollout_note`);
        await admin.query(`alter table "${schema}".cc_merge_checks drop column if exists rollout_stage`);
        await admin.end();
      }
    });
  }
});
