import { branchChanges, ChangeVisibility, type Ctx } from '../../../host';
import type { CheckObject } from '../../../../contract/api/change-control';
import { checkedRequest } from './state';

/**
 * A check's `objects` as this caller may see them: a viewer of the request who may not view an
 * object of its branch (no view permission on its type, or constraints that do not admit the
 * branch's state of it) does not learn it is there, as `changes/` would not show it. Objects
 * the branch no longer changes are judged by their type's grant alone.
 */
export async function visibleCheckObjects<T extends { change_request: number; objects: CheckObject[] }>(
  ctx: Ctx,
  checks: T[],
): Promise<T[]> {
  if (!checks.some((c) => c.objects.length > 0)) return checks;
  const visibility = await ChangeVisibility.load(ctx);
  if (visibility.unrestricted) return checks;
  const out: T[] = [];
  for (const check of checks) {
    if (check.objects.length === 0) {
      out.push(check);
      continue;
    }
    const constrained = check.objects.filter((o) => Array.isArray(visibility.grant(o.object_type)));
    let admitted = new Set<string>();
    if (constrained.length > 0) {
      const branchId = (await checkedRequest(ctx, check.change_request))?.cr.branch_id ?? null;
      if (branchId !== null) {
        const changes = await branchChanges(ctx, branchId, { objectIds: constrained.map((o) => o.object_id) });
        const seen = await visibility.filter(changes);
        admitted = new Set(seen.map((c) => `${c.objectType}|${c.objectId}`));
      }
    }
    const objects = check.objects.filter((o) => {
      const grant = visibility.grant(o.object_type);
      return grant === true || (grant !== false && admitted.has(`${o.object_type}|${o.object_id}`));
    });
    out.push(objects.length === check.objects.length ? check : { ...check, objects });
  }
  return out;
}
