import type { z } from 'zod';
import {
  changeComment as commentOutput,
  changeCommentCreate,
  changeCommentUpdate,
  type ChangeComment,
} from '../../../../contract/api/change-control';
import { getVisibleChangeDiff } from '../../branching';
import { recordChange, type Ctx, PermissionDenied, ValidationError, type Host, type ApiObject } from '../../../host';
import { getViewable, parseId, registerResource } from '../../../host/http';
import { commentList } from './list';
import { requestRefresh } from '../change-requests/refresh';
import { changeRequestNamedInBody } from '../change-requests/repository';
import { mayViewRequestId } from '../change-requests/visibility-repository';
import { fromBool, nowIso } from '../db/database';
import type { ChangeCommentRow } from '../db/tables';
import { APP_LABEL, CHANGE_COMMENT_TYPE, MODELS } from '../names';
import { requireStillAdmitted, requireWriteAccess } from '../write-permission';
import {
  anchorRefusal,
  attributeRefusal,
  editRefusal,
  replyAttributeRefusal,
  recordedValue,
  replyRefusal,
  resolveRefusal,
  suggestionRefusal,
  suggestionThreadRefusal,
  threadRootOf,
} from './comment-rules';
import { threadCounts, threadOpened } from '../checks/view-repository';
import {
  commentTable,
  presentComments,
  repliesTo,
  snapshotComment,
  visibleCommentRows,
  type StoredSuggestion,
} from './repository';

/** A suggested value, written as JSON, is a text field's size at most (contract 4.7). */
const MAX_SUGGESTED_VALUE = 65_536;

type CommentOut = ChangeComment & ApiObject;
type CreateInput = z.infer<typeof changeCommentCreate>;
type UpdateInput = z.infer<typeof changeCommentUpdate>;

/** A comment the caller may see (its changed object included), else undefined; `read` is given the row it was made from. */
async function getComment(
  ctx: Ctx,
  id: number,
  read?: (row: ChangeCommentRow) => void,
): Promise<CommentOut | undefined> {
  const row = await commentTable.byId(ctx, id);
  // A comment of a request the caller may not view does not exist for them.
  if (!row || !(await mayViewRequestId(ctx, row.change_request_id))) return undefined;
  read?.(row);
  const visible = await visibleCommentRows(ctx, [row]);
  return visible.length > 0 ? ((await presentComments(ctx, visible))[0] as CommentOut) : undefined;
}

/** Trigger 7: a thread opened, resolved, reopened or removed re-runs the checks. */
async function threadMoved(ctx: Ctx, changeRequestId: number): Promise<void> {
  await requestRefresh(ctx, changeRequestId, { rematch: false, checks: true });
  await ctx.flushBeforeCommit();
}

/**
 * A comment anchored to one change of the request's own branch. The author is always the
 * caller; a reply joins its parent's thread (flattened to one level) and must be on the same
 * change. A thread's root may name an attribute of the change (a dot path existing in its
 * original or modified state); a reply carries its root's (naming another is refused).
 */
