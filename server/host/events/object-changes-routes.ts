import { z } from 'zod';
import { briefFields } from '../../../contract/api/common';
import { ChangeVisibility } from '../objects/change-visibility';
import { BRANCH_TYPE } from '../objects/branches';
import { grantAllows, type Grant } from '../users/object-permissions';
import type { Ctx } from '../core/context';
import type { Host } from '../host';
import type { HostTables, ObjectChangesTable, Row } from '../db/tables';
import { registerResource, type ApiObject } from '../http/resource';
import { defineList, type Condition } from '../db/list';
import { changesIn, objectChangeRows, onlyObjectsIn, onlyOfVisibleOwners } from './object-changes-repository';
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
 * What the changelog shows a caller, decided once for both the list and the detail:
 *
 * - a source-of-truth object's recorded state only to callers who may see it (its branch and its
 *   object, `ChangeVisibility`): branches and hidden types in SQL, the constraints of constrained
 *   types judged in code on the state recorded;
 * - a branch's own entries only to callers who may view that branch (SQL);
 * - entries of the object types plugins declare (`RelatedVisibility`: change requests and what
 *   belongs to them, policies, ...) only to holders of that type's view permission (constraints
 *   judged on the state recorded), and, for what belongs to an object (a review's change
 *   request), only to callers who may view that object: in SQL, so `q`, every filter and `count`
 *   only ever see what the caller may see.
 */
async function visibleChanges(ctx: Ctx): Promise<Condition<HostTables, 'object_changes'> | null> {
  const visibility = await ChangeVisibility.load(ctx);
  const grants = await typeGrants(ctx);
  const conditions: Array<Condition<HostTables, 'object_changes'>> = [];
  const hidden = [
    ...ctx.host.objectTypes
      .sourceOfTruth()
      .filter((t) => visibility.grant(t.name) === false)
      .map((t) => t.name),
    ...[...grants].filter(([, g]) => g === false).map(([t]) => t),
  ];
  if (visibility.branchIds !== 'all' || hidden.length > 0)
    conditions.push(changesIn(ctx, visibility.branchIds, hidden));
  if (visibility.branchIds !== 'all') conditions.push(onlyObjectsIn(ctx, BRANCH_TYPE, visibility.branchIds));
  for (const related of ctx.host.relatedVisibility.all()) {
    if (!related.owner) continue;
    const ids = await related.owner.visibleIds(ctx);
    if (ids !== null) conditions.push(onlyOfVisibleOwners(related.owner.objectType, related.objectTypes, ids));
  }
  if (conditions.length === 0) return null;
  return (eb) => eb.and(conditions.map((c) => c(eb)));
}

/** The caller's view grant on each object type plugins declare (their owners judged in SQL). */
async function typeGrants(ctx: Ctx): Promise<Map<string, Grant>> {
  const perms = ctx.user ? await ctx.host.permissions.forUser(ctx.user, ctx.db) : null;
  const grants = new Map<string, Grant>();
  for (const related of ctx.host.relatedVisibility.all())
    for (const type of related.objectTypes) grants.set(type, perms ? perms.grant(type, 'view') : false);
  return grants;
}

/** What is judged in code on the state recorded: constrained view grants and the plugins' own judgements. */
async function admittedChanges(
  ctx: Ctx,
): Promise<((rows: Array<Row<ObjectChangesTable>>) => Promise<Array<Row<ObjectChangesTable>>>) | null> {
  const visibility = await ChangeVisibility.load(ctx);
  const constrained = new Map<string, Grant>();
  if (!visibility.unrestricted) for (const t of visibility.constrainedTypes()) constrained.set(t, visibility.grant(t));
  for (const [type, grant] of await typeGrants(ctx)) if (Array.isArray(grant)) constrained.set(type, grant);
  const judges = new Map<string, (states: ReadonlyArray<Record<string, unknown>>) => Promise<boolean[]>>();
  for (const related of ctx.host.relatedVisibility.all()) {
    const judge = related.admit ? await related.admit(ctx) : null;
    if (judge) for (const type of related.objectTypes) judges.set(type, judge);
  }
  if (constrained.size === 0 && judges.size === 0) return null;
  const user = ctx.user;
  return async (rows) => {
    const stateOf = (r: Row<ObjectChangesTable>) => parseJson(r.postchange_data) ?? parseJson(r.prechange_data);
    let kept = rows.filter((r) => {
      const grant = constrained.get(r.changed_object_type);
      if (grant === undefined) return true;
      const state = stateOf(r);
      return state !== null && user !== null && grantAllows(grant, state, user);
    });
    for (const [type, judge] of judges) {
      const judged = kept.filter((r) => r.changed_object_type === type);
      if (judged.length === 0) continue;
      const verdicts = await judge(judged.map((r) => stateOf(r) ?? {}));
      const hidden = new Set(judged.filter((_, i) => !verdicts[i]));
      kept = kept.filter((r) => !hidden.has(r));
    }
    return kept;
  };
}

/** The changelog list (and, through it, the detail): what a caller may see of it (`visibleChanges`). */
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
  visible: visibleChanges,
  admit: admittedChanges,
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
    // One entry is shown exactly when the list would show it.
    get: async (ctx, id) =>
      (await objectChangeList.run(ctx, { filters: { id: [id] }, ordering: [], page: { limit: 1, offset: 0 } }))
        .items[0],
  });
}
