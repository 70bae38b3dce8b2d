import type { ConditionSet } from '../../../../../contract/api/change-control';
import type { MatchableChange, MatchablePolicy } from '../../../../../server/plugins/change-control/policies/matching';
import type { Rng } from '../../../../support/openapi-fuzz';

/** Seeded random policies and changes for the tests comparing kept matching with a full match. */
export const GEN_TYPES = ['dcim.device', 'dcim.site', 'ipam.prefix'] as const;

const STATUSES = ['active', 'planned', 'staged'];
const NAMES = ['core-1', 'edge-2', 'r1'];
const ATTRS = ['status', 'name', 'u_height', 'snapshots.prechange.status', 'snapshots.postchange.name', 'config.vrf'];

/** Attributes as a device, site or prefix might have them (some left out). */
export function randomAttrs(rng: Rng): Record<string, unknown> {
  const attrs: Record<string, unknown> = {};
  if (rng.chance(0.9)) attrs.status = rng.pick(STATUSES);
  if (rng.chance(0.9)) attrs.name = rng.pick(NAMES);
  if (rng.chance(0.7)) attrs.u_height = 1 + rng.int(3);
  if (rng.chance(0.3)) attrs.config = { vrf: rng.pick(['mgmt', 'prod']) };
  return attrs;
}

function randomLeaf(rng: Rng): ConditionSet {
  const attr = rng.pick(ATTRS);
  const negate = rng.chance(0.2) ? { negate: true } : {};
  switch (rng.int(6)) {
    case 0:
      return { attr, op: rng.pick(['changed', 'unchanged']), ...negate } as ConditionSet;
    case 1:
      return { attr, op: 'regex', value: rng.pick(['^core-', '-\\d$', 'a']), ...negate } as ConditionSet;
    case 2:
      return { attr, op: rng.pick(['gt', 'lte']), value: 1 + rng.int(3), ...negate } as ConditionSet;
    case 3:
      return { attr, op: 'in', value: [rng.pick(STATUSES), rng.pick(NAMES)], ...negate } as ConditionSet;
    default:
      return { attr, value: rng.chance(0.5) ? rng.pick(STATUSES) : rng.pick(NAMES), ...negate } as ConditionSet;
  }
}

export function randomConditions(rng: Rng, depth = 0): ConditionSet | null {
  if (depth === 0 && rng.chance(0.25)) return null;
  if (depth < 2 && rng.chance(0.3)) {
    const parts = Array.from({ length: 1 + rng.int(3) }, () => randomConditions(rng, depth + 1)!);
    return rng.chance(0.5) ? { and: parts } : { or: parts };
  }
  return randomLeaf(rng);
}

export function randomObjectTypes(rng: Rng): string[] {
  return GEN_TYPES.filter(() => rng.chance(0.4));
}

export function randomPolicy(rng: Rng, id: number): MatchablePolicy {
  return {
    id,
    objectTypes: randomObjectTypes(rng),
    conditions: randomConditions(rng),
    conditionState: rng.pick(['either', 'before', 'after'] as const),
  };
}

export function randomChange(rng: Rng): MatchableChange {
  const objectType = rng.pick(GEN_TYPES);
  switch (rng.int(3)) {
    case 0:
      return { objectType, action: 'create', original: null, modified: randomAttrs(rng) };
    case 1:
      return { objectType, action: 'delete', original: randomAttrs(rng), modified: null };
    default:
      return { objectType, action: 'update', original: randomAttrs(rng), modified: randomAttrs(rng) };
  }
}