async function createComment(ctx: Ctx, input: CreateInput): Promise<CommentOut> {
  const cr = await changeRequestNamedInBody(ctx, input.change_request);
  // A change the caller may not see is answered as one that does not exist.
  const change = await getVisibleChangeDiff(ctx, input.change_diff);
  const anchor = anchorRefusal(input.change_diff, {
    change: change ? { id: change.id, branchId: change.branch } : undefined,
    requestBranchId: cr.branch_id,
  });
  if (anchor) throw ValidationError.field('change_diff', anchor);
  let parentId: number | null = null;
  let attribute: string | null = null;
  if (input.parent !== undefined && input.parent !== null) {
    const parent = await commentTable.byId(ctx, input.parent);
    const facts = parent
      ? {
          id: parent.id,
          changeRequestId: parent.change_request_id,
          changeDiffId: parent.change_diff_id,
          parentId: parent.parent_id,
        }
      : undefined;
    const root = facts ? await commentTable.byId(ctx, threadRootOf(facts)) : undefined;
    const refusal = replyRefusal(facts, input.parent, cr.id, input.change_diff, root?.change_diff_id ?? null);
    if (refusal) throw ValidationError.field('parent', refusal);
    const attributeProblem = replyAttributeRefusal(root!.attribute, input.attribute);
    if (attributeProblem) throw ValidationError.field('attribute', attributeProblem);
    parentId = root!.id;
    attribute = root!.attribute;
  } else if (input.attribute !== undefined && input.attribute !== null) {
    const attributeProblem = attributeRefusal(input.attribute, change!.original, change!.modified);
    if (attributeProblem) throw ValidationError.field('attribute', attributeProblem);
    attribute = input.attribute;
  }
  let suggestion: StoredSuggestion | null = null;
  if (input.suggestion) {
    const proposed = input.suggestion;
    const refusal = suggestionRefusal(proposed.attribute, change!);
    if (refusal) throw ValidationError.field('suggestion', refusal);
    // A new thread naming no attribute is about the one it suggests a value for, when the change has it.
    if (
      parentId === null &&
      attribute === null &&
      !attributeRefusal(proposed.attribute, change!.original, change!.modified)
    )
      attribute = proposed.attribute;
    const threadProblem = suggestionThreadRefusal(attribute, proposed.attribute);
    if (threadProblem) throw ValidationError.field('suggestion', threadProblem);
    if (JSON.stringify(proposed.value).length > MAX_SUGGESTED_VALUE)
      throw ValidationError.field('suggestion', `The value is longer than ${MAX_SUGGESTED_VALUE} characters as JSON.`);
    suggestion = {
      attribute: proposed.attribute,
      value: proposed.value,
      previous: recordedValue(change!.modified, proposed.attribute),
    };
  }
  // A new thread: the request's counts before it (kept, or counted once), and after it one more open.
  const threadsBefore = parentId === null ? await threadCounts(ctx, cr.id) : undefined;
  const now = nowIso(ctx);
  const row = await commentTable.insertRow(ctx, {
    change_request_id: cr.id,
    change_diff_id: change!.id,
    change_object_type: change!.object_type,
    change_object_id: change!.object_id,
    change_label: change!.object_repr,
    text: input.text,
    author_id: ctx.user!.id,
    parent_id: parentId,
    attribute,
    resolved: 0,
    edited: 0,
    suggestion: suggestion === null ? null : JSON.stringify(suggestion),
    applied_by_id: null,
    applied_at: null,
    created: now,
    last_updated: now,
  });
  if (threadsBefore !== undefined) threadOpened(ctx, cr.id, threadsBefore);
  const presented = (await presentComments(ctx, [row]))[0]!;
  // The add permission's constraints decide which comments the caller may create (403 when they exclude this one).
  await requireWriteAccess(ctx, [ADD], presented);
  await recordChange(ctx, {
    action: 'create',
    objectType: CHANGE_COMMENT_TYPE,
    objectId: row.id,
    repr: presented.display,
    prechange: null,
    postchange: snapshotComment(ctx, row),
  });
  if (parentId === null) await threadMoved(ctx, cr.id);
  // The refresh moved no comment and no change: the answer is the comment as presented.
  return presented as CommentOut;
}

const ADD = `${APP_LABEL}.add_changecomment`;
const CHANGE = `${APP_LABEL}.change_changecomment`;
const DELETE = `${APP_LABEL}.delete_changecomment`;
/** The author edits their text with add_changecomment or change_changecomment on the comment. */
const AUTHOR_EDIT = [ADD, CHANGE] as const;
/** Resolving or reopening a thread (anyone's) needs change_changecomment (contract 4.1). */
const RESOLVE = [CHANGE] as const;

/**
 * The author edits the text; a holder of change_changecomment resolves or reopens a thread
 * (roots only). A comment the caller may not view is a 404; without the permission a write
 * needs (or with it only under constraints that exclude the comment), a 403.
 */
