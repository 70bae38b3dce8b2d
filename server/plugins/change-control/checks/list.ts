import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { type Ctx, defineList, createdRange, type HostTables, textContains } from '../../../host';
import { CHECK_STATUSES } from '../../../../contract/api/change-control';
import { ccDb, jsonArrayHasColumn } from '../db/database';
import type { ChangeControlTables } from '../db/tables';
import { runtime } from '../runtime';
import { configuredExternalChecks } from './declared';
import { CheckScope } from './registry';
import { presentCheckRows } from './present';
import { rowsOfVisibleRequests } from '../change-requests/visibility-repository';

type CheckEb = ExpressionBuilder<HostTables & ChangeControlTables, 'cc_merge_checks'>;

const never = sql<SqlBool>`1 = 0`;

/**
 * SQL: a check row is required, by the same rules the API presents it with (`declaredChecks`):
 * a registered check of scope ALWAYS by its registration; one of scope POLICY when a policy
 * attached to its request names it; a name nothing registers when an attached policy names it or
 * the configuration requires it (`required_external_checks`).
 */
function isRequired(ctx: Ctx, eb: CheckEb): Expression<SqlBool> {
  const registry = runtime(ctx.host).registry;
  const configured = new Set(configuredExternalChecks(ctx.host.config).map((c) => c.name));
  const registered = registry.all().map((c) => c.name);
  const always = registry
    .all()
    .filter((c) => c.scope === CheckScope.ALWAYS && c.required)
    .map((c) => c.name);
  const policyRequired = registry
    .all()
    .filter((c) => c.scope === CheckScope.POLICY && c.required)
    .map((c) => c.name);
  const policyAdvisoryConfigured = registry
    .all()
    .filter((c) => c.scope === CheckScope.POLICY && !c.required && configured.has(c.name))
    .map((c) => c.name);
  const unregisteredConfigured = [...configured].filter((n) => !registry.get(n));
  const named = eb.exists(
    eb
      .selectFrom('cc_change_request_policies as crp')
      .innerJoin('cc_policies as p', 'p.id', 'crp.policy_id')
      .select('crp.policy_id')
      .whereRef('crp.change_request_id', '=', 'cc_merge_checks.change_request_id')
      .where(jsonArrayHasColumn(ctx.db, 'p.checks', 'cc_merge_checks.name')),
  );
  const inList = (names: string[]): Expression<SqlBool> =>
    names.length === 0 ? never : eb('cc_merge_checks.name', 'in', names);
  return eb.or([
    inList(always),
    eb.and([inList(policyRequired), named]),
    eb.and([
      registered.length === 0 ? sql<SqlBool>`1 = 1` : eb('cc_merge_checks.name', 'not in', registered),
      eb.or([named, inList(unregisteredConfigured)]),
    ]),
    eb.and([inList(policyAdvisoryConfigured), eb.not(named)]),
  ]);
}

/** `checks/`: filters, `q` over name, label and summary, ordering; only checks of requests the caller may view. */
export const checkList = defineList({
  from: (ctx: Ctx) => ccDb(ctx).selectFrom('cc_merge_checks').selectAll(),
  columnFilters: {
    change_request_id: 'int',
    name: 'string',
    status: { type: 'choice', choices: CHECK_STATUSES },
    created: createdRange,
    completed: {
      type: 'datetime',
      description: 'When the result last changed (with __gte, __lte, __gt, __lt: a range).',
      range: true,
    },
  },
  filters: {
    label: {
      type: 'string',
      description: 'Case-insensitive substring of the label (several values: any of them).',
      where: (v) => (eb) => eb.or(v.map((t) => textContains('label', t as string))),
    },
    summary: {
      type: 'string',
      description: 'Case-insensitive substring of the summary (several values: any of them).',
      where: (v) => (eb) => eb.or(v.map((t) => textContains('summary', t as string))),
    },
    required: {
      type: 'bool',
      description: 'Checks the request is declared to need (true) or advisory ones (false), as `required` shows.',
      where: (v, ctx) => (eb) => eb.or(v.map((want) => (want ? isRequired(ctx, eb) : eb.not(isRequired(ctx, eb))))),
    },
    blocks_merge: {
      type: 'bool',
      description:
        'Required checks whose status does not clear the gate (true), or the others (false), as `blocks_merge` shows.',
      where: (v, ctx) => (eb) => {
        const blocks = eb.and([isRequired(ctx, eb), eb('status', 'not in', ['success', 'skipped'])]);
        return eb.or(v.map((want) => (want ? blocks : eb.not(blocks))));
      },
    },
  },
  ordering: {
    id: 'id',
    name: 'name',
    status: 'status',
    completed: 'completed',
    created: 'created',
    last_updated: 'last_updated',
  },
  search: ['name', 'label', 'summary'],
  visible: rowsOfVisibleRequests('cc_merge_checks.change_request_id'),
  present: presentCheckRows,
});
