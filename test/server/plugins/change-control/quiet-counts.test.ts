import assert from 'node:assert/strict';
import { observeStatements } from '../../../../server/host/db/database';
import { webhookDeliveryWorker } from '../../../../server/host/events/webhook-delivery';
import { gateClock } from '../../../../server/plugins/change-control/gate/gate-clock';
import { onPostgres } from '../../../support/database';
import { statementsOf } from '../../../support/quiet';
import type { TestService } from '../../../support/service';
import { setup, startWithChecks, type Setup } from './checks-support';
import { ok, REQUESTS } from './fixtures';

/**
 * What the service sets off without awaiting (the gate clock looking again, the webhook outbox
 * woken, an event stream reading on) is tracked, so a count around a piece of work is that
 * work's own: nothing set off before it lands in it.
 */
describe('change control: counts around a request are its own, whatever the service set off before', () => {
  let svc: TestService;
  let s: Setup;
  before(async () => {
    svc = await startWithChecks();
    s = await setup(svc, { policy: {} });
  });
  after(async () => svc.close());

  const read = () => ok(s.author.client.get(`${REQUESTS}${s.cr.id}/`));
  const setOff = () => {
    gateClock(svc.host).rearm();
    void webhookDeliveryWorker(svc.host)!.wake();
  };

  it('Work the service set off without awaiting is tracked: once settled, none of it runs, so a count of statements after it is the work’s own', async () => {
    await read();
    const quiet = await statementsOf(svc, read);
    // Counted as the window opens, without waiting for the service first: the work set off lands in it.
    setOff();
    const seen: string[] = [];
    const stop = observeStatements(svc.host.db, (sql) => seen.push(sql));
    try {
      await read();
      await svc.host.unawaited.settled();
    } finally {
      stop();
    }
    assert.ok(seen.length > quiet.length, `the set-off work ran in the window:\n${seen.join('\n')}`);
    setOff();
    assert.deepEqual(await statementsOf(svc, read), quiet);
  });

  if (onPostgres) {
    it('On PostgreSQL a write that adds to the event stream has told the other instances (NOTIFY) when it answers', async () => {
      const seen: string[] = [];
      const stop = observeStatements(svc.host.db, (sql) => seen.push(sql));
      try {
        await ok(s.author.client.patch(`${REQUESTS}${s.cr.id}/`, { description: 'told' }));
      } finally {
        stop();
      }
      assert.equal(seen.filter((q) => /pg_notify/.test(q)).length, 1, seen.join('\n'));
      assert.equal(svc.host.unawaited.size, 0, 'nothing of the write is still running');
    });
  }
});
