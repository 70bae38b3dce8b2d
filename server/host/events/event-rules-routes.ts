import { z } from 'zod';
import { objectBase, objectTypeName } from '../../../contract/api/common';
import { CONDITION_OPS } from '../../../contract/api/vocabulary';
import { conditionSetProblem } from '../core/conditions';
import type { Ctx } from '../core/context';
import { PermissionDenied, ValidationError } from '../core/errors';
import { WEBHOOK_ACTION } from './bus';
import type { Host } from '../host';
import type { EventRulesTable, Row } from '../db/tables';
import { registerResource, type ApiObject } from '../http/resource';
import { rowReads } from '../http/row-reads';
import { rowWrites } from '../http/row-writes';
import type { NewRow } from '../db/table-rows';
import { jsonListHasAny } from '../db/list';
import { eventRuleRows, eventRuleTable } from './event-rules-repository';
import { webhookTable } from './webhooks-repository';
import { briefObject, givenFields } from '../core/api-object';

const OBJECT_TYPE = 'extras.eventrule';
const PATH = '/api/extras/event-rules/';

/** Deeper condition sets are refused (they would only ever be a mistake). */
const MAX_CONDITION_DEPTH = 32;

export const eventRuleOutput = z.object({
  ...objectBase,
  name: z.string(),
  enabled: z.boolean(),
  object_types: z.array(z.string()).describe('"app_label.model" names; an empty list matches every object type.'),
  event_types: z.array(z.string()),
  conditions: z.unknown().describe('Null, or a condition set evaluated against the event (contract 4.2).'),
  action_type: z.string().describe('"webhook" or a registered action type, e.g. change_control.report_check.'),
  action_object_id: z.number().int().nullable().describe('The webhook id when action_type is "webhook".'),
  action_data: z.record(z.string(), z.unknown()).nullable(),
  created_by: z
    .number()
    .int()
    .nullable()
    .describe(
      'Read-only: who wrote the rule last (created it, or changed it since). An action that writes acts with their authority, while they hold the permissions it needs.',
    ),
});
export type EventRuleOut = z.infer<typeof eventRuleOutput> & ApiObject;

const eventRuleWrite = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, { error: 'This field may not be blank.' })
    .max(150, { error: 'at most 150 characters' }),
  enabled: z.boolean().optional(),
  object_types: z.array(objectTypeName).max(1000).optional(),
  event_types: z.array(z.string().max(100)).min(1, { error: 'Give at least one event type.' }).max(100),
  conditions: z.unknown().optional(),
  action_type: z.string().min(1).max(100),
  action_object_id: z.number().int().nullable().optional(),
  action_data: z.record(z.string(), z.unknown()).nullable().optional(),
});
type EventRuleWrite = z.infer<typeof eventRuleWrite>;

function parseJson<T>(raw: string | null, fallback: T): T {
  return raw === null ? fallback : (JSON.parse(raw) as T);
}

function present(ctx: Ctx, row: Row<EventRulesTable>): EventRuleOut {
  return {
    ...briefObject(ctx, PATH, row.id, row.name),
    name: row.name,
    enabled: row.enabled === 1,
    object_types: parseJson<string[]>(row.object_types, []),
    event_types: parseJson<string[]>(row.event_types, []),
    conditions: parseJson<unknown>(row.conditions, null),
    action_type: row.action_type,
    action_object_id: row.action_object_id,
    action_data: parseJson<Record<string, unknown> | null>(row.action_data, null),
    created_by: row.created_by,
    created: row.created,
    last_updated: row.last_updated,
  };
}

/** One event rule and the event rules list; the JSON lists inside a row are tested in code (event rules are few). */
const eventRules = rowReads({
  from: eventRuleRows,
  byId: eventRuleTable.byId,
  present,
  columnFilters: { name: 'string', enabled: 'bool', action_type: 'string', action_object_id: 'int' },
  filters: {
    object_type: {
      type: 'string',
      description: 'Rules on this object type ("app_label.model").',
      test: (r, v) => jsonListHasAny(r.object_types, v),
    },
    event_type: {
      type: 'string',
      description: 'Rules triggered by this event type.',
      test: (r, v) => jsonListHasAny(r.event_types, v),
    },
  },
  ordering: { id: 'id', name: 'name', enabled: 'enabled', created: 'created', last_updated: 'last_updated' },
  search: ['name'],
});

/** Nesting depth of a JSON value, without recursion (a hostile body cannot exhaust the stack). */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    max = Math.max(max, d);
    if (max > MAX_CONDITION_DEPTH * 2) return max;
    for (const child of Object.values(v as Record<string, unknown>)) stack.push([child, d + 1]);
  }
  return max;
}

function fieldError(field: string, message: string): ValidationError {
  return ValidationError.field(field, message);
}

/** What a rule does, as it will be stored. */
interface RuleAction {
  object_types: string[];
  event_types: string[];
  conditions: unknown;
  action_type: string;
  action_object_id: number | null;
  action_data: Record<string, unknown> | null;
}

