import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import { branch, created, device, expectStatus, openRequest, POLICIES, detail } from './fixtures';

describe('change control: regular expressions in policy conditions', () => {
  const svc = suiteService();

  it('refuses an expression that needs backtracking (a backreference or lookaround) with 400 naming it', async () => {
    for (const value of ['(a)\\1', '^(?=core)', '(?<!x)y']) {
      const res = await svc.admin.post(POLICIES, {
        name: `bad ${value}`,
        conditions: { attr: 'name', op: 'regex', value },
      });
      expectStatus(res, 400, value);
      assert.match(JSON.stringify(res.body), /linear time/);
    }
  });

  it('refuses an expression over 500 characters, and an invalid one', async () => {
    expectStatus(
      await svc.admin.post(POLICIES, {
        name: 'long',
        conditions: { attr: 'name', op: 'regex', value: 'a'.repeat(501) },
      }),
      400,
    );
    expectStatus(
      await svc.admin.post(POLICIES, { name: 'broken', conditions: { attr: 'name', op: 'regex', value: '([a-z' } }),
      400,
    );
  });

  it('matches with a nested repetition like (a+)+$ without blowing up on a hostile value', async () => {
    await created(
      svc.admin.post(POLICIES, {
        name: 'nested',
        object_types: ['dcim.device'],
        conditions: { attr: 'name', op: 'regex', value: '^(a+)+$' },
      }),
    );
    const hostile = await branch(svc.admin, 'hostile');
    await device(hostile.inBranch, { name: `${'a'.repeat(5000)}b` });
    const plain = await branch(svc.admin, 'plain');
    await device(plain.inBranch, { name: 'aaaa' });
    // With a backtracking engine this match would not finish; the request answering at all is the proof.
    const a = await openRequest(svc.admin, hostile.branch.id);
    const b = await openRequest(svc.admin, plain.branch.id);
    assert.deepEqual(
      (await detail(svc.admin, a.id)).policies.map((p: any) => p.name),
      [],
    );
    assert.deepEqual(
      (await detail(svc.admin, b.id)).policies.map((p: any) => p.name),
      ['nested'],
    );
  });

  it('refuses the same expressions in event-rule conditions', async () => {
    const hook = await created(
      svc.admin.post('/api/extras/webhooks/', { name: 'h', payload_url: 'http://127.0.0.1:9/' }),
    );
    const res = await svc.admin.post('/api/extras/event-rules/', {
      name: 'r',
      object_types: ['dcim.device'],
      event_types: ['object_created'],
      conditions: { attr: 'name', op: 'regex', value: '(x)\\1' },
      action_type: 'webhook',
      action_object_id: hook.id,
    });
    expectStatus(res, 400);
  });
});
