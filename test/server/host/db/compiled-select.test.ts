import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { auditingMemoReads, auditMemoReads } from '../../../../server/host/db/read-audit';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { compiledSelect } from '../../../../server/host/db/compiled-select';
import type { Queryable } from '../../../../server/host/db/database';
import { startService, type TestService } from '../../../support/service';

describe('compiled selects: built and compiled once, run with new values', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
    for (const username of ['ann', 'bob'])
      assert.equal((await svc.admin.post('/api/users/users/', { username })).status, 201);
  });
  after(async () => svc.close());

  it('answers what the query built with those values answers, building it once, on the handle it is given (a transaction sees its writes)', async () => {
    let built = 0;
    const byName = compiledSelect((db: Queryable, username: string, above: number) => {
      built++;
      return db
        .selectFrom('users')
        .select(['username', 'first_name'])
        .where('username', '=', username)
        .where('id', '>', above)
        .limit(5);
    });
    const direct = (username: string) =>
      svc.host.db
        .selectFrom('users')
        .select(['username', 'first_name'])
        .where('username', '=', username)
        .where('id', '>', 0)
        .limit(5)
        .execute();
    for (const name of ['ann', 'bob', 'nobody'])
      assert.deepEqual(await byName(svc.host.db, name, 0), await direct(name));
    assert.deepEqual(await byName(svc.host.db, 'ann', 1_000_000), []);
    await inTransaction(createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url }), async (tx) => {
      await tx.db.updateTable('users').set({ first_name: 'Ann' }).where('username', '=', 'ann').execute();
      assert.deepEqual(await byName(tx.db, 'ann', 0), [{ username: 'ann', first_name: 'Ann' }]);
    });
    assert.equal(built, 1);
  });

  it("compiles without entering the audit's store when the audit is off (as in the service: once entered, every promise is tracked)", async () => {
    const run = AsyncLocalStorage.prototype.run;
    let entered = 0;
    AsyncLocalStorage.prototype.run = function (this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
      entered++;
      return run.apply(this, args);
    } as typeof run;
    const was = auditingMemoReads();
    try {
      const build = () =>
        compiledSelect((db: Queryable, username: string) =>
          db.selectFrom('users').select('username').where('username', '=', username),
        );
      auditMemoReads(false);
      assert.deepEqual(await build()(svc.host.db, 'ann'), [{ username: 'ann' }]);
      assert.equal(entered, 0);
      auditMemoReads(true);
      assert.deepEqual(await build()(svc.host.db, 'bob'), [{ username: 'bob' }]);
      assert.equal(entered, 1, 'audited, the compilation steps out of the audited computation');
    } finally {
      AsyncLocalStorage.prototype.run = run;
      auditMemoReads(was);
    }
  });

  it('refuses a select that does not use the values it is given', async () => {
    const unused = compiledSelect((db: Queryable, _id: number) =>
      db.selectFrom('users').select('id').where('id', '=', 1),
    );
    await assert.rejects(unused(svc.host.db, 2), /does not use its values/);
  });
});
