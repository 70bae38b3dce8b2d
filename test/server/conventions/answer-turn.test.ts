import assert from 'node:assert/strict';
import { ServerResponse } from 'node:http';
import { branchingPlugin } from '../../../server/plugins/branching/plugin';
import type { HostPlugin } from '../../../server/host/host';
import { Reply } from '../../../server/host/http/routes';
import { startService, type TestService } from '../../support/service';

const TURN = '/api/test/turn/';

/** A plugin whose write and read each queue work for the event loop's next turn, and note when it ran. */
function turnPlugin(order: string[]): HostPlugin {
  const handler = async (): Promise<Reply> => {
    setImmediate(() => order.push('next turn'));
    return new Reply(200, { ok: true });
  };
  return {
    name: 'test-turn',
    version: '1.0.0',
    hostVersion: { min: '4.7.0', max: '4.7.99' },
    register(host) {
      host.routes.add({
        method: 'POST',
        path: TURN,
        access: { authenticated: true },
        summary: 'Queues work for the next turn',
        tag: 'test',
        handler,
      });
      host.routes.add({
        method: 'GET',
        path: TURN,
        access: { authenticated: true },
        summary: 'Queues work for the next turn',
        tag: 'test',
        handler,
      });
    },
  };
}

describe("conventions: a write's answer after the event loop's next turn", () => {
  let svc: TestService;
  const order: string[] = [];
  const end = ServerResponse.prototype.end;

  before(async () => {
    svc = await startService({ plugins: [branchingPlugin(), turnPlugin(order)] });
    ServerResponse.prototype.end = function (this: ServerResponse, ...args: unknown[]) {
      if (this.req?.url === TURN) order.push('answer');
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as typeof end;
  });

  after(async () => {
    ServerResponse.prototype.end = end;
    await svc.close();
  });

  it("sends a write's answer once what the write queued for the loop has run (the engine's own tasks among it), and a read's at once", async () => {
    order.length = 0;
    assert.equal((await svc.admin.post(TURN, {})).status, 200);
    assert.deepEqual(order, ['next turn', 'answer']);
    order.length = 0;
    assert.equal((await svc.admin.get(TURN)).status, 200);
    assert.deepEqual(order, ['answer', 'next turn']);
  });
});
