import { type Ctx, defineList } from '../../../host';
import { ccDb, jsonArrayHasAny } from '../db/database';
import { presentPolicy, presentRule } from './repository';

/** `policies/`: filters, `q` over name, description and comments, ordering (by weight first). */
export const policyList = defineList({
  name: 'policies',
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_policies').selectAll(),
  filters: {
    id: { type: 'int', column: 'id' },
    name: { type: 'string', column: 'name' },
    enabled: { type: 'bool', column: 'enabled' },
    object_type: {
      type: 'string',
      description: 'Policies whose object types include this "app_label.model".',
      where: (types, ctx) => () => jsonArrayHasAny(ctx.db, 'cc_policies.object_types', types as string[]),
    },
    required_checks: {
      type: 'string',
      description: 'Policies whose checks name this check (several values: any of them).',
      where: (names, ctx) => () => jsonArrayHasAny(ctx.db, 'cc_policies.checks', names as string[]),
    },
  },
  ordering: { id: 'id', name: 'name', weight: 'weight', created: 'created', last_updated: 'last_updated' },
  defaultOrdering: [
    { field: 'weight', desc: false },
    { field: 'id', desc: false },
  ],
  search: ['name', 'description', 'comments'],
  present: async (ctx, rows) => rows.map((r) => presentPolicy(ctx, r)),
});

/** `policy-rules/`: filters, `q` over the name, ordering. */
export const ruleList = defineList({
  name: 'policy-rules',
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_policy_rules').selectAll(),
  filters: {
    id: { type: 'int', column: 'id' },
    policy_id: { type: 'int', column: 'policy_id' },
    name: { type: 'string', column: 'name' },
    user_id: { type: 'int', allowMe: true, description: 'Rules naming this user, or "me".', where: (ids, ctx) => () => jsonArrayHasAny(ctx.db, 'cc_policy_rules.users', ids as number[]) },
    group_id: { type: 'int', where: (ids, ctx) => () => jsonArrayHasAny(ctx.db, 'cc_policy_rules.groups', ids as number[]) },
  },
  ordering: { id: 'id', name: 'name', policy: 'policy_id', min_reviews: 'min_reviews', created: 'created' },
  search: ['name'],
  present: async (ctx, rows) => rows.map((r) => presentRule(ctx, r)),
});
