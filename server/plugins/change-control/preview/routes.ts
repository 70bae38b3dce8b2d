import { preview as previewOutput } from '../../../../contract/api/change-control';
import { NotFound, ValidationError, branchAccess, findBranch, type Host } from '../../../host';
import { parseFilters } from '../../../host/http';
import { API_ROOT, APP_LABEL } from '../names';
import { previewBranch } from './preview';

/** GET `preview/?branch_id=N`: what would govern a branch before a change request exists. */
export function registerPreviewRoute(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: `${API_ROOT}preview/`,
    access: { permission: `${APP_LABEL}.view_policy` },
    summary:
      'Preview a branch before a change request exists: the policies and rules that would govern it (active and evaluating), the checks it would need, and what would block it; only what the caller may view',
    tag: 'change-control',
    query: [{ name: 'branch_id', description: 'The branch (required).' }],
    response: previewOutput,
    handler: async ({ ctx, query }) => {
      const filters = parseFilters(query, { branch_id: { type: 'int' } }, ctx.user?.id ?? null);
      const ids = filters.branch_id as number[] | undefined;
      if (!ids || ids.length !== 1) throw ValidationError.field('branch_id', 'Name one branch: ?branch_id=N.');
      const branch = await findBranch(ctx, ids[0]!);
      // A branch the caller cannot view is answered as one that does not exist.
      if (!branch || !(await branchAccess(ctx)).mayView(branch)) throw new NotFound();
      return previewBranch(ctx, branch);
    },
  });
}
