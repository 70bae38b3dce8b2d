import {
  applySuggestions as applySuggestionsBody,
  applySuggestionsResult,
} from '../../../../contract/api/change-control';
import { type Host, NotFound } from '../../../host';
import { getViewable, parseId } from '../../../host/http';
import { getChangeRequestRow } from '../change-requests/repository';
import { snapshotChangeRequest } from '../change-requests/snapshot';
import { CHANGE_REQUEST_TYPE, MODELS } from '../names';
import { applySuggestions } from './apply-suggestions';

/** `change-requests/{id}/apply-suggestions/`: reviewers' suggested changes written into the branch by whoever may write it. */
export function registerSuggestionRoutes(host: Host): void {
  host.routes.add({
    method: 'POST',
    path: `${MODELS.changeRequest.path}:id/apply-suggestions/`,
    // The branch's write rule and the object permissions decide (checked in the domain).
    access: { authenticated: true },
    summary:
      "Apply suggested changes: write the suggestions of these comments into the request's branch as the caller (one branch change per object, all or none), record who applied them, resolve their threads; an outdated suggestion is a 409 unless force",
    tag: 'change-control',
    body: applySuggestionsBody,
    response: applySuggestionsResult,
    handler: async ({ ctx, params, body }) => {
      const row = await getChangeRequestRow(ctx, parseId(params.id));
      if (!row) throw new NotFound();
      await getViewable(
        ctx,
        { objectType: CHANGE_REQUEST_TYPE, get: async () => snapshotChangeRequest(ctx, row) },
        row.id,
      );
      const result = await applySuggestions(ctx, row, body.comments, body.force ?? false);
      await ctx.flushBeforeCommit();
      return result;
    },
  });
}
