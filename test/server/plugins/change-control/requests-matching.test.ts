import assert from 'node:assert/strict';
import type { ChangeControlTables } from '../../../../server/plugins/change-control/db/tables';
import { withTables } from '../../../../server/host/db/database';
import { startService, suiteService, type ApiClient, type TestService } from '../../../support/service';
import {
  actor,
  AUTHOR,
  branch,
  created,
  detail,
  DEVICES,
  device,
  expectStatus,
  openRequest,
  policy,
  POLICIES,
  type Actor,
  type PolicySpec,
  actorsForSuite,
} from './fixtures';
import { evaluation, mainDevice, patchObject } from './requests-support';

const PREFIXES = '/api/ipam/prefixes/';

/**
 * Matching (Policy: object types, conditions, condition state, changed/unchanged, snapshots).
 * One service; three branches, each with a change request:
 * - update: a main device {rtr-1, active, u_height 2, core, [prod, edge], S1, config.vrf mgmt} updated in the branch to planned, u_height 4;
 * - create: a device created in the branch {sw-9, staged};
 * - delete: a main device {old-1, decommissioning} deleted in the branch.
 */
describe('policies: matching a branch', () => {
  let svc: TestService;
  let author: Actor;
  let update: number;
  let create: number;
  let remove: number;
  let n = 0;

  /** Names of the policies attached to a request, checked against the live evaluation. */
  async function attached(crId: number): Promise<string[]> {
    const stored = (await detail(author.client, crId)).policies.map((p: any) => p.name).sort();
    const live = (await evaluation(author.client, crId)).policies.map((p: any) => p.name).sort();
    assert.deepEqual(stored, live, 'the attached set and the live match agree');
    return stored;
  }

  /** Creates the policies and says, per request, which of them match. */
  async function matches(specs: PolicySpec[]): Promise<{ update: string[]; create: string[]; remove: string[] }> {
    const names = new Set<string>();
    for (const spec of specs) {
      await policy(svc, { ...spec, name: `${spec.name} #${++n}` });
      names.add(`${spec.name} #${n}`);
    }
    const mine = async (id: number) =>
      (await attached(id)).filter((name) => names.has(name)).map((name) => name.replace(/ #\d+$/, ''));
    return { update: await mine(update), create: await mine(create), remove: await mine(remove) };
  }

  before(async () => {
    svc = await startService();
    author = await actor(svc, 'alice', AUTHOR);
    const rtr = await mainDevice(svc, {
      name: 'rtr-1',
      status: 'active',
      u_height: 2,
      role: 'core',
      tags: ['prod', 'edge'],
      serial: 'S1',
      config: { vrf: 'mgmt' },
    });
    const old = await mainDevice(svc, { name: 'old-1', status: 'decommissioning' });

    const u = await branch(author.client, 'update-branch');
    await patchObject(u.inBranch, DEVICES, rtr.id, { status: 'planned', u_height: 4 });
    update = (await openRequest(author.client, u.branch.id)).id;

    const c = await branch(author.client, 'create-branch');
    await device(c.inBranch, { name: 'sw-9', status: 'staged' });
    create = (await openRequest(author.client, c.branch.id)).id;

    const d = await branch(author.client, 'delete-branch');
    expectStatus(await d.inBranch.delete(`${DEVICES}${old.id}/`), 204);
    remove = (await openRequest(author.client, d.branch.id)).id;
  });
  after(async () => svc.close());

  describe('object types', () => {
    it('Policy object types: an empty set matches every branch, even one with no changes', async () => {
      const empty = (await openRequest(author.client, (await branch(author.client, 'nothing-yet')).branch.id)).id;
      await policy(svc, { name: 'Every branch' });
      assert.ok((await attached(empty)).includes('Every branch'));
      for (const id of [update, create, remove]) assert.ok((await attached(id)).includes('Every branch'));
      assert.deepEqual(
        (await detail(author.client, empty)).policies.find((p: any) => p.name === 'Every branch').matched_object_types,
        [],
      );
    });

    it('Policy object types: a policy matches only branches touching one of its types; matched_object_types names them', async () => {
      const m = await matches([
        { name: 'devices', object_types: ['dcim.device'] },
        { name: 'prefixes', object_types: ['ipam.prefix'] },
        { name: 'devices or sites', object_types: ['dcim.site', 'dcim.device'] },
      ]);
      assert.deepEqual(m.update, ['devices', 'devices or sites']);
      const p = (await detail(author.client, update)).policies.find((x: any) => x.name.startsWith('devices or sites'));
      assert.deepEqual(p.matched_object_types, ['dcim.device']);
    });

    it("Policy object types: conditions are read only on changes of the policy's object types", async () => {
      const m = await matches([
        { name: 'prefix planned', object_types: ['ipam.prefix'], conditions: { attr: 'status', value: 'planned' } },
        { name: 'any planned', conditions: { attr: 'status', value: 'planned' } },
      ]);
      assert.deepEqual(m.update, ['any planned']);
    });

    it('Policy: a disabled policy matches nothing; enabling it attaches it', async () => {
      const { id } = await policy(svc, { name: 'Disabled devices', object_types: ['dcim.device'], enabled: false });
      assert.ok(!(await attached(update)).includes('Disabled devices'));
      expectStatus(await svc.admin.patch(`${POLICIES}${id}/`, { enabled: true }), 200);
      assert.ok((await attached(update)).includes('Disabled devices'));
    });
  });

  describe('operators of contract 4.2 (condition state after)', () => {
    const after = (conditions: unknown, name: string): PolicySpec => ({ name, conditions, condition_state: 'after' });
    const cases: Array<[string, unknown, unknown]> = [
      ['eq', { attr: 'status', op: 'eq', value: 'planned' }, { attr: 'status', op: 'eq', value: 'retired' }],
      ['eq (the default operator)', { attr: 'status', value: 'planned' }, { attr: 'status', value: 'active' }],
      ['gt', { attr: 'u_height', op: 'gt', value: 3 }, { attr: 'u_height', op: 'gt', value: 4 }],
      ['gte', { attr: 'u_height', op: 'gte', value: 4 }, { attr: 'u_height', op: 'gte', value: 5 }],
      ['lt', { attr: 'u_height', op: 'lt', value: 5 }, { attr: 'u_height', op: 'lt', value: 4 }],
      ['lte', { attr: 'u_height', op: 'lte', value: 4 }, { attr: 'u_height', op: 'lte', value: 3 }],
      ['in', { attr: 'role', op: 'in', value: ['edge', 'core'] }, { attr: 'role', op: 'in', value: ['access'] }],
      [
        'contains (a list)',
        { attr: 'tags', op: 'contains', value: 'prod' },
        { attr: 'tags', op: 'contains', value: 'lab' },
      ],
      [
        'contains (a string)',
        { attr: 'name', op: 'contains', value: 'tr-' },
        { attr: 'name', op: 'contains', value: 'sw-' },
      ],
      ['regex', { attr: 'name', op: 'regex', value: '^rtr-\\d+$' }, { attr: 'name', op: 'regex', value: '^sw-' }],
      ['a dotted attribute path', { attr: 'config.vrf', value: 'mgmt' }, { attr: 'config.vrf', value: 'prod' }],
      [
        'negate',
        { attr: 'status', value: 'retired', negate: true },
        { attr: 'status', value: 'planned', negate: true },
      ],
      [
        'and',
        {
          and: [
            { attr: 'status', value: 'planned' },
            { attr: 'u_height', op: 'gt', value: 3 },
          ],
        },
        {
          and: [
            { attr: 'status', value: 'planned' },
            { attr: 'u_height', op: 'gt', value: 9 },
          ],
        },
      ],
      [
        'or',
        {
          or: [
            { attr: 'status', value: 'retired' },
            { attr: 'role', value: 'core' },
          ],
        },
        {
          or: [
            { attr: 'status', value: 'retired' },
            { attr: 'role', value: 'edge' },
          ],
        },
      ],
      [
        'nested and/or with negate',
        {
          and: [
            {
              or: [
                { attr: 'role', value: 'edge' },
                { attr: 'tags', op: 'contains', value: 'edge' },
              ],
            },
            { attr: 'status', value: 'active', negate: true },
          ],
        },
        {
          and: [
            {
              or: [
                { attr: 'role', value: 'edge' },
                { attr: 'tags', op: 'contains', value: 'edge' },
              ],
            },
            { attr: 'status', value: 'planned', negate: true },
          ],
        },
      ],
    ];
    for (const [op, yes, no] of cases) {
      it(`Policy conditions (contract 4.2): ${op} matches when it holds and not when it does not`, async () => {
        const m = await matches([after(yes, `${op} yes`), after(no, `${op} no`)]);
        assert.deepEqual(m.update, [`${op} yes`]);
      });
    }

    it('Policy conditions: an attribute the object lacks matches no comparison (and its negation matches)', async () => {
      const m = await matches([
        after({ attr: 'missing', op: 'gt', value: 0 }, 'missing gt'),
        after({ attr: 'missing', op: 'regex', value: '.*' }, 'missing regex'),
        after({ attr: 'missing', value: 'x', negate: true }, 'missing negated'),
      ]);
      assert.deepEqual(m.update, ['missing negated']);
    });

    it('Policy conditions: ordered comparisons do not mix numbers and strings', async () => {
      const m = await matches([
        after({ attr: 'u_height', op: 'gt', value: '1' }, 'string bound'),
        after({ attr: 'name', op: 'gt', value: 'rtr-0' }, 'string vs string'),
      ]);
      assert.deepEqual(m.update, ['string vs string']);
    });
  });

  describe('condition state', () => {
    /** One policy per condition state on `conditions`, named `<prefix> before`, `<prefix> after` and `<prefix> either`. */
    const inEachState = (prefix: string, conditions: unknown): PolicySpec[] =>
      (['before', 'after', 'either'] as const).map((state) => ({
        name: `${prefix} ${state}`,
        conditions,
        condition_state: state,
      }));

    it("Condition state: before reads main's original, after reads the branch's state, either (the default) reads both sides", async () => {
      const active = { attr: 'status', value: 'active' };
      const planned = { attr: 'status', value: 'planned' };
      const m = await matches([
        { name: 'before active', conditions: active, condition_state: 'before' },
        { name: 'before planned', conditions: planned, condition_state: 'before' },
        { name: 'after active', conditions: active, condition_state: 'after' },
        { name: 'after planned', conditions: planned, condition_state: 'after' },
        { name: 'either active', conditions: active, condition_state: 'either' },
        { name: 'either planned', conditions: planned, condition_state: 'either' },
        { name: 'default active', conditions: active },
      ]);
      assert.deepEqual(m.update, [
        'after planned',
        'before active',
        'default active',
        'either active',
        'either planned',
      ]);
    });

    it('Condition state: a create has only the branch side (before never matches it)', async () => {
      const m = await matches(inEachState('create', { attr: 'status', value: 'staged' }));
      assert.deepEqual(m.create, ['create after', 'create either']);
    });

    it("Condition state: a delete has only main's side (after never matches it)", async () => {
      const m = await matches(inEachState('delete', { attr: 'status', value: 'decommissioning' }));
      assert.deepEqual(m.remove, ['delete before', 'delete either']);
    });

    it('Condition state: with either, a negated condition must fail on both sides to match', async () => {
      const m = await matches([
        {
          name: 'not active',
          conditions: { attr: 'status', value: 'active', negate: true },
          condition_state: 'either',
        },
        {
          name: 'not retired',
          conditions: { attr: 'status', value: 'retired', negate: true },
          condition_state: 'either',
        },
      ]);
      assert.deepEqual(m.update, ['not retired']);
    });
  });

  describe('changed, unchanged and snapshots', () => {
    it('Policy: {attr: status, op: changed} matches when the attribute moved, whatever it moved from', async () => {
      const m = await matches([
        { name: 'status changed', conditions: { attr: 'status', op: 'changed' } },
        { name: 'serial changed', conditions: { attr: 'serial', op: 'changed' } },
        { name: 'nested unchanged path changed', conditions: { attr: 'config.vrf', op: 'changed' } },
      ]);
      assert.deepEqual(m.update, ['status changed']);
      // A create moves every attribute it sets (from nothing); a delete moves every attribute it had.
      assert.deepEqual(m.create, ['status changed']);
      assert.deepEqual(m.remove, ['status changed']);
    });

    it('Policy: unchanged is the inverse of changed', async () => {
      const m = await matches([
        { name: 'status unchanged', conditions: { attr: 'status', op: 'unchanged' } },
        { name: 'serial unchanged', conditions: { attr: 'serial', op: 'unchanged' } },
        { name: 'status changed negated', conditions: { attr: 'status', op: 'changed', negate: true } },
      ]);
      assert.deepEqual(m.update, ['serial unchanged']);
    });

    it('Policy: changed and unchanged ignore the condition state', async () => {
      const m = await matches([
        { name: 'changed before', conditions: { attr: 'status', op: 'changed' }, condition_state: 'before' },
        { name: 'changed after', conditions: { attr: 'status', op: 'changed' }, condition_state: 'after' },
        { name: 'unchanged before', conditions: { attr: 'serial', op: 'unchanged' }, condition_state: 'before' },
        { name: 'unchanged after', conditions: { attr: 'serial', op: 'unchanged' }, condition_state: 'after' },
      ]);
      assert.deepEqual(m.update, ['changed after', 'changed before', 'unchanged after', 'unchanged before']);
    });

    it('Policy: a transition — moved to planned from anything — is changed AND snapshots.postchange', async () => {
      const m = await matches([
        {
          name: 'to planned',
          conditions: {
            and: [
              { attr: 'status', op: 'changed' },
              { attr: 'snapshots.postchange.status', value: 'planned' },
            ],
          },
        },
        {
          name: 'to active',
          conditions: {
            and: [
              { attr: 'status', op: 'changed' },
              { attr: 'snapshots.postchange.status', value: 'active' },
            ],
          },
        },
        {
          name: 'from active to planned',
          conditions: {
            and: [
              { attr: 'snapshots.prechange.status', value: 'active' },
              { attr: 'snapshots.postchange.status', value: 'planned' },
            ],
          },
        },
      ]);
      assert.deepEqual(m.update, ['from active to planned', 'to planned']);
    });

    it('Policy: snapshots.prechange.<attr> and snapshots.postchange.<attr> read one named side whatever the condition state', async () => {
      const m = await matches([
        {
          name: 'pre active, state after',
          conditions: { attr: 'snapshots.prechange.status', value: 'active' },
          condition_state: 'after',
        },
        { name: 'pre planned, state either', conditions: { attr: 'snapshots.prechange.status', value: 'planned' } },
        {
          name: 'post planned, state before',
          conditions: { attr: 'snapshots.postchange.status', value: 'planned' },
          condition_state: 'before',
        },
        { name: 'post active, state either', conditions: { attr: 'snapshots.postchange.status', value: 'active' } },
        {
          name: 'post nested path',
          conditions: { attr: 'snapshots.postchange.config.vrf', value: 'mgmt' },
          condition_state: 'before',
        },
        {
          name: 'pre height gt',
          conditions: { attr: 'snapshots.prechange.u_height', op: 'lt', value: 3 },
          condition_state: 'after',
        },
      ]);
      assert.deepEqual(m.update, [
        'post nested path',
        'post planned, state before',
        'pre active, state after',
        'pre height gt',
      ]);
    });

    it('Policy: snapshots on a create have no prechange side and on a delete no postchange side', async () => {
      const m = await matches([
        { name: 'pre staged', conditions: { attr: 'snapshots.prechange.status', value: 'staged' } },
        { name: 'post staged', conditions: { attr: 'snapshots.postchange.status', value: 'staged' } },
        { name: 'pre decom', conditions: { attr: 'snapshots.prechange.status', value: 'decommissioning' } },
        { name: 'post decom', conditions: { attr: 'snapshots.postchange.status', value: 'decommissioning' } },
      ]);
      assert.deepEqual(m.create, ['post staged']);
      assert.deepEqual(m.remove, ['pre decom']);
    });
  });
});

describe('policies: re-matched whenever the branch touches something new (General rule 3)', () => {
  const svc = suiteService();
  const [author] = actorsForSuite(svc, ['alice', [...AUTHOR]]);
  before(async () => {
    await policy(svc, { name: 'Devices', object_types: ['dcim.device'] });
    await policy(svc, {
      name: 'Planned prefixes',
      object_types: ['ipam.prefix'],
      conditions: { attr: 'status', value: 'planned' },
      condition_state: 'after',
    });
  });

  const names = async (client: ApiClient, id: number) => (await detail(client, id)).policies.map((p: any) => p.name);

  it('General rule 3: a policy attaches when the branch first touches its object type, and detaches when the branch no longer does', async () => {
    const { branch: b, inBranch } = await branch(author.client, 'grows');
    await created(inBranch.post(PREFIXES, { prefix: '10.0.0.0/24', status: 'active' }));
    const cr = await openRequest(author.client, b.id);
    assert.deepEqual(await names(author.client, cr.id), []);
    const dev = await device(inBranch, { name: 'new-dev' });
    assert.deepEqual(await names(author.client, cr.id), ['Devices']);
    assert.deepEqual((await detail(author.client, cr.id)).policies[0].matched_object_types, ['dcim.device']);
    // Deleting the device created in the branch removes the change: the branch no longer touches devices.
    expectStatus(await inBranch.delete(`${DEVICES}${dev.id}/`), 204);
    assert.deepEqual(await names(author.client, cr.id), []);
  });

  it('General rule 3: a policy attaches when a branch edit makes its conditions hold, and detaches when they stop holding', async () => {
    const { branch: b, inBranch } = await branch(author.client, 'conditions');
    const prefix = await created(inBranch.post(PREFIXES, { prefix: '10.1.0.0/24', status: 'active' }));
    const cr = await openRequest(author.client, b.id);
    assert.deepEqual(await names(author.client, cr.id), []);
    await patchObject(inBranch, PREFIXES, prefix.id, { status: 'planned' });
    assert.deepEqual(await names(author.client, cr.id), ['Planned prefixes']);
    await patchObject(inBranch, PREFIXES, prefix.id, { status: 'reserved' });
    assert.deepEqual(await names(author.client, cr.id), []);
  });

  it('General rule 3: the merge gate re-matches policies for itself — a policy the attached set does not know yet still blocks the merge', async () => {
    const reviewer = await actor(svc, 'erin', [
      { object_types: ['change_control.changerequest', 'change_control.review'], actions: ['view', 'add'] },
    ]);
    const { branch: b, inBranch } = await branch(author.client, 'gate-rematch');
    await created(inBranch.post(PREFIXES, { prefix: '10.7.0.0/24', status: 'active' }));
    const cr = await openRequest(author.client, b.id);
    await policy(svc, {
      name: 'Active prefixes',
      object_types: ['ipam.prefix'],
      conditions: { attr: 'status', value: 'active' },
      rules: [{ name: 'none', min_reviews: 0 }],
    });
    expectStatus(await author.client.post(`/api/plugins/change-control/change-requests/${cr.id}/submit/`, {}), 200);
    assert.equal((await detail(author.client, cr.id)).ready_to_merge, true);
    // A policy and rule written behind every refresh: the stored attached set does not have them.
    const db = withTables<ChangeControlTables>(svc.host.db);
    const now = svc.clock.now().toISOString();
    const late = await db
      .insertInto('cc_policies')
      .values({
        name: 'Late prefixes',
        description: '',
        enabled: 1,
        weight: 10,
        object_types: '["ipam.prefix"]',
        conditions: null,
        condition_state: 'either',
        checks: '[]',
        comments: '',
        created: now,
        last_updated: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('cc_policy_rules')
      .values({
        policy_id: late.id,
        name: 'erin',
        min_reviews: 1,
        users: JSON.stringify([reviewer.id]),
        groups: '[]',
        created: now,
        last_updated: now,
      })
      .execute();
    const refused = await svc.admin.post(`/api/plugins/branching/branches/${b.id}/merge/`, { commit: true });
    expectStatus(refused, 409);
    assert.match(refused.body.detail, /erin/);
    const live = await detail(author.client, cr.id);
    assert.equal(live.ready_to_merge, false);
    assert.match(live.merge_blocked_reason, /Late prefixes/);
  });

  it('General rule 3: a request already under review picks up a newly matching policy and its rules govern the status', async () => {
    const reviewer = await actor(svc, 'bob', [
      { object_types: ['change_control.changerequest', 'change_control.review'], actions: ['view', 'add'] },
    ]);
    await policy(svc, {
      name: 'Sites need bob',
      object_types: ['dcim.site'],
      rules: [{ name: 'bob', users: [reviewer.id] }],
    });
    const { branch: b, inBranch } = await branch(author.client, 'under-review');
    await device(inBranch, { name: 'd1' });
    const cr = await openRequest(author.client, b.id);
    await policy(svc, {
      name: 'Devices need nobody',
      object_types: ['dcim.device'],
      rules: [{ name: 'none', min_reviews: 0 }],
    });
    const submitted = await author.client.post(`/api/plugins/change-control/change-requests/${cr.id}/submit/`, {});
    expectStatus(submitted, 200);
    assert.equal(submitted.body.status, 'approved');
    await created(inBranch.post('/api/dcim/sites/', { name: 'site-a' }));
    const after = await detail(author.client, cr.id);
    assert.ok(after.policies.some((p: any) => p.name === 'Sites need bob'));
    assert.equal(after.status, 'needs-review');
    assert.equal(after.approved, false);
  });
});
