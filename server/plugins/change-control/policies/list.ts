import { sql } from 'kysely';
import { type Ctx, defineList, createdRange, grantAllows } from '../../../host';
import { CONDITION_STATES } from '../../../../contract/api/change-control';
import { ccDb, jsonArrayHasAny } from '../db/database';
import { presentPolicy, presentRule, withPolicyTags, withRuleTags } from './repository';
import { taggedWith } from '../db/tags';
import { POLICY_RULE_TYPE, POLICY_TYPE } from '../names';

/** `policies/`: filters, `q` over name, description and comments, ordering (by weight first). */
export const policyList = defineList({
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_policies').selectAll(),
  columnFilters: {
    name: 'string',
    enabled: 'bool',
    weight: { type: 'int', description: 'Weight (with __gte, __lte, __gt, __lt: a range).', range: true },
    condition_state: { type: 'choice', choices: CONDITION_STATES },
    created: createdRange,
  },
  filters: {
    object_type: {
      type: 'string',
      description: 'Policies whose object types include this "app_label.model".',
      where: (types, ctx) => () => jsonArrayHasAny(ctx.db, 'cc_policies.object_types', types as string[]),
    },
    object_type_id: {
      type: 'int',
      description: 'Policies whose object types include the object type with this id (/api/core/object-types/).',
      where: (ids, ctx) => {
        const names = ctx.host.objectTypes
          .all()
          .filter((t) => ids.includes(t.id))
          .map((t) => t.name);
        return () =>
          names.length === 0 ? sql<boolean>`1 = 0` : jsonArrayHasAny(ctx.db, 'cc_policies.object_types', names);
      },
    },
    tag: {
      type: 'string',
      description: 'Policies carrying this tag (its slug; several values: any of them).',
      where: (slugs) => taggedWith(POLICY_TYPE, slugs as string[]),
    },
    has_conditions: {
      type: 'bool',
      description: 'Policies with (true) or without (false) conditions.',
      isNotNull: 'conditions',
    },
    has_checks: {
      type: 'bool',
      description: 'Policies naming (true) or not naming (false) any check.',
      where: (v) => (eb) => eb.or(v.map((has) => eb('checks', has ? '!=' : '=', '[]'))),
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
  present: async (ctx, rows) =>
    withPolicyTags(
      ctx,
      rows.map((r) => presentPolicy(ctx, r)),
    ),
});

/**
 * The groups of these users, for those the caller may view (their own, or by `users.view_user`):
 * a filter never tells the caller the groups of a user they may not see.
 */
async function groupsOfViewable(ctx: Ctx, userIds: number[]): Promise<number[]> {
  const caller = ctx.user;
  if (!caller) return [];
  const grant = (await ctx.host.permissions.forUser(caller, ctx.db)).grant('users.user', 'view');
  const rows = await ccDb(ctx).selectFrom('users').selectAll().where('id', 'in', userIds).execute();
  const viewable = rows
    .filter(
      (u) =>
        u.id === caller.id ||
        grantAllows(grant, { ...u, is_superuser: u.is_superuser === 1, is_active: u.is_active === 1 }, caller),
    )
    .map((u) => u.id);
  if (viewable.length === 0) return [];
  const memberships = await ccDb(ctx)
    .selectFrom('user_groups')
    .select('group_id')
    .where('user_id', 'in', viewable)
    .execute();
  return [...new Set(memberships.map((m) => m.group_id))];
}

/** `policy-rules/`: filters, `q` over the name, ordering. */
export const ruleList = defineList({
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_policy_rules').selectAll(),
  columnFilters: {
    policy_id: 'int',
    name: 'string',
    min_reviews: {
      type: 'int',
      description: 'Approvals the rule needs (with __gte, __lte, __gt, __lt: a range).',
      range: true,
    },
  },
  filters: {
    user_id: {
      type: 'int',
      allowMe: true,
      description: 'Rules naming this user, or "me".',
      where: (ids, ctx) => () => jsonArrayHasAny(ctx.db, 'cc_policy_rules.users', ids as number[]),
    },
    group_id: {
      type: 'int',
      where: (ids, ctx) => () => jsonArrayHasAny(ctx.db, 'cc_policy_rules.groups', ids as number[]),
    },
    tag: {
      type: 'string',
      description: 'Rules carrying this tag (its slug; several values: any of them).',
      where: (slugs) => taggedWith(POLICY_RULE_TYPE, slugs as string[]),
    },
    eligible_for: {
      type: 'int',
      allowMe: true,
      description:
        'Rules this user (or "me") may approve for: the rule names them or one of their groups. Group membership counts only for users the caller may view.',
      where: async (ids, ctx) => {
        const users = ids as number[];
        const groups = await groupsOfViewable(ctx, users);
        return (eb) =>
          eb.or([
            jsonArrayHasAny(ctx.db, 'cc_policy_rules.users', users),
            ...(groups.length > 0 ? [jsonArrayHasAny(ctx.db, 'cc_policy_rules.groups', groups)] : []),
          ]);
      },
    },
  },
  ordering: { id: 'id', name: 'name', policy: 'policy_id', min_reviews: 'min_reviews', created: 'created' },
  search: ['name'],
  present: async (ctx, rows) =>
    withRuleTags(
      ctx,
      rows.map((r) => presentRule(ctx, r)),
    ),
});
