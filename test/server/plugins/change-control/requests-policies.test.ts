import assert from 'node:assert/strict';
import { serviceForSuite, suiteService, type TestService } from '../../../support/service';
import {
  actor,
  AUTHOR,
  created,
  customFieldsLog,
  detail,
  expectCustomFieldsRefused,
  expectStatus,
  group,
  ok,
  policy,
  POLICIES,
  RULES,
  type Actor,
  type PermissionGrant,
} from './fixtures';
import { draftRequest, evaluation, ids, VIEW_ONLY } from './requests-support';

const POLICY_TYPE = 'change_control.policy';
const RULE_TYPE = 'change_control.policyrule';

/** View on everything, plus the given grants on one model. */
function viewPlus(
  objectType: string,
  ...grants: Array<{ actions: string[]; constraints?: unknown }>
): PermissionGrant[] {
  const others = VIEW_ONLY.map((g) => ({ ...g, object_types: g.object_types.filter((t) => t !== objectType) }));
  return [...others, ...grants.map((g) => ({ object_types: [objectType], ...g }))];
}

describe('policies: fields, checks and the required_checks filter', () => {
  const svc = suiteService();

  it('contract 4.1: a policy is created with its defaults (enabled, weight 1000, every object type, no conditions, condition state either, no checks)', async () => {
    const p = await created(svc.admin.post(POLICIES, { name: 'Defaults' }));
    assert.equal(p.enabled, true);
    assert.equal(p.weight, 1000);
    assert.deepEqual(p.object_types, []);
    assert.equal(p.conditions, null);
    assert.equal(p.condition_state, 'either');
    assert.deepEqual(p.checks, []);
    assert.equal(p.display, 'Defaults');
  });

  it('Policy custom_fields: a free-form JSON object ({} by default) a write replaces whole, shown in detail, list and changelog; anything else is 400 naming it', async () => {
    const fields = { owner: 'netops', cost: 3, nested: { list: [1, null, true] } };
    const p = await created(svc.admin.post(POLICIES, { name: 'Custom fields', custom_fields: fields }));
    assert.deepEqual(p.custom_fields, fields);
    assert.deepEqual((await created(svc.admin.post(POLICIES, { name: 'No custom fields' }))).custom_fields, {});
    assert.deepEqual(
      (await ok(svc.admin.patch(`${POLICIES}${p.id}/`, { custom_fields: { ticket: 'T-1' } }))).custom_fields,
      { ticket: 'T-1' },
    );
    assert.deepEqual((await ok(svc.admin.patch(`${POLICIES}${p.id}/`, { description: 'kept' }))).custom_fields, {
      ticket: 'T-1',
    });
    assert.deepEqual(
      (await ok(svc.admin.put(`${POLICIES}${p.id}/`, { name: 'Custom fields', custom_fields: { a: 1 } })))
        .custom_fields,
      { a: 1 },
    );
    assert.deepEqual((await ok(svc.admin.get(`${POLICIES}${p.id}/`))).custom_fields, { a: 1 });
    assert.deepEqual((await ok(svc.admin.get(`${POLICIES}?id=${p.id}`))).results[0].custom_fields, { a: 1 });
    assert.deepEqual(await customFieldsLog(svc.admin, POLICY_TYPE, p.id), [
      [undefined, fields],
      [fields, { ticket: 'T-1' }],
      [{ ticket: 'T-1' }, { ticket: 'T-1' }],
      [{ ticket: 'T-1' }, { a: 1 }],
    ]);
    await expectCustomFieldsRefused((custom_fields) => svc.admin.patch(`${POLICIES}${p.id}/`, { custom_fields }));
    await expectCustomFieldsRefused((custom_fields) => svc.admin.post(POLICIES, { name: 'Refused', custom_fields }));
    assert.deepEqual((await ok(svc.admin.get(`${POLICIES}${p.id}/`))).custom_fields, { a: 1 });
  });

  it('contract 4.1: policy names are unique (400 naming name)', async () => {
    await policy(svc, { name: 'Unique' });
    const res = await svc.admin.post(POLICIES, { name: 'Unique' });
    expectStatus(res, 400);
    assert.ok(res.body.name, JSON.stringify(res.body));
  });

  it('Policy checks: a PATCH replaces the whole list (Endpoints: PATCH policies/{id}/ checks replaces the list)', async () => {
    const { id } = await policy(svc, { name: 'Replace', checks: ['has-changes', 'ci/build', 'ci/lint'] });
    const res = await svc.admin.patch(`${POLICIES}${id}/`, { checks: ['ci/deploy'] });
    expectStatus(res, 200);
    assert.deepEqual(res.body.checks, ['ci/deploy']);
    assert.deepEqual((await ok(svc.admin.get(`${POLICIES}${id}/`))).checks, ['ci/deploy']);
    // An empty list clears it; a PATCH without checks leaves them.
    assert.deepEqual((await ok(svc.admin.patch(`${POLICIES}${id}/`, { checks: [] }))).checks, []);
    await ok(svc.admin.patch(`${POLICIES}${id}/`, { checks: ['a', 'b'] }));
    assert.deepEqual((await ok(svc.admin.patch(`${POLICIES}${id}/`, { description: 'x' }))).checks, ['a', 'b']);
  });

  it('Policy checks: registered opt-in names and reported names are held together in one list', async () => {
    const { id } = await policy(svc, {
      name: 'Mixed',
      checks: ['no-conflicts', 'ci/unit', 'threads-resolved', 'security/scan'],
    });
    assert.deepEqual((await ok(svc.admin.get(`${POLICIES}${id}/`))).checks, [
      'no-conflicts',
      'ci/unit',
      'threads-resolved',
      'security/scan',
    ]);
  });

  it('Note 1: adding a check name without dropping the rest — read checks first and send the combined list', async () => {
    const { id } = await policy(svc, { name: 'Combine', checks: ['ci/build'] });
    const current = (await ok(svc.admin.get(`${POLICIES}${id}/`))).checks as string[];
    const res = await svc.admin.patch(`${POLICIES}${id}/`, { checks: [...current, 'ci/e2e'] });
    expectStatus(res, 200);
    assert.deepEqual(res.body.checks, ['ci/build', 'ci/e2e']);
  });

  it('Policy checks: a blank or non-string check name is refused (400 naming checks)', async () => {
    const { id } = await policy(svc, { name: 'Blank' });
    for (const checks of [[''], ['  '], [42], 'ci/build']) {
      const res = await svc.admin.patch(`${POLICIES}${id}/`, { checks });
      expectStatus(res, 400, JSON.stringify(checks));
      assert.ok(
        Object.keys(res.body).some((k) => k.startsWith('checks')),
        JSON.stringify(res.body),
      );
    }
  });

  it('Endpoints: GET policies/?required_checks=<name> lists the policies requiring it; several values are OR', async () => {
    const a = await policy(svc, { name: 'RC-A', checks: ['rc/one', 'rc/two'] });
    const b = await policy(svc, { name: 'RC-B', checks: ['rc/two'] });
    const c = await policy(svc, { name: 'RC-C', checks: ['rc/three'] });
    await policy(svc, { name: 'RC-D', checks: [] });
    assert.deepEqual(ids(await svc.admin.get(`${POLICIES}?required_checks=rc/one`)), [a.id]);
    assert.deepEqual(ids(await svc.admin.get(`${POLICIES}?required_checks=rc/two`)).sort(), [a.id, b.id].sort());
    assert.deepEqual(
      ids(await svc.admin.get(`${POLICIES}?required_checks=rc/one&required_checks=rc/three`)).sort(),
      [a.id, c.id].sort(),
    );
    assert.deepEqual(ids(await svc.admin.get(`${POLICIES}?required_checks=rc/none`)), []);
    // The filter matches names exactly, not as substrings.
    assert.deepEqual(ids(await svc.admin.get(`${POLICIES}?required_checks=rc`)), []);
    // It combines (AND) with other filters.
    assert.deepEqual(ids(await svc.admin.get(`${POLICIES}?required_checks=rc/two&name=RC-B`)), [b.id]);
  });

  it('Policy object types: an unknown object type is refused (400 naming object_types)', async () => {
    for (const object_types of [['dcim.nothing'], ['not-a-type'], 'dcim.device']) {
      const res = await svc.admin.post(POLICIES, { name: `bad-types-${JSON.stringify(object_types)}`, object_types });
      expectStatus(res, 400, JSON.stringify(object_types));
      assert.ok(
        Object.keys(res.body).some((k) => k.startsWith('object_types')),
        JSON.stringify(res.body),
      );
    }
  });

  const INVALID_CONDITIONS: Array<[string, unknown]> = [
    ['a string', 'status=active'],
    ['a list', [{ attr: 'status', value: 'active' }]],
    ['a leaf without attr', { op: 'eq', value: 'active' }],
    ['a blank attr', { attr: '', value: 'x' }],
    ['an unknown operator', { attr: 'status', op: 'startswith', value: 'a' }],
    ['"in" with a value that is not a list', { attr: 'status', op: 'in', value: 'active' }],
    ['"regex" with an invalid expression', { attr: 'name', op: 'regex', value: '([a-z' }],
    ['"regex" with a value that is not a string', { attr: 'name', op: 'regex', value: 5 }],
    ['negate that is not a boolean', { attr: 'status', value: 'active', negate: 'yes' }],
    ['an unknown key in a leaf', { attr: 'status', value: 'active', extra: 1 }],
    ['an empty "and"', { and: [] }],
    ['an empty "or"', { or: [] }],
    ['"and" and "or" together', { and: [{ attr: 'a' }], or: [{ attr: 'b' }] }],
    ['"and" with a leaf key beside it', { and: [{ attr: 'a' }], attr: 'b' }],
    [
      'an invalid leaf nested deep',
      {
        and: [
          { attr: 'a', value: 1 },
          {
            or: [
              { attr: 'b', value: 2 },
              { attr: 'c', op: 'nope' },
            ],
          },
        ],
      },
    ],
  ];
  for (const [what, conditions] of INVALID_CONDITIONS) {
    it(`Policy conditions: an invalid condition set is refused on write (400 naming conditions): ${what}`, async () => {
      const name = `invalid ${what}`;
      const res = await svc.admin.post(POLICIES, { name, conditions });
      expectStatus(res, 400);
      assert.ok(
        Object.keys(res.body).some((k) => k.startsWith('conditions')),
        JSON.stringify(res.body),
      );
      assert.equal((await ok(svc.admin.get(`${POLICIES}?name=${encodeURIComponent(name)}`))).count, 0);
      const { id } = await policy(svc, { name: `${name} (patched)` });
      expectStatus(await svc.admin.patch(`${POLICIES}${id}/`, { conditions }), 400);
      assert.equal((await ok(svc.admin.get(`${POLICIES}${id}/`))).conditions, null);
    });
  }

  it('Policy conditions: a condition set nested absurdly deep is refused with 400, never a server error', async () => {
    const depth = 20000;
    const raw = `{"name":"deep","conditions":${'{"and":['.repeat(depth)}{"attr":"status","value":"active"}${']}'.repeat(depth)}}`;
    const res = await svc.admin.post(POLICIES, undefined, { raw, headers: { 'Content-Type': 'application/json' } });
    expectStatus(res, 400);
    assert.ok(
      Object.keys(res.body).some((k) => k.startsWith('conditions')),
      JSON.stringify(res.body).slice(0, 300),
    );
  });

  it('Policy conditions: every operator of contract 4.2, negate and nested and/or are accepted and returned as written', async () => {
    const conditions = {
      or: [
        {
          and: [
            { attr: 'status', op: 'eq', value: 'active' },
            { attr: 'u_height', op: 'gt', value: 1 },
            { attr: 'u_height', op: 'gte', value: 1 },
          ],
        },
        {
          and: [
            { attr: 'u_height', op: 'lt', value: 9 },
            { attr: 'u_height', op: 'lte', value: 9 },
            { attr: 'role', op: 'in', value: ['core', 'edge'] },
          ],
        },
        { attr: 'tags', op: 'contains', value: 'prod' },
        { attr: 'name', op: 'regex', value: '^rtr-\\d+$', negate: true },
        { attr: 'snapshots.prechange.status', op: 'changed' },
        { attr: 'serial', op: 'unchanged' },
        { attr: 'snapshots.postchange.config.vrf', value: 'mgmt' },
      ],
    };
    const res = await svc.admin.post(POLICIES, { name: 'All operators', conditions, condition_state: 'after' });
    expectStatus(res, 201);
    assert.deepEqual(res.body.conditions, conditions);
    assert.equal(res.body.condition_state, 'after');
    // Setting conditions back to null is allowed.
    assert.equal((await ok(svc.admin.patch(`${POLICIES}${res.body.id}/`, { conditions: null }))).conditions, null);
  });

  it('Policy condition state: only either, before and after are accepted (400 naming condition_state)', async () => {
    const res = await svc.admin.post(POLICIES, { name: 'bad state', condition_state: 'both' });
    expectStatus(res, 400);
    assert.ok(res.body.condition_state, JSON.stringify(res.body));
  });
});

