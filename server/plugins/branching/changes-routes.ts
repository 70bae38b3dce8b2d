import { changeDiff, CHANGE_ACTIONS } from '../../../contract/api/branching';
import { type Ctx, type Host, type BranchChangesTable, valuesTable, parseChangeRow, ChangeVisibility } from '../../host';
import { registerResource, type ListOptions } from '../../host/http';
import { CHANGEDIFF_TYPE, CHANGES_PATH, presentAll, getVisibleChangeDiff, type ChangeDiffOut } from './changes';

const ORDER_COLUMNS = { id: 'id', object_type: 'object_type', object_id: 'object_id', action: 'action', last_updated: 'last_updated' } as const;

/**
 * The `changes/` list: only rows of branches the caller can view and of objects their view
 * permission admits. Unconstrained object grants filter in SQL (paged there); constrained
 * ones are checked row by row on the object's state before the page is cut.
 */
async function listChanges(ctx: Ctx, { filters, ordering, page }: ListOptions): Promise<{ count: number; items: ChangeDiffOut[] }> {
  const visibility = await ChangeVisibility.load(ctx);
  let q = ctx.db.selectFrom('branch_changes');
  if (!visibility.unrestricted) {
    const branchIds = visibility.branchIds;
    if (branchIds !== 'all') q = q.where('branch_id', 'in', (eb) => eb.selectFrom(valuesTable(ctx.db, [...branchIds]).as('j')).select('j.value'));
    const types = visibility.viewableTypes();
    q = q.where('object_type', 'in', types.length > 0 ? types : ['']);
  }
  if (filters.id) q = q.where('id', 'in', filters.id as number[]);
  if (filters.branch_id) q = q.where('branch_id', 'in', filters.branch_id as number[]);
  if (filters.object_type) q = q.where('object_type', 'in', filters.object_type as string[]);
  if (filters.action) q = q.where('action', 'in', filters.action as Array<BranchChangesTable['action']>);
  let rows = q.selectAll();
  for (const o of ordering) rows = rows.orderBy(ORDER_COLUMNS[o.field as keyof typeof ORDER_COLUMNS], o.desc ? 'desc' : 'asc');
  if (visibility.constrainedTypes().length > 0) {
    const visible = await visibility.filter((await rows.execute()).map(parseChangeRow));
    return { count: visible.length, items: await presentAll(ctx, page ? visible.slice(page.offset, page.offset + page.limit) : visible) };
  }
  const { count } = await q.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  if (page) rows = rows.limit(page.limit).offset(page.offset);
  return { count: Number(count), items: await presentAll(ctx, (await rows.execute()).map(parseChangeRow)) };
}

/** `changes/`: read-only, one row per object a branch touches. */
export function registerChanges(host: Host): void {
  registerResource(host.routes, {
    tag: 'branching',
    objectType: CHANGEDIFF_TYPE,
    path: CHANGES_PATH,
    output: changeDiff,
    filters: {
      id: { type: 'int' },
      branch_id: { type: 'int', description: 'Branch id.' },
      object_type: { type: 'string', description: 'Object type, "app_label.model".' },
      action: { type: 'choice', choices: CHANGE_ACTIONS },
    },
    ordering: Object.keys(ORDER_COLUMNS),
    list: listChanges,
    get: getVisibleChangeDiff,
  });
}
