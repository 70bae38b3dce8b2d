import { z } from 'zod';
import { briefFields } from '../../../contract/api/common';
import { ChangeVisibility } from '../objects/change-visibility';
import type { Ctx } from '../core/context';
import type { Host } from '../host';
import type { ObjectChangesTable, Row } from '../db/tables';
import { registerResource, type ApiObject } from '../http/resource';
import { defineList } from '../db/list';
import { changesIn, objectChangeById, objectChangeRows } from './object-changes-repository';
import { briefObject, fieldsOf } from '../core/api-object';

const OBJECT_TYPE = 'core.objectchange';
const PATH = '/api/core/object-changes/';
const ACTIONS = ['create', 'update', 'delete'] as const;

export const objectChangeOutput = z.object({
  ...briefFields,
  time: z.string(),
  user: z.number().int().nullable().describe('Id of the user who made the change (null for the system).'),
  user_name: z.string(),
  request_id: z
    .string()
    .describe('Shared by every change one request made; equals request.id of the webhook payloads it caused.'),
  action: z.enum(ACTIONS),
  changed_object_type: z.string(),
  changed_object_id: z.number().int(),
  object_repr: z.string(),
  prechange_data: z.record(z.string(), z.unknown()).nullable(),
  postchange_data: z.record(z.string(), z.unknown()).nullable(),
});
export type ObjectChangeOut = z.infer<typeof objectChangeOutput> & ApiObject;

const VERB: Record<(typeof ACTIONS)[number], string> = { create: 'Created', update: 'Updated', delete: 'Deleted' };

function parseJson(raw: string | null): Record<string, unknown> | null {
  return raw === null ? null : (JSON.parse(raw) as Record<string, unknown>);
}

function present(ctx: Ctx, row: Row<ObjectChangesTable>): ObjectChangeOut {
  return {
    ...briefObject(ctx, PATH, row.id, `${VERB[row.action]} ${row.changed_object_type} "${row.object_repr}"`),
    time: row.time,
    user: row.user_id,
    ...fieldsOf(row, ['user_name', 'request_id', 'action', 'changed_object_type', 'changed_object_id', 'object_repr']),
    prechange_data: parseJson(row.prechange_data),
    postchange_data: parseJson(row.postchange_data),
  };
}

/**
 * The changelog list. A source-of-truth object's recorded state shows only to callers who may
 * see it (its branch and its object, ChangeVisibility): branches and hidden types in SQL, the
 * constraints of constrained types judged in code on the state recorded.
 */
const objectChangeList = defineList({
  from: objectChangeRows,
  columnFilters: {
    changed_object_type: { type: 'string', description: 'The changed object\'s type, "app_label.model".' },
    changed_object_id: 'int',
    request_id: { type: 'string', description: 'Every change made by one request.' },
    user_id: { type: 'int', allowMe: true },
    user_name: 'string',
    action: { type: 'choice', choices: ACTIONS },
    branch_id: { type: 'int', description: 'Changes made in this branch (X-NetBox-Branch).' },
    time: { type: 'datetime', description: 'Changes at this time.', range: true },
  },
  filters: {
    time_after: {
      type: 'datetime',
      description: 'Changes at or after this time.',
      where: (v) => (eb) => eb.and(v.map((t) => eb('time', '>=', t as string))),
    },
    time_before: {
      type: 'datetime',
      description: 'Changes at or before this time.',
      where: (v) => (eb) => eb.and(v.map((t) => eb('time', '<=', t as string))),
    },
  },
  ordering: { id: 'id', time: 'time' },
  defaultOrdering: [{ field: 'time', desc: true }],
  search: ['object_repr', 'user_name'],
  visible: async (ctx) => {
    const visibility = await ChangeVisibility.load(ctx);
    if (visibility.unrestricted) return null;
    const catalogue = new Set(ctx.host.objectTypes.sourceOfTruth().map((t) => t.name));
    const hidden = [...catalogue].filter((t) => visibility.grant(t) === false);
    return changesIn(ctx, visibility.branchIds, hidden);
  },
  admit: async (ctx) => {
    const visibility = await ChangeVisibility.load(ctx);
    const constrained = visibility.unrestricted ? [] : visibility.constrainedTypes();
    if (constrained.length === 0) return null;
    return async (rows) =>
      rows.filter((r) => {
        if (!constrained.includes(r.changed_object_type)) return true;
        const state = parseJson(r.postchange_data) ?? parseJson(r.prechange_data);
        return state !== null && visibility.admitsObject(r.changed_object_type, state);
      });
  },
  present: async (ctx, rows) => rows.map((r) => present(ctx, r)),
});

/**
 * `/api/core/object-changes/` (read-only): the changelog every write records. Newest first
 * unless `ordering` says otherwise (`id`, `time`, or either with `-`).
 */
export function registerObjectChanges(host: Host): void {
  registerResource(host.routes, {
    tag: 'core',
    objectType: OBJECT_TYPE,
    path: PATH,
    output: objectChangeOutput,
    list: objectChangeList,
    get: async (ctx, id) => {
      const row = await objectChangeById(ctx, id);
      if (!row) return undefined;
      const visibility = await ChangeVisibility.load(ctx);
      if (!visibility.branchVisible(row.branch_id)) return undefined;
      const state = parseJson(row.postchange_data) ?? parseJson(row.prechange_data);
      if (
        ctx.host.objectTypes.get(row.changed_object_type)?.sourceOfTruth &&
        (state === null || !visibility.admitsObject(row.changed_object_type, state))
      )
        return undefined;
      return present(ctx, row);
    },
  });
}