describe('policy rules: fields', () => {
  const svc = suiteService();
  let policyId: number;
  before(async () => {
    policyId = (await policy(svc, { name: 'Rules' })).id;
  });

  it('contract 4.1: a rule defaults to one approval, no users, no groups', async () => {
    const res = await svc.admin.post(RULES, { policy: policyId, name: 'default' });
    expectStatus(res, 201);
    assert.equal(res.body.min_reviews, 1);
    assert.deepEqual(res.body.users, []);
    assert.deepEqual(res.body.groups, []);
    assert.equal(res.body.policy, policyId);
  });

  it('PolicyRule custom_fields: a free-form JSON object ({} by default) a write replaces whole, shown in detail, list and changelog; anything else is 400 naming it', async () => {
    const r = await created(
      svc.admin.post(RULES, { policy: policyId, name: 'custom', custom_fields: { team: 'core' } }),
    );
    assert.deepEqual(r.custom_fields, { team: 'core' });
    assert.deepEqual((await created(svc.admin.post(RULES, { policy: policyId, name: 'no custom' }))).custom_fields, {});
    assert.deepEqual(
      (await ok(svc.admin.patch(`${RULES}${r.id}/`, { custom_fields: { on_call: ['bob'] } }))).custom_fields,
      { on_call: ['bob'] },
    );
    assert.deepEqual((await ok(svc.admin.get(`${RULES}${r.id}/`))).custom_fields, { on_call: ['bob'] });
    assert.deepEqual((await ok(svc.admin.get(`${RULES}?id=${r.id}`))).results[0].custom_fields, { on_call: ['bob'] });
    assert.deepEqual(await customFieldsLog(svc.admin, RULE_TYPE, r.id), [
      [undefined, { team: 'core' }],
      [{ team: 'core' }, { on_call: ['bob'] }],
    ]);
    await expectCustomFieldsRefused((custom_fields) => svc.admin.patch(`${RULES}${r.id}/`, { custom_fields }));
  });

  it('PolicyRule: zero approvals is allowed; a negative minimum is refused (400 naming min_reviews)', async () => {
    expectStatus(await svc.admin.post(RULES, { policy: policyId, name: 'zero', min_reviews: 0 }), 201);
    const res = await svc.admin.post(RULES, { policy: policyId, name: 'negative', min_reviews: -1 });
    expectStatus(res, 400);
    assert.ok(res.body.min_reviews, JSON.stringify(res.body));
  });

  it('PolicyRule: users and groups must exist (400 naming the field); a rule holds both', async () => {
    const u = await actor(svc, 'ruleuser');
    const g = await group(svc, 'rulegroup');
    const both = await svc.admin.post(RULES, { policy: policyId, name: 'both', users: [u.id], groups: [g] });
    expectStatus(both, 201);
    assert.deepEqual(both.body.users, [u.id]);
    assert.deepEqual(both.body.groups, [g]);
    const badUser = await svc.admin.post(RULES, { policy: policyId, name: 'bad user', users: [999999] });
    expectStatus(badUser, 400);
    assert.ok(badUser.body.users, JSON.stringify(badUser.body));
    const badGroup = await svc.admin.post(RULES, { policy: policyId, name: 'bad group', groups: [999999] });
    expectStatus(badGroup, 400);
    assert.ok(badGroup.body.groups, JSON.stringify(badGroup.body));
  });

  it('contract 4.1: a rule name is unique within its policy, not across policies; the policy must exist', async () => {
    expectStatus(await svc.admin.post(RULES, { policy: policyId, name: 'same' }), 201);
    const dup = await svc.admin.post(RULES, { policy: policyId, name: 'same' });
    expectStatus(dup, 400);
    assert.ok(dup.body.name, JSON.stringify(dup.body));
    const other = (await policy(svc, { name: 'Other rules' })).id;
    expectStatus(await svc.admin.post(RULES, { policy: other, name: 'same' }), 201);
    const missing = await svc.admin.post(RULES, { policy: 999999, name: 'orphan' });
    expectStatus(missing, 400);
    assert.ok(missing.body.policy, JSON.stringify(missing.body));
  });

  it('deleting a policy or rule that governs an open change request is 409 naming the requests, unless ?force=true, which detaches it, refreshes them and records it', async () => {
    const author = await actor(svc, 'forced-author', AUTHOR);
    const p = await policy(svc, {
      name: 'Governing',
      object_types: ['dcim.device'],
      rules: [{ name: 'gate', min_reviews: 5 }],
    });
    const one = await draftRequest(author, 'forced-1');
    const two = await draftRequest(author, 'forced-2');
    assert.ok((await detail(author.client, one.cr.id)).policies.some((x: { id: number }) => x.id === p.id));
    const refused = await svc.admin.delete(`${POLICIES}${p.id}/`);
    expectStatus(refused, 409);
    assert.ok(
      refused.body.change_requests.includes(one.cr.id) && refused.body.change_requests.includes(two.cr.id),
      JSON.stringify(refused.body),
    );
    assert.equal(refused.body.count, refused.body.change_requests.length);
    assert.match(refused.body.detail, new RegExp(`#${one.cr.id}`));
    const ruleRefused = await svc.admin.delete(`${RULES}${p.rules[0]!.id}/`);
    expectStatus(ruleRefused, 409);
    assert.ok(ruleRefused.body.change_requests.includes(one.cr.id));
    expectStatus(await svc.admin.delete(`${POLICIES}${p.id}/?force=maybe`), 400);
    expectStatus(await svc.admin.get(`${POLICIES}${p.id}/`), 200);
    // Forced: the rule goes, then the policy; the requests are detached and refreshed.
    expectStatus(await svc.admin.delete(`${RULES}${p.rules[0]!.id}/?force=true`), 204);
    expectStatus(await svc.admin.delete(`${POLICIES}${p.id}/?force=true`), 204);
    assert.ok(!(await detail(author.client, one.cr.id)).policies.some((x: { id: number }) => x.id === p.id));
    const history = (
      await ok(
        svc.admin.get(
          `/api/core/object-changes/?changed_object_type=change_control.changerequest&changed_object_id=${one.cr.id}&limit=100`,
        ),
      )
    ).results;
    assert.ok(
      history.some(
        (h: any) => h.postchange_data?.detached === 'Policy "Governing"' && h.postchange_data?.forced_by === 'admin',
      ),
      JSON.stringify(history.map((h: any) => h.postchange_data)),
    );
    for (const id of [one.cr.id, two.cr.id])
      await ok(svc.admin.post(`/api/plugins/change-control/change-requests/${id}/abandon/`, {}));
  });

  it('deleting a policy that governs only closed change requests needs no force', async () => {
    const author = await actor(svc, 'closed-author', AUTHOR);
    const p = await policy(svc, { name: 'Past', object_types: ['dcim.device'] });
    const { cr } = await draftRequest(author, 'closed-1');
    await ok(svc.admin.post(`/api/plugins/change-control/change-requests/${cr.id}/abandon/`, {}));
    expectStatus(await svc.admin.delete(`${POLICIES}${p.id}/`), 204);
  });

  it('PolicyRule: deleting a policy deletes its rules', async () => {
    const p = await policy(svc, { name: 'Doomed', rules: [{ name: 'r1' }, { name: 'r2' }] });
    expectStatus(await svc.admin.delete(`${POLICIES}${p.id}/`), 204);
    for (const r of p.rules) expectStatus(await svc.admin.get(`${RULES}${r.id}/`), 404);
  });
});