async function updateComment(ctx: Ctx, rawId: string | undefined, input: UpdateInput): Promise<CommentOut> {
  const caller = ctx.user!;
  // The row the presented comment was made from: read once.
  let before!: ChangeCommentRow;
  const existing = await getViewable(
    ctx,
    { objectType: CHANGE_COMMENT_TYPE, get: (tx, id) => getComment(tx, id, (row) => (before = row)) },
    parseId(rawId),
  );
  const isAuthor = before.author_id === caller.id;
  const textChanges = input.text !== undefined && input.text !== before.text;
  if (input.resolved !== undefined) {
    const refusal = resolveRefusal(before.parent_id === null);
    if (refusal) throw ValidationError.field('resolved', refusal);
  }
  const resolvedChanges = input.resolved !== undefined && fromBool(input.resolved) !== before.resolved;
  const needed: string[] = [];
  if (textChanges) {
    await requireWriteAccess(
      ctx,
      AUTHOR_EDIT,
      existing,
      'Editing a comment needs change_control.change_changecomment (or add_changecomment).',
    );
    const refusal = editRefusal(caller.id, before.author_id);
    if (refusal) throw new PermissionDenied(refusal);
    needed.push(...AUTHOR_EDIT);
  }
  if (input.resolved !== undefined) {
    await requireWriteAccess(
      ctx,
      RESOLVE,
      existing,
      'Resolving or reopening a thread needs change_control.change_changecomment.',
    );
    needed.push(...RESOLVE);
  }
  if (needed.length === 0) {
    // Nothing named that changes: still only for someone who may edit this comment.
    await requireWriteAccess(
      ctx,
      isAuthor ? AUTHOR_EDIT : RESOLVE,
      existing,
      'Editing a comment needs change_control.change_changecomment (or add_changecomment, for its author).',
    );
  }
  if (!textChanges && !resolvedChanges) return existing;
  const now = nowIso(ctx);
  await commentTable.update(ctx, before.id, {
    ...(textChanges ? { text: input.text, edited: 1 } : {}),
    ...(resolvedChanges ? { resolved: fromBool(input.resolved!) } : {}),
    last_updated: now,
  });
  const after = (await commentTable.byId(ctx, before.id))!;
  const presented = (await presentComments(ctx, [after]))[0]!;
  if (textChanges) await requireStillAdmitted(ctx, AUTHOR_EDIT, presented);
  if (input.resolved !== undefined) await requireStillAdmitted(ctx, RESOLVE, presented);
  await recordChange(ctx, {
    action: 'update',
    objectType: CHANGE_COMMENT_TYPE,
    objectId: before.id,
    repr: existing.display,
    prechange: snapshotComment(ctx, before),
    postchange: snapshotComment(ctx, after),
  });
  if (resolvedChanges) await threadMoved(ctx, before.change_request_id);
  return presented as CommentOut;
}

/** The author deletes their comment (with add_ or change_changecomment on it); a holder of delete_changecomment may delete any. A root takes its thread with it. */
async function deleteComment(ctx: Ctx, rawId: string | undefined): Promise<void> {
  const caller = ctx.user!;
  const existing = await getViewable(ctx, { objectType: CHANGE_COMMENT_TYPE, get: getComment }, parseId(rawId));
  const row = (await commentTable.byId(ctx, existing.id))!;
  const allowedBy = row.author_id === caller.id ? [DELETE, ...AUTHOR_EDIT] : [DELETE];
  await requireWriteAccess(
    ctx,
    allowedBy,
    existing,
    'Only the author of a comment, or a holder of change_control.delete_changecomment, may delete it.',
  );
  const replies = row.parent_id === null ? await repliesTo(ctx, row.id) : [];
  await commentTable.remove(ctx, row.id);
  for (const gone of [...replies, row]) {
    await recordChange(ctx, {
      action: 'delete',
      objectType: CHANGE_COMMENT_TYPE,
      objectId: gone.id,
      repr: `comment ${gone.id}`,
      prechange: snapshotComment(ctx, gone),
      postchange: null,
    });
  }
  if (row.parent_id === null) await threadMoved(ctx, row.change_request_id);
}

export function registerCommentRoutes(host: Host): void {
  const routes = registerResource(host.routes, {
    tag: 'change-control',
    objectType: CHANGE_COMMENT_TYPE,
    path: MODELS.changeComment.path,
    output: commentOutput,
    list: commentList,
    get: getComment,
  });
  routes.create({
    access: { permission: 'change_control.add_changecomment' },
    summary: "Comment on one change of a change request's branch (the author is always the caller)",
    body: changeCommentCreate,
    run: ({ ctx, body }) => createComment(ctx, body),
  });
  routes.patchAndPut({
    path: ':id/',
    // The author edits the text; resolving needs change_changecomment (both checked in the handler).
    access: { authenticated: true },
    summary: { PATCH: "Edit one's own comment, or resolve / reopen a thread", PUT: "Replace one's own comment text" },
    body: { PATCH: changeCommentUpdate, PUT: changeCommentUpdate },
    handler: async ({ ctx, params, body }) => updateComment(ctx, params.id, body),
  });
  routes.remove({
    path: ':id/',
    access: { authenticated: true },
    summary: "Delete one's own comment (a root comment takes its thread with it)",
    run: ({ ctx, params }) => deleteComment(ctx, params.id),
  });
}
