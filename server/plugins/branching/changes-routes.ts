import { changeDiff, CHANGE_ACTIONS } from '../../../contract/api/branching';
import { type Host, branchChangeRows, changesOf, parseChangeRow, ChangeVisibility, defineList } from '../../host';
import { registerResource } from '../../host/http';
import { CHANGEDIFF_TYPE, CHANGES_PATH, presentAll, getVisibleChangeDiff } from './changes';

/**
 * The `changes/` list: only rows of branches the caller can view and of objects their view
 * permission admits. Unconstrained object grants filter in SQL (paged there); constrained
 * ones are checked row by row on the object's state before the page is cut.
 */
const changeList = defineList({
  from: branchChangeRows,
  columnFilters: {
    branch_id: { type: 'int', description: 'Branch id.' },
    object_type: { type: 'string', description: 'Object type, "app_label.model".' },
    action: { type: 'choice', choices: CHANGE_ACTIONS },
    object_id: { type: 'int', description: 'Object id (several: any of them).' },
  },
  ordering: {
    id: 'id',
    object_type: 'object_type',
    object_id: 'object_id',
    action: 'action',
    last_updated: 'last_updated',
  },
  search: ['object_type'],
  visible: async (ctx) => {
    const visibility = await ChangeVisibility.load(ctx);
    if (visibility.unrestricted) return null;
    return changesOf(ctx, visibility.branchIds, visibility.viewableTypes());
  },
  admit: async (ctx) => {
    const visibility = await ChangeVisibility.load(ctx);
    if (visibility.constrainedTypes().length === 0) return null;
    return async (rows) => {
      const visible = new Set((await visibility.filter(rows.map(parseChangeRow))).map((c) => c.id));
      return rows.filter((r) => visible.has(r.id));
    };
  },
  present: async (ctx, rows) => presentAll(ctx, rows.map(parseChangeRow)),
});

/** `changes/`: read-only, one row per object a branch touches. */
export function registerChanges(host: Host): void {
  registerResource(host.routes, {
    tag: 'branching',
    objectType: CHANGEDIFF_TYPE,
    path: CHANGES_PATH,
    output: changeDiff,
    list: changeList,
    get: getVisibleChangeDiff,
  });
}
