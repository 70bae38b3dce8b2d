import {
  type Ctx,
  Conflict,
  deriveCtx,
  findBranch,
  presentObject,
  readObject,
  recordChange,
  requireBranchWrite,
  updateObject,
  ValidationError,
} from '../../../host';
import { branchChangesByIds } from '../../../host';
import type { ApplySuggestionsResult } from '../../../../contract/api/change-control';
import type { ChangeCommentRow, ChangeRequestRow } from '../db/tables';
import { nowIso } from '../db/database';
import { CHANGE_COMMENT_TYPE } from '../names';
import { requestRefresh } from '../change-requests/refresh';
import { requireStillAdmitted, requireWriteAccess } from '../write-permission';
import { isSuggestionOutdated, pathsOverlap, withValueAt } from './comment-rules';
import {
  commentsByIds,
  markSuggestionsApplied,
  parseSuggestion,
  snapshotComment,
  visibleCommentRows,
  type StoredSuggestion,
} from './repository';

interface Applicable {
  row: ChangeCommentRow;
  suggestion: StoredSuggestion;
}

const listed = (ids: readonly number[]) => ids.join(', ');

/**
 * Writes the suggestions of these comments into the request's branch, as the caller: one write
 * per object (several suggestions on one object make one branch change), each with the
 * caller's authority (the right to write the branch; `change` on the object, before and after),
 * all or none. Each comment records who applied it and when, and its thread is resolved. A
 * suggestion whose attribute changed since it was made is outdated: refused (409 naming the
 * comments) unless `force`; one whose change is gone or whose object is deleted is refused
 * either way.
 */
export async function applySuggestions(
  ctx: Ctx,
  cr: ChangeRequestRow,
  commentIds: readonly number[],
  force: boolean,
): Promise<ApplySuggestionsResult> {
  const branch = cr.branch_id === null ? undefined : await findBranch(ctx, cr.branch_id);
  if (!branch) throw new Conflict('The branch of this change request has been deleted: nothing can be applied.');
  await requireBranchWrite(ctx, branch);
  if (branch.status !== 'ready')
    throw new Conflict(`Branch "${branch.name}" is ${branch.status}; only a ready branch accepts changes.`);

  const ids = [...new Set(commentIds)];
  const visible = new Map(
    (await visibleCommentRows(ctx, await commentsByIds(ctx, ids)))
      .filter((r) => r.change_request_id === cr.id)
      .map((r) => [r.id, r]),
  );
  const unknown = ids.filter((id) => !visible.has(id));
  if (unknown.length > 0)
    throw ValidationError.field('comments', `Comment ${listed(unknown)} does not exist on this change request.`);
  const plain = ids.filter((id) => visible.get(id)!.suggestion === null);
  if (plain.length > 0) throw ValidationError.field('comments', `Comment ${listed(plain)} carries no suggestion.`);
  const applicable: Applicable[] = ids.map((id) => ({
    row: visible.get(id)!,
    suggestion: parseSuggestion(visible.get(id)!.suggestion)!,
  }));
  const done = applicable.filter((a) => a.row.applied_at !== null).map((a) => a.row.id);
  if (done.length > 0)
    throw new Conflict(`The suggestion of comment ${listed(done)} is applied already.`, { comments: done });

  const changes = new Map(
    (
      await branchChangesByIds(
        ctx,
        applicable.flatMap((a) => (a.row.change_diff_id === null ? [] : [a.row.change_diff_id])),
      )
    )
      .filter((c) => c.branchId === branch.id)
      .map((c) => [c.id, c]),
  );
  const changeOf = (a: Applicable) => (a.row.change_diff_id === null ? undefined : changes.get(a.row.change_diff_id));
  const gone = applicable.filter((a) => !changeOf(a) || changeOf(a)!.modified === null).map((a) => a.row.id);
  if (gone.length > 0)
    throw new Conflict(
      `The change of comment ${listed(gone)} is no longer in the branch, or its object is deleted there: its suggestion cannot be applied.`,
      { comments: gone },
    );
  const outdated = applicable
    .filter((a) => isSuggestionOutdated(a.suggestion, changeOf(a), false))
    .map((a) => a.row.id);
  if (outdated.length > 0 && !force)
    throw new Conflict(
      `The suggestion of comment ${listed(outdated)} is outdated: its attribute changed in the branch since it was suggested. Look at it again, or apply it with "force": true to overwrite what changed.`,
      { comments: outdated },
    );

  // One write per object: its suggestions together, which must not overlap.
  const byObject = new Map<number, Applicable[]>();
  for (const a of applicable) byObject.set(changeOf(a)!.id, [...(byObject.get(changeOf(a)!.id) ?? []), a]);
  for (const group of byObject.values()) {
    for (let i = 0; i < group.length; i += 1)
      for (let j = i + 1; j < group.length; j += 1)
        if (pathsOverlap(group[i]!.suggestion.attribute, group[j]!.suggestion.attribute))
          throw ValidationError.field(
            'comments',
            `Comments ${group[i]!.row.id} and ${group[j]!.row.id} both suggest a value for ${group[i]!.suggestion.attribute}: apply one of them.`,
          );
  }

  const inBranch = deriveCtx(ctx, { branch: { id: branch.id, schemaId: branch.schema_id, name: branch.name } });
  const objects: ApplySuggestionsResult['objects'] = [];
  for (const [changeId, group] of byObject) {
    const change = changes.get(changeId)!;
    const def = ctx.host.objectTypes.get(change.objectType);
    const state = await readObject(inBranch, change.objectType, change.objectId);
    if (!def?.sourceOfTruth || !state)
      throw new Conflict(`The object of comment ${group[0]!.row.id} is no longer in the branch.`, {
        comments: group.map((a) => a.row.id),
      });
    const catalogued = { ...def, name: change.objectType };
    const permission = `${def.appLabel}.change_${def.model}`;
    await requireWriteAccess(inBranch, [permission], presentObject(inBranch, catalogued, state));
    const attrs = group.reduce((acc, a) => withValueAt(acc, a.suggestion.attribute, a.suggestion.value), state.attrs);
    await updateObject(inBranch, catalogued, state, attrs, {
      authorize: (next) => requireStillAdmitted(inBranch, [permission], presentObject(inBranch, catalogued, next)),
    });
    objects.push({ object_type: change.objectType, object_id: change.objectId });
  }

  // The comments: applied, and their threads resolved.
  const rootIds = [...new Set(applicable.map((a) => a.row.parent_id ?? a.row.id))];
  const roots = new Map((await commentsByIds(ctx, rootIds)).map((r) => [r.id, r]));
  const toResolve = rootIds.filter((id) => roots.get(id)?.resolved === 0);
  const now = nowIso(ctx);
  await markSuggestionsApplied(ctx, ids, toResolve, ctx.user!.id, now);
  const after = new Map((await commentsByIds(ctx, [...new Set([...ids, ...toResolve])])).map((r) => [r.id, r]));
  for (const [id, row] of after) {
    const before = visible.get(id) ?? roots.get(id)!;
    await recordChange(ctx, {
      action: 'update',
      objectType: CHANGE_COMMENT_TYPE,
      objectId: id,
      repr: `comment ${id}`,
      prechange: snapshotComment(ctx, before),
      postchange: snapshotComment(ctx, row),
    });
  }
  // Trigger 7: threads resolved re-run the checks.
  if (toResolve.length > 0) await requestRefresh(ctx, cr.id, { rematch: false, checks: true });
  return { comments: ids, objects };
}
