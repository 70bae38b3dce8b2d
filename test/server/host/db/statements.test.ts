import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { databaseKind, observeStatements } from '../../../../server/host/db/database';
import { sentWithNext } from '../../../../server/host/db/pg-client';
import { suiteService, type TestService } from '../../../support/service';

/**
 * Writes marked `sentWithNext` (on PostgreSQL, held back and sent with the transaction's next
 * statement, values written into the text) behave as any write: in order, read back by the
 * transaction, committed with it or not at all.
 */
describe('database statements: writes sent with the next statement', () => {
  const svc = suiteService();

  const ctx = () => createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });
  const version = async () => (await svc.host.db.selectFrom('data_version').select('version').where('id', '=', 1).executeTakeFirstOrThrow()).version;
  const firstName = async (username: string) => (await svc.host.db.selectFrom('users').select('first_name').where('username', '=', username).executeTakeFirstOrThrow()).first_name;
  const rename = (db: TestService['host']['db'], username: string, first: string) =>
    sentWithNext(db.updateTable('users').set({ first_name: first }).where('username', '=', username)).execute();

  it('are read back by their transaction and committed with it, quotes, backslashes and all', async () => {
    const v0 = await version();
    const seen: string[] = [];
    const stop = observeStatements(svc.host.db, (q) => seen.push(q));
    try {
      await inTransaction(ctx(), async (tx) => {
        await rename(tx.db, 'admin', `O'Brien \\ $1 "x"`);
        assert.equal((await tx.db.selectFrom('users').select('first_name').where('username', '=', 'admin').executeTakeFirstOrThrow()).first_name, `O'Brien \\ $1 "x"`);
        // A statement with a quote of its own: the held write goes first, by itself.
        await rename(tx.db, 'admin', 'Second');
        assert.equal((await sql<{ n: string }>`select first_name as n from users where username = 'admin'`.execute(tx.db)).rows[0]!.n, 'Second');
        // The last write of the transaction goes with COMMIT.
        await rename(tx.db, 'admin', 'Third');
      });
    } finally {
      stop();
    }
    assert.equal(await firstName('admin'), 'Third');
    assert.equal(await version(), v0 + 1);
    if (databaseKind(svc.host.db) === 'postgres') {
      const held = seen.filter((q) => q.includes('/* sent with the next statement */'));
      assert.equal(held.length, 3, seen.join('\n'));
      assert.match(held[0]!, /^update "users" set "first_name" = +E?'O''Brien .*; select "first_name" from "users"/);
      assert.match(held[1]!, /^update "users" .*Second.*\*\/$/, 'sent by itself before the quoted statement');
      assert.match(held[2]!, /^update "users" .*Third.*; insert into "data_version" .*; commit$/);
    }
  });

  it('are not written when their transaction fails, whether the write itself or what follows it fails', async () => {
    await svc.admin.post('/api/users/users/', { username: 'taken' });
    const v0 = await version();
    // The write refused (a name taken) is found out at the next statement: nothing of the transaction stays.
    await assert.rejects(
      inTransaction(ctx(), async (tx) => {
        await tx.db.updateTable('users').set({ first_name: 'Before' }).where('username', '=', 'admin').execute();
        await sentWithNext(tx.db.updateTable('users').set({ username: 'taken' }).where('username', '=', 'admin')).execute();
        await tx.db.selectFrom('users').select('id').execute();
      }),
    );
    // The same write last: found out at COMMIT.
    await assert.rejects(
      inTransaction(ctx(), async (tx) => {
        await tx.db.updateTable('users').set({ first_name: 'Before' }).where('username', '=', 'admin').execute();
        await sentWithNext(tx.db.updateTable('users').set({ username: 'taken' }).where('username', '=', 'admin')).execute();
      }),
    );
    // A held write, then the transaction fails for another reason.
    await assert.rejects(
      inTransaction(ctx(), async (tx) => {
        await rename(tx.db, 'admin', 'Never');
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.equal(await firstName('admin'), 'Third');
    assert.equal(await version(), v0);
    // The connections are usable afterwards, in and out of transactions.
    await inTransaction(ctx(), async (tx) => rename(tx.db, 'admin', 'After'));
    assert.equal(await firstName('admin'), 'After');
  });
});