/** Validates a rule as it will be stored (after a partial update is merged onto the existing rule). */
async function validateRule(ctx: Ctx, rule: RuleAction): Promise<void> {
  const unknownTypes = rule.object_types.filter((t) => !ctx.host.objectTypes.has(t));
  if (unknownTypes.length > 0) {
    const messages = unknownTypes.map((t) => `Unknown object type "${t}".`);
    throw new ValidationError(`object_types: ${messages.join(' ')}`, { object_types: messages });
  }
  const known = ctx.host.events.eventTypes();
  if (rule.event_types.length === 0) throw fieldError('event_types', 'Give at least one event type.');
  const unknownEvents = rule.event_types.filter((e) => !known.includes(e));
  if (unknownEvents.length > 0) {
    const messages = unknownEvents.map((e) => `Unknown event type "${e}" (known: ${known.join(', ')}).`);
    throw new ValidationError(`event_types: ${messages.join(' ')}`, { event_types: messages });
  }
  if (rule.conditions !== null && rule.conditions !== undefined) {
    if (depthOf(rule.conditions) > MAX_CONDITION_DEPTH * 2)
      throw fieldError('conditions', `Condition sets may nest at most ${MAX_CONDITION_DEPTH} levels.`);
    const problem = conditionSetProblem(rule.conditions, CONDITION_OPS);
    if (problem) throw fieldError('conditions', problem);
  }
  const actionTypes = ctx.host.events.actionTypes();
  if (!actionTypes.includes(rule.action_type)) {
    throw fieldError(
      'action_type',
      `"${rule.action_type}" is not a valid choice (expected one of: ${actionTypes.join(', ')}).`,
    );
  }
  if (rule.action_type === WEBHOOK_ACTION) {
    if (rule.action_object_id === null)
      throw fieldError('action_object_id', 'A webhook action needs the id of a webhook.');
    if (!(await webhookTable.exists(ctx, rule.action_object_id)))
      throw fieldError('action_object_id', `Webhook ${rule.action_object_id} does not exist.`);
  }
  const dataProblem = ctx.host.events.actionDataProblem(rule.action_type, rule.action_data);
  if (dataProblem) throw fieldError('action_data', dataProblem);
  // A rule whose action writes acts with the authority of whoever writes the rule: they must hold
  // what the write needs (the rule runs only while they still do).
  const needed = ctx.host.events.actionPermissions(rule.action_type);
  if (needed.length > 0) {
    const perms = ctx.user ? await ctx.host.permissions.forUser(ctx.user, ctx.db) : null;
    const missing = needed.filter((p) => !perms?.has(p));
    if (missing.length > 0)
      throw new PermissionDenied(
        `A rule with the action "${rule.action_type}" writes with the authority of whoever writes the rule: that needs ${missing.join(', ')}.`,
      );
  }
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/** The columns a write sets: the input's, and who wrote the rule (whose authority its action then has). */
function columns(input: Partial<EventRuleWrite>, now: string, ctx: Ctx): Partial<Omit<Row<EventRulesTable>, 'id'>> {
  const out: Partial<Omit<Row<EventRulesTable>, 'id'>> = {
    ...givenFields(input, ['name', 'action_type', 'action_object_id']),
    created_by: ctx.user?.id ?? null,
    last_updated: now,
  };
  if (input.enabled !== undefined) out.enabled = input.enabled ? 1 : 0;
  if (input.object_types !== undefined) out.object_types = JSON.stringify(unique(input.object_types));
  if (input.event_types !== undefined) out.event_types = JSON.stringify(unique(input.event_types));
  if (input.conditions !== undefined)
    out.conditions = input.conditions === null ? null : JSON.stringify(input.conditions);
  if (input.action_data !== undefined)
    out.action_data = input.action_data === null ? null : JSON.stringify(input.action_data);
  return out;
}

/** A new event rule row: defaults for what the input leaves out, then the input's columns; `now` stamps it. */
function newRow(input: EventRuleWrite, now: string, ctx: Ctx): NewRow<EventRulesTable> {
  return {
    name: input.name,
    enabled: 1,
    object_types: '[]',
    event_types: '[]',
    conditions: null,
    action_type: input.action_type,
    action_object_id: null,
    action_data: null,
    created_by: null,
    ...columns(input, now, ctx),
    created: now,
    last_updated: now,
  };
}

/** The rule as it will be stored: the existing rule (if any) with the input laid over it. */
function merged(existing: EventRuleOut | null, input: Partial<EventRuleWrite>): RuleAction {
  return {
    object_types: input.object_types ?? existing?.object_types ?? [],
    event_types: input.event_types ?? existing?.event_types ?? [],
    conditions: input.conditions !== undefined ? input.conditions : (existing?.conditions ?? null),
    action_type: input.action_type ?? existing?.action_type ?? '',
    action_object_id:
      input.action_object_id !== undefined ? input.action_object_id : (existing?.action_object_id ?? null),
    action_data: input.action_data !== undefined ? input.action_data : (existing?.action_data ?? null),
  };
}

/** `/api/extras/event-rules/`: which events of which object types trigger which action. */
export function registerEventRules(host: Host): void {
  registerResource(host.routes, {
    tag: 'extras',
    objectType: OBJECT_TYPE,
    path: PATH,
    output: eventRuleOutput,
    list: eventRules.list,
    get: eventRules.get,
    ...rowWrites({
      table: eventRuleTable,
      body: eventRuleWrite,
      partial: eventRuleWrite.partial(),
      uniqueName: { column: 'name', message: 'An event rule with this name already exists.' },
      check: (ctx, input, existing: EventRuleOut | null) => validateRule(ctx, merged(existing, input)),
      insert: newRow,
      columns,
    }),
  });
}
