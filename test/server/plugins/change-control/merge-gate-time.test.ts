import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';
import { checkNamed, expectStatus, ok, POLICIES } from './fixtures';
import { gateCast, mergeBranch, scenario } from './gate-support';

describe('change control: the merge gate runs the registered checks again', () => {
  const svc = eachTestService({ config: { host: { changelog_retention_days: 30 } } });

  it('refuses a branch that went stale after its last refresh, though not-stale last reported success', async () => {
    const cast = await gateCast(svc);
    await ok(svc.admin.patch(`${POLICIES}${cast.policyId}/`, { checks: ['not-stale'] }));
    const s = await scenario(cast, 'aging');
    assert.equal((await checkNamed(cast.author.client, s.cr.id, 'not-stale')).status, 'success');

    svc.clock.advanceDays(31);
    const refused = await mergeBranch(cast.author.client, s.branch.id);
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /Branch not stale/);
    // Refused: nothing the validator ran is kept, and the branch is still ready.
    assert.equal((await ok(svc.admin.get(`/api/plugins/branching/branches/${s.branch.id}/`))).status, 'ready');
  });

  it('merges a branch whose registered checks still pass when it merges', async () => {
    const cast = await gateCast(svc);
    await ok(svc.admin.patch(`${POLICIES}${cast.policyId}/`, { checks: ['not-stale', 'has-changes'] }));
    const s = await scenario(cast, 'fresh');
    svc.clock.advanceDays(29);
    expectStatus(await mergeBranch(cast.author.client, s.branch.id), 200);
  });
});
