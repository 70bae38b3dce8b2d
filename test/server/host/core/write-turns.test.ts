import assert from 'node:assert/strict';
import { createCtx, inTransaction } from '../../../../server/host/core/context';
import { WriteTurns } from '../../../../server/host/core/write-turns';
import { onPostgres } from '../../../support/database';
import { suiteService } from '../../../support/service';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('turns to write', () => {
  it('lets `size` holders in at once and the others in the order they asked, as turns end', async () => {
    const turns = new WriteTurns(2);
    const entered: number[] = [];
    const ends = new Map<number, () => void>();
    for (let i = 1; i <= 5; i++)
      void turns.take().then((end) => {
        entered.push(i);
        ends.set(i, end);
      });
    await tick();
    assert.deepEqual(entered, [1, 2]);
    assert.equal(turns.waiting, 3);
    ends.get(2)!();
    // An ended turn ended again changes nothing: one more in, not two.
    ends.get(2)!();
    await tick();
    assert.deepEqual(entered, [1, 2, 3]);
    ends.get(1)!();
    ends.get(3)!();
    await tick();
    assert.deepEqual(entered, [1, 2, 3, 4, 5]);
    assert.equal(turns.waiting, 0);
    ends.get(4)!();
    ends.get(5)!();
    // Every turn ended: two are free again at once.
    const again = await Promise.all([turns.take(), turns.take()]);
    assert.equal(again.length, 2);
    assert.throws(() => new WriteTurns(0), /positive integer/);
  });

  describe('of the service', () => {
    const svc = suiteService();
    const ctx = () => createCtx({ host: svc.host, user: null, requestId: 'test', baseUrl: svc.url });

    it(`${onPostgres ? 'on PostgreSQL, let two transactions of the process work at once' : 'are not taken on SQLite, whose writer is in the process'}; a failed transaction ends its turn`, async () => {
      assert.equal(svc.host.writeTurns?.size ?? null, onPostgres ? 2 : null);
      let working = 0;
      let most = 0;
      const write = (i: number) =>
        inTransaction(ctx(), async (tx) => {
          working++;
          most = Math.max(most, working);
          try {
            await tx.db
              .updateTable('users')
              .set({ last_name: `turn ${i}` })
              .where('username', '=', 'admin')
              .execute();
            if (i % 3 === 0) throw new Error(`refused ${i}`);
            await tx.db
              .selectFrom('users')
              .select('last_name')
              .where('username', '=', 'admin')
              .executeTakeFirstOrThrow();
          } finally {
            working--;
          }
        });
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => write(i + 1)));
      assert.deepEqual(
        outcomes.map((o) => o.status),
        Array.from({ length: 12 }, (_, i) => ((i + 1) % 3 === 0 ? 'rejected' : 'fulfilled')),
      );
      // On SQLite the writer itself runs one transaction at a time; what waits for it has begun.
      if (onPostgres)
        assert.equal(
          most,
          2,
          `at most two at once, and two: the next waits for the lock while one writes (saw ${most})`,
        );
      else assert.ok(most >= 1);
      assert.equal(svc.host.writeTurns?.waiting ?? 0, 0);
      // Every turn was given back: as many transactions as there are turns run at once again.
      await Promise.all([write(100), write(101)]);
    });
  });
});
