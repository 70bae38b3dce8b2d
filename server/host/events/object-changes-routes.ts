import { z } from 'zod';
import { ChangeVisibility } from '../objects/change-visibility';
import type { Selectable } from 'kysely';
import type { Ctx } from '../core/context';
import type { Host } from '../host';
import { valuesTable } from '../db/portable';
import type { ObjectChangesTable } from '../db/tables';
import { registerResource, type ApiObject, type ListOptions } from '../http/resource';

const OBJECT_TYPE = 'core.objectchange';
const PATH = '/api/core/object-changes/';
const ACTIONS = ['create', 'update', 'delete'] as const;

export const objectChangeOutput = z.object({
  id: z.number().int(),
  url: z.string(),
  display: z.string(),
  time: z.string(),
  user: z.number().int().nullable().describe('Id of the user who made the change (null for the system).'),
  user_name: z.string(),
  request_id: z.string().describe('Shared by every change one request made; equals request.id of the webhook payloads it caused.'),
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

function present(ctx: Ctx, row: Selectable<ObjectChangesTable>): ObjectChangeOut {
  return {
    id: row.id,
    url: `${ctx.baseUrl}${PATH}${row.id}/`,
    display: `${VERB[row.action]} ${row.changed_object_type} "${row.object_repr}"`,
    time: row.time,
    user: row.user_id,
    user_name: row.user_name,
    request_id: row.request_id,
    action: row.action,
    changed_object_type: row.changed_object_type,
    changed_object_id: row.changed_object_id,
    object_repr: row.object_repr,
    prechange_data: parseJson(row.prechange_data),
    postchange_data: parseJson(row.postchange_data),
  };
}

const ORDER_COLUMNS = { id: 'id', time: 'time' } as const;

async function listObjectChanges(ctx: Ctx, { filters, ordering, page }: ListOptions): Promise<{ count: number; items: ObjectChangeOut[] }> {
  let q = ctx.db.selectFrom('object_changes');
  if (filters.id) q = q.where('id', 'in', filters.id as number[]);
  if (filters.changed_object_type) q = q.where('changed_object_type', 'in', filters.changed_object_type as string[]);
  if (filters.changed_object_id) q = q.where('changed_object_id', 'in', filters.changed_object_id as number[]);
  if (filters.request_id) q = q.where('request_id', 'in', filters.request_id as string[]);
  if (filters.user_id) q = q.where('user_id', 'in', filters.user_id as number[]);
  if (filters.user_name) q = q.where('user_name', 'in', filters.user_name as string[]);
  if (filters.action) q = q.where('action', 'in', filters.action as Array<(typeof ACTIONS)[number]>);
  if (filters.branch_id) q = q.where('branch_id', 'in', filters.branch_id as number[]);
  if (filters.time_after) q = q.where('time', '>=', filters.time_after[0] as string);
  if (filters.time_before) q = q.where('time', '<=', filters.time_before[0] as string);
  // A source-of-truth object's recorded state shows only to callers who may see it (its branch
  // and its object, ChangeVisibility); the constraints are judged on the state recorded.
  const visibility = await ChangeVisibility.load(ctx);
  const catalogue = new Set(ctx.host.objectTypes.sourceOfTruth().map((t) => t.name));
  if (!visibility.unrestricted) {
    const branchIds = visibility.branchIds;
    if (branchIds !== 'all') {
      q = q.where((eb) => eb.or([eb('branch_id', 'is', null), eb('branch_id', 'in', eb.selectFrom(valuesTable(ctx.db, [...branchIds]).as('j')).select('j.value'))]));
    }
    const hidden = [...catalogue].filter((t) => visibility.grant(t) === false);
    if (hidden.length > 0) q = q.where('changed_object_type', 'not in', hidden);
  }
  let rows = q.selectAll();
  for (const o of ordering) rows = rows.orderBy(ORDER_COLUMNS[o.field as keyof typeof ORDER_COLUMNS], o.desc ? 'desc' : 'asc');
  // Changes made in the same instant keep the order they were made in.
  if (!ordering.some((o) => o.field === 'id')) rows = rows.orderBy('id', ordering[0]?.desc ? 'desc' : 'asc');
  const constrained = visibility.constrainedTypes();
  if (constrained.length > 0) {
    const visible = (await rows.execute()).filter((r) => {
      if (!constrained.includes(r.changed_object_type)) return true;
      const state = parseJson(r.postchange_data) ?? parseJson(r.prechange_data);
      return state !== null && visibility.admitsObject(r.changed_object_type, state);
    });
    return { count: visible.length, items: (page ? visible.slice(page.offset, page.offset + page.limit) : visible).map((r) => present(ctx, r)) };
  }
  const { count } = await q.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  if (page) rows = rows.limit(page.limit).offset(page.offset);
  return { count: Number(count), items: (await rows.execute()).map((r) => present(ctx, r)) };
}

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
    filters: {
      id: { type: 'int' },
      changed_object_type: { type: 'string', description: 'The changed object\'s type, "app_label.model".' },
      changed_object_id: { type: 'int' },
      request_id: { type: 'string', description: 'Every change made by one request.' },
      user_id: { type: 'int', allowMe: true },
      user_name: { type: 'string' },
      action: { type: 'choice', choices: ACTIONS },
      branch_id: { type: 'int', description: 'Changes made in this branch (X-NetBox-Branch).' },
      time_after: { type: 'datetime', description: 'Changes at or after this time.' },
      time_before: { type: 'datetime', description: 'Changes at or before this time.' },
    },
    ordering: Object.keys(ORDER_COLUMNS),
    defaultOrdering: [{ field: 'time', desc: true }],
    list: listObjectChanges,
    get: async (ctx, id) => {
      const row = await ctx.db.selectFrom('object_changes').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      const visibility = await ChangeVisibility.load(ctx);
      if (!visibility.branchVisible(row.branch_id)) return undefined;
      const state = parseJson(row.postchange_data) ?? parseJson(row.prechange_data);
      if (ctx.host.objectTypes.get(row.changed_object_type)?.sourceOfTruth && (state === null || !visibility.admitsObject(row.changed_object_type, state))) return undefined;
      return present(ctx, row);
    },
  });
}
