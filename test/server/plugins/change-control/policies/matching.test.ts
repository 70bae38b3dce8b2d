import assert from 'node:assert/strict';
import {
  changeMatcher,
  countMatches,
  countsFor,
  matchesFromCounts,
  matchPolicies,
  matchPolicy,
  type MatchableChange,
  type MatchablePolicy,
  type MatchCounts,
} from '../../../../../server/plugins/change-control/policies/matching';
import { Rng } from '../../../../support/openapi-fuzz';
import { randomChange, randomPolicy } from './matching-gen';

/** Which policies govern a branch, from its changes, as a plain function. */
describe('unit: policy matching (matching.ts)', () => {
  const update = (
    objectType: string,
    original: Record<string, unknown>,
    modified: Record<string, unknown>,
  ): MatchableChange => ({ objectType, action: 'update', original, modified });
  const create = (objectType: string, modified: Record<string, unknown>): MatchableChange => ({
    objectType,
    action: 'create',
    original: null,
    modified,
  });
  const del = (objectType: string, original: Record<string, unknown>): MatchableChange => ({
    objectType,
    action: 'delete',
    original,
    modified: null,
  });
  const policy = (p: Partial<MatchablePolicy>): MatchablePolicy => ({
    id: 1,
    objectTypes: [],
    conditions: null,
    conditionState: 'either',
    ...p,
  });

  it('a policy without types or conditions matches every branch, even one without changes', () => {
    assert.deepEqual(matchPolicy(policy({}), []), []);
    assert.deepEqual(matchPolicy(policy({}), [create('dcim.site', { name: 'a' })]), ['dcim.site']);
  });

  it('object types limit what can match; the matched types are listed once, sorted', () => {
    const p = policy({ objectTypes: ['dcim.device', 'dcim.site'] });
    assert.equal(matchPolicy(p, []), null);
    assert.equal(matchPolicy(p, [create('ipam.prefix', {})]), null);
    assert.deepEqual(matchPolicy(p, [create('dcim.site', {}), create('dcim.device', {}), create('dcim.device', {})]), [
      'dcim.device',
      'dcim.site',
    ]);
  });

  it('condition_state picks the sides a plain attribute reads', () => {
    const change = update('dcim.device', { status: 'active' }, { status: 'planned' });
    const on = (conditionState: MatchablePolicy['conditionState']) =>
      matchPolicy(policy({ conditions: { attr: 'status', value: 'active' }, conditionState }), [change]);
    assert.deepEqual(on('either'), ['dcim.device']);
    assert.deepEqual(on('before'), ['dcim.device']);
    assert.equal(on('after'), null);
    // A create has only its modified side, a delete only its original.
    assert.equal(
      matchPolicy(policy({ conditions: { attr: 'status', value: 'active' }, conditionState: 'before' }), [
        create('dcim.device', { status: 'active' }),
      ]),
      null,
    );
    assert.deepEqual(
      matchPolicy(policy({ conditions: { attr: 'status', value: 'active' }, conditionState: 'before' }), [
        del('dcim.device', { status: 'active' }),
      ]),
      ['dcim.device'],
    );
  });

  it('snapshots.prechange/postchange read one side; changed/unchanged compare the two', () => {
    const change = update('dcim.device', { name: 'r1', status: 'active' }, { name: 'r1', status: 'planned' });
    assert.deepEqual(
      matchPolicy(
        policy({ conditions: { attr: 'snapshots.postchange.status', value: 'planned' }, conditionState: 'before' }),
        [change],
      ),
      ['dcim.device'],
    );
    assert.equal(
      matchPolicy(policy({ conditions: { attr: 'snapshots.prechange.status', value: 'planned' } }), [change]),
      null,
    );
    assert.deepEqual(matchPolicy(policy({ conditions: { attr: 'status', op: 'changed' } }), [change]), ['dcim.device']);
    assert.equal(matchPolicy(policy({ conditions: { attr: 'name', op: 'changed' } }), [change]), null);
    assert.deepEqual(matchPolicy(policy({ conditions: { attr: 'name', op: 'unchanged' } }), [change]), ['dcim.device']);
  });

  it('and / or / negate compose on one change; own keys only', () => {
    const change = create('dcim.device', { name: 'core-1', site: 'ams' });
    const and = {
      and: [
        { attr: 'name', op: 'regex', value: '^core-' },
        { attr: 'site', value: 'ams' },
      ],
    };
    assert.deepEqual(matchPolicy(policy({ conditions: and }), [change]), ['dcim.device']);
    assert.equal(
      matchPolicy(policy({ conditions: { and: [...and.and, { attr: 'site', value: 'fra' }] } }), [change]),
      null,
    );
    assert.deepEqual(
      matchPolicy(
        policy({
          conditions: {
            or: [
              { attr: 'site', value: 'fra' },
              { attr: 'site', value: 'ams' },
            ],
          },
        }),
        [change],
      ),
      ['dcim.device'],
    );
    assert.equal(matchPolicy(policy({ conditions: { attr: 'site', value: 'ams', negate: true } }), [change]), null);
    // `constructor` is not an attribute of the object: nothing reads Object's.
    assert.equal(
      matchPolicy(policy({ conditions: { attr: 'constructor', op: 'changed' } }), [
        update('dcim.device', {}, { name: 'x' }),
      ]),
      null,
    );
  });

  it('matchPolicies keeps the order given and leaves out the ones that do not match', () => {
    const policies = [
      policy({ id: 3, objectTypes: ['dcim.site'] }),
      policy({ id: 1 }),
      policy({ id: 2, objectTypes: ['dcim.device'] }),
    ];
    assert.deepEqual(matchPolicies(policies, [create('dcim.device', {})]), [
      { policyId: 1, matchedObjectTypes: ['dcim.device'] },
      { policyId: 2, matchedObjectTypes: ['dcim.device'] },
    ]);
  });

  it('counts read as matches: a policy without types or conditions matches with no count, the others through their counted types', () => {
    const policies = [
      policy({ id: 1 }),
      policy({ id: 2, objectTypes: ['dcim.site'] }),
      policy({ id: 3, conditions: { attr: 'status', value: 'x' } }),
    ];
    assert.deepEqual(matchesFromCounts(policies, new Map()), [{ policyId: 1, matchedObjectTypes: [] }]);
    assert.deepEqual(
      matchesFromCounts(
        policies,
        new Map([
          [2, ['dcim.site']],
          [3, ['ipam.prefix', 'dcim.device']],
        ]),
      ),
      [
        { policyId: 1, matchedObjectTypes: [] },
        { policyId: 2, matchedObjectTypes: ['dcim.site'] },
        { policyId: 3, matchedObjectTypes: ['dcim.device', 'ipam.prefix'] },
      ],
    );
  });

  it('counts moved change by change (seeded writes and removals) always equal a full count, and read as matchPolicies does', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rng = new Rng(seed);
      const policies = Array.from({ length: 12 }, (_, i) => randomPolicy(rng, i + 1));
      const matchers = policies.map(changeMatcher);
      const changes: Array<MatchableChange | null> = [];
      const kept: MatchCounts = new Map();
      const move = (change: MatchableChange, by: number) => {
        for (const m of matchers) {
          if (!countsFor(m, change)) continue;
          const byType = kept.get(m.policyId) ?? new Map<string, number>();
          const n = (byType.get(change.objectType) ?? 0) + by;
          if (n === 0) byType.delete(change.objectType);
          else byType.set(change.objectType, n);
          if (byType.size === 0) kept.delete(m.policyId);
          else kept.set(m.policyId, byType);
        }
      };
      for (let step = 0; step < 60; step++) {
        const at = rng.int(changes.length + 1);
        const before = changes[at] ?? null;
        const after = rng.chance(0.25)
          ? null
          : before && rng.chance(0.5)
            ? { ...randomChange(rng), objectType: before.objectType }
            : randomChange(rng);
        if (before) move(before, -1);
        if (after) move(after, +1);
        changes[at] = after;
        const live = changes.filter((c): c is MatchableChange => c !== null);
        assert.deepEqual(kept, countMatches(policies, live), `seed ${seed}, step ${step}: counts`);
        const types = new Map([...kept].map(([id, byType]) => [id, [...byType.keys()]]));
        assert.deepEqual(
          matchesFromCounts(policies, types),
          matchPolicies(policies, live),
          `seed ${seed}, step ${step}: matches`,
        );
      }
    }
  });
});
