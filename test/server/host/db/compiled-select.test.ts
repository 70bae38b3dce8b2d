import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { auditingMemoReads, auditMemoReads } from '../../../../server/host/db/read-audit';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { compiledSelect, compiledWrite, type WriteFields } from '../../../../server/host/db/compiled-select';
import { writesThrough, writtenTables } from '../../../../server/host/db/data-version';
import { partitionName } from '../../../../server/host/db/partitions';
import { sql } from 'kysely';
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

  it('writes what the statement built afresh writes, compiled once per set of fields (an undefined field left out), counted as a write of its table', async () => {
    let built = 0;
    const rename = compiledWrite((db, fields, username: string) => {
      built++;
      return db.updateTable('users').set(fields).where('username', '=', username);
    });
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
    await inTransaction(ctx, async (tx) => {
      const result = await rename(tx.db, { first_name: 'Ann', last_name: undefined }, 'ann');
      assert.equal(result.numAffectedRows, 1n);
      await rename(tx.db, { first_name: 'Bob' }, 'bob');
      assert.deepEqual(writtenTables(tx.db), ['users']);
      assert.equal(writesThrough(tx.db, ['users']), 2);
    });
    assert.equal(built, 1);
    await rename(svc.host.db, { first_name: 'Anne', last_name: 'Lee' }, 'ann');
    assert.equal(built, 2, 'another set of fields is another statement');
    const names = await svc.host.db
      .selectFrom('users')
      .select(['username', 'first_name', 'last_name'])
      .where('username', 'in', ['ann', 'bob'])
      .orderBy('username')
      .execute();
    assert.deepEqual(names, [
      { username: 'ann', first_name: 'Anne', last_name: 'Lee' },
      { username: 'bob', first_name: 'Bob', last_name: '' },
    ]);
    // A field that is not a plain value (an expression) is built afresh, as it is.
    const expression = (text: string): WriteFields =>
      ({ first_name: sql<string>`${text}` }) as Record<string, unknown> as WriteFields;
    await rename(svc.host.db, expression('Annie'), 'ann');
    assert.equal(built, 3);
    await rename(svc.host.db, expression('Ann'), 'ann');
    assert.equal(built, 4);
    assert.equal(
      (
        await svc.host.db
          .selectFrom('users')
          .select('first_name')
          .where('username', '=', 'ann')
          .executeTakeFirstOrThrow()
      ).first_name,
      'Ann',
    );
  });

  it('tells the partitions an insert writes, from the values of each run', async () => {
    const record = compiledWrite<[], { id: number }>((db, fields) =>
      db.insertInto('object_changes').values(fields).returning('id'),
    );
    const entry = (branchId: number | null) => ({
      time: '2026-01-01T00:00:00.000Z',
      user_id: null,
      user_name: 'test',
      request_id: 'test',
      action: 'update',
      changed_object_type: 'test',
      changed_object_id: 1,
      object_repr: 'x',
      prechange_data: null,
      postchange_data: null,
      branch_id: branchId,
    });
    const ctx = createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
    await inTransaction(ctx, async (tx) => {
      const first = await record(tx.db, entry(7));
      assert.equal(first.rows.length, 1);
      assert.equal(writesThrough(tx.db, [partitionName('object_changes', 7)]), 1);
      assert.equal(writesThrough(tx.db, [partitionName('object_changes', 8)]), 0);
      await record(tx.db, entry(8));
      assert.equal(writesThrough(tx.db, [partitionName('object_changes', 8)]), 1);
      assert.equal(writesThrough(tx.db, ['object_changes']), 2);
      await tx.db
        .deleteFrom('object_changes')
        .where('request_id', '=', 'test')
        .where('changed_object_type', '=', 'test')
        .execute();
    });
  });
});
