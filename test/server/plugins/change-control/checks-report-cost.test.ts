import assert from 'node:assert/strict';
import { observeStatements } from '../../../../server/host/db/database';
import type { TestService } from '../../../support/service';
import { CHECKS, ok, REQUESTS } from './fixtures';
import { checksByName, setup, startWithChecks } from './checks-support';

/**
 * The pipeline's check report is the service's most frequent write. Its cost is counted in
 * statements (on PostgreSQL each is a round trip, and writes run one at a time), not in time:
 * these bounds fail when a change makes one report read or write more.
 */
describe('change control checks: the statements of one report', () => {
  let svc: TestService;
  before(async () => {
    svc = await startWithChecks({ config: { change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'] } } });
  });
  after(async () => svc.close());

  /** The statements of the write transaction `work` runs, BEGIN to COMMIT. */
  async function transactionOf(work: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    const stop = observeStatements(svc.host.db, (sql) => seen.push(sql));
    try {
      await work();
    } finally {
      stop();
    }
    const begin = seen.findIndex((q) => /^(begin|start transaction)\b/i.test(q));
    const commit = seen.findIndex((q, i) => i > begin && /^commit\b/i.test(q));
    assert.ok(begin >= 0 && commit > begin, `one transaction expected:\n${seen.join('\n')}`);
    return seen.slice(begin, commit + 1);
  }

  const writes = (statements: string[]) => statements.filter((q) => /^(insert|update|delete)\b/i.test(q));

  async function reportedCheck() {
    const s = await setup(svc, { policy: { checks: ['pipeline/a', 'pipeline/b'] } });
    await ok(s.author.client.post(`${REQUESTS}${s.cr.id}/submit/`, {}));
    return { s, id: (await checksByName(svc.admin, s.cr.id))['pipeline/a'].id as number };
  }

  it('a changed result is one transaction of at most 16 statements, and 8 when the last write moved only checks', async () => {
    const { s, id } = await reportedCheck();
    let first = true;
    for (const [who, client] of [
      ['a pipeline', s.pipeline.client],
      ['a superuser', svc.admin],
    ] as const) {
      for (const status of ['success', 'failure']) {
        const statements = await transactionOf(() => ok(client.patch(`${CHECKS}${id}/`, { status })));
        const listed = `${who} reporting ${status}: ${statements.length} statements:\n${statements.join('\n')}`;
        assert.equal(writes(statements).filter((q) => /cc_merge_checks/.test(q)).length, 1, `one write of the check: ${listed}`);
        assert.ok(statements.filter((q) => /from "cc_change_requests"/.test(q)).length <= 1, `the request read once at most: ${listed}`);
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
        // BEGIN, the versions (PostgreSQL), the check, the result, its changelog entry and stream
        // event, the data version, COMMIT.
        assert.ok(statements.length <= 8, listed);
        const reads = statements.filter((q) => /^select\b/i.test(q) && !/"data_version"/.test(q));
        assert.ok(reads.every((q) => /from "cc_merge_checks"/.test(q)), `only checks read again: ${listed}`);
      }
    }
  });

  it('a repeated result writes nothing', async () => {
    const { s, id } = await reportedCheck();
    await ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success', summary: 'green' }));
    const statements = await transactionOf(() => ok(s.pipeline.client.patch(`${CHECKS}${id}/`, { status: 'success', summary: 'green' })));
    assert.deepEqual(writes(statements), [], statements.join('\n'));
  });
});