describe('policies and rules: permission matrix of every write', () => {
  let svc: TestService;
  let n = 0;
  serviceForSuite((started) => {
    svc = started;
  });

  // Policies: constraints on the policy's name.
  it('matrix policy create: without add_policy 403; under an add constraint the new policy does not satisfy 403 and nothing written; with it 201', async () => {
    const without = await actor(
      svc,
      `p-no-add-${++n}`,
      viewPlus(POLICY_TYPE, { actions: ['view', 'change', 'delete'] }),
    );
    expectStatus(await without.client.post(POLICIES, { name: 'nope' }), 403);
    const constrained = await actor(
      svc,
      `p-add-con-${n}`,
      viewPlus(POLICY_TYPE, { actions: ['view'] }, { actions: ['add'], constraints: { name__in: ['allowed'] } }),
    );
    expectStatus(await constrained.client.post(POLICIES, { name: 'forbidden' }), 403);
    assert.equal((await ok(svc.admin.get(`${POLICIES}?name=forbidden`))).count, 0);
    expectStatus(await constrained.client.post(POLICIES, { name: 'allowed' }), 201);
    const holder = await actor(svc, `p-add-${n}`, viewPlus(POLICY_TYPE, { actions: ['view', 'add'] }));
    const res = await holder.client.post(POLICIES, { name: 'made by holder', checks: ['ci/x'] });
    expectStatus(res, 201);
    assert.deepEqual(res.body.checks, ['ci/x']);
  });

  it('matrix policy update: without change_policy 403; under a constraint that excludes it 404; with it 200 and checks replaced', async () => {
    const { id } = await policy(svc, { name: `target-${++n}`, checks: ['a', 'b'] });
    const without = await actor(svc, `p-no-change-${n}`, viewPlus(POLICY_TYPE, { actions: ['view', 'add', 'delete'] }));
    expectStatus(await without.client.patch(`${POLICIES}${id}/`, { checks: ['c'] }), 403);
    const constrained = await actor(
      svc,
      `p-change-con-${n}`,
      viewPlus(POLICY_TYPE, { actions: ['view', 'change'], constraints: { name: 'some other policy' } }),
    );
    expectStatus(await constrained.client.patch(`${POLICIES}${id}/`, { checks: ['c'] }), 404);
    assert.deepEqual((await ok(svc.admin.get(`${POLICIES}${id}/`))).checks, ['a', 'b']);
    const holder = await actor(svc, `p-change-${n}`, viewPlus(POLICY_TYPE, { actions: ['view', 'change'] }));
    const res = await holder.client.patch(`${POLICIES}${id}/`, { checks: ['c'] });
    expectStatus(res, 200);
    assert.deepEqual(res.body.checks, ['c']);
  });

  /**
   * The delete row of the matrix for the object at `url` (of `type`): without delete 403; under a
   * delete constraint that excludes it 404 and it is kept; with delete 204 and it is gone.
   */
  async function expectDeleteMatrix(type: string, url: string, excluding: Record<string, unknown>): Promise<void> {
    const without = await actor(svc, `no-del-${++n}`, viewPlus(type, { actions: ['view', 'add', 'change'] }));
    expectStatus(await without.client.delete(url), 403);
    const constrained = await actor(
      svc,
      `del-con-${n}`,
      viewPlus(type, { actions: ['view', 'delete'], constraints: excluding }),
    );
    expectStatus(await constrained.client.delete(url), 404);
    expectStatus(await svc.admin.get(url), 200);
    const holder = await actor(svc, `del-${n}`, viewPlus(type, { actions: ['view', 'delete'] }));
    expectStatus(await holder.client.delete(url), 204);
    expectStatus(await svc.admin.get(url), 404);
  }

  it('matrix policy delete: without delete_policy 403; under a constraint that excludes it 404; with it 204', async () => {
    const { id } = await policy(svc, { name: `del-target-${++n}` });
    await expectDeleteMatrix(POLICY_TYPE, `${POLICIES}${id}/`, { name: 'some other policy' });
  });

  // Rules: constraints on the rule's policy.
  it('matrix rule create: without add_policyrule 403; under an add constraint the new rule does not satisfy 403 and nothing written; with it 201', async () => {
    const { id: pid } = await policy(svc, { name: `rule-home-${++n}` });
    const { id: other } = await policy(svc, { name: `rule-other-${n}` });
    const without = await actor(svc, `r-no-add-${n}`, viewPlus(RULE_TYPE, { actions: ['view', 'change', 'delete'] }));
    expectStatus(await without.client.post(RULES, { policy: pid, name: 'r' }), 403);
    const constrained = await actor(
      svc,
      `r-add-con-${n}`,
      viewPlus(RULE_TYPE, { actions: ['view'] }, { actions: ['add'], constraints: { policy: other } }),
    );
    expectStatus(await constrained.client.post(RULES, { policy: pid, name: 'r' }), 403);
    assert.equal((await ok(svc.admin.get(`${RULES}?policy_id=${pid}`))).count, 0);
    const holder = await actor(svc, `r-add-${n}`, viewPlus(RULE_TYPE, { actions: ['view', 'add'] }));
    const res = await holder.client.post(RULES, { policy: pid, name: 'r', min_reviews: 0 });
    expectStatus(res, 201);
    assert.equal(res.body.min_reviews, 0);
  });

  it('matrix rule update: without change_policyrule 403; under a constraint that excludes it 404; with it 200', async () => {
    const { rules } = await policy(svc, { name: `rule-upd-${++n}`, rules: [{ name: 'r', min_reviews: 1 }] });
    const ruleId = rules[0]!.id;
    const without = await actor(svc, `r-no-change-${n}`, viewPlus(RULE_TYPE, { actions: ['view', 'add', 'delete'] }));
    expectStatus(await without.client.patch(`${RULES}${ruleId}/`, { min_reviews: 3 }), 403);
    const constrained = await actor(
      svc,
      `r-change-con-${n}`,
      viewPlus(RULE_TYPE, { actions: ['view', 'change'], constraints: { name: 'another rule' } }),
    );
    expectStatus(await constrained.client.patch(`${RULES}${ruleId}/`, { min_reviews: 3 }), 404);
    assert.equal((await ok(svc.admin.get(`${RULES}${ruleId}/`))).min_reviews, 1);
    const holder = await actor(svc, `r-change-${n}`, viewPlus(RULE_TYPE, { actions: ['view', 'change'] }));
    const res = await holder.client.patch(`${RULES}${ruleId}/`, { min_reviews: 3 });
    expectStatus(res, 200);
    assert.equal(res.body.min_reviews, 3);
  });

  it('matrix rule delete: without delete_policyrule 403; under a constraint that excludes it 404; with it 204', async () => {
    const { rules } = await policy(svc, { name: `rule-del-${++n}`, rules: [{ name: 'r' }] });
    await expectDeleteMatrix(RULE_TYPE, `${RULES}${rules[0]!.id}/`, { name: 'another rule' });
  });

  it('matrix: a policy write by a permitted user re-matches open requests (the request picks the new policy up)', async () => {
    const author: Actor = await actor(svc, `pm-author-${++n}`, AUTHOR);
    const { cr } = await draftRequest(author, `pm-branch-${n}`);
    const holder = await actor(svc, `pm-holder-${n}`, viewPlus(POLICY_TYPE, { actions: ['view', 'add', 'change'] }));
    const made = await holder.client.post(POLICIES, { name: `pm-policy-${n}`, object_types: ['dcim.device'] });
    expectStatus(made, 201);
    assert.ok((await detail(author.client, cr.id)).policies.some((p: any) => p.id === made.body.id));
    expectStatus(await holder.client.patch(`${POLICIES}${made.body.id}/`, { object_types: ['ipam.prefix'] }), 200);
    assert.ok(!(await detail(author.client, cr.id)).policies.some((p: any) => p.id === made.body.id));
    assert.ok(!(await evaluation(author.client, cr.id)).policies.some((p: any) => p.id === made.body.id));
  });
});
