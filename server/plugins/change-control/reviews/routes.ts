import type { z } from 'zod';
import { branchContributors } from '../../branching';
import {
  review as reviewOutput,
  reviewCreate,
  reviewUpdate,
  type Review,
  type ReviewDecision,
} from '../../../../contract/api/change-control';
import {
  constraintViolation,
  recordChange,
  setTags,
  type Ctx,
  PermissionDenied,
  ValidationError,
  type Host,
  type ApiObject,
} from '../../../host';
import { getViewable, parseId, registerResource } from '../../../host/http';
import { reviewList } from './list';
import { requestRefresh } from '../change-requests/refresh';
import { changeRequestNamedInBody, getChangeRequestRow } from '../change-requests/repository';
import { requestDigest } from '../change-requests/content';
import { mayViewRequestId } from '../change-requests/visibility-repository';
import { nowIso } from '../db/database';
import type { ChangeRequestRow, ReviewRow } from '../db/tables';
import { APP_LABEL, MODELS, PERMISSIONS, REVIEW_TYPE } from '../names';
import { requireStillAdmitted, requireWriteAccess } from '../write-permission';
import {
  deleteReviewRow,
  presentReviewRows,
  reviewIdOf,
  reviewTable,
  snapshotReview,
  updateReviewRow,
} from './repository';
import {
  closedRequestRefusal,
  contributorApprovalRefusal,
  editorRefusal,
  rejectNeedsComment,
  secondReviewRefusal,
  selfReviewRefusal,
  withdrawRefusal,
} from './review-rules';

type ReviewOut = Review & ApiObject;
type CreateInput = z.infer<typeof reviewCreate>;
type UpdateInput = z.infer<typeof reviewUpdate>;

/**
 * A review, presented, when the caller may view its change request (otherwise it does not exist
 * for them); `read` is given the row it was made from.
 */
async function getReview(ctx: Ctx, id: number, read?: (row: ReviewRow) => void): Promise<ReviewOut | undefined> {
  const row = await reviewTable.byId(ctx, id);
  if (!row || !(await mayViewRequestId(ctx, row.change_request_id))) return undefined;
  read?.(row);
  return (await presentReviewRows(ctx, [row]))[0];
}

function refuse(field: string | null, message: string | null): void {
  if (message === null) return;
  throw field ? ValidationError.field(field, message) : new ValidationError(message);
}

/** 400 when the caller would approve a branch they changed (independent approval). */
async function refuseContributorApproval(ctx: Ctx, decision: ReviewDecision, branchId: number | null): Promise<void> {
  if (decision !== 'approve') return;
  const canApprove = ctx.host.config.change_control.contributors_can_approve;
  const isContributor = !canApprove && (await branchContributors(ctx, branchId)).has(ctx.user!.id);
  refuse(null, contributorApprovalRefusal(decision, isContributor, canApprove));
}

/** `cr`: the reviewed request as read in this transaction (a review write leaves its row alone). */
async function afterReviewWrite(ctx: Ctx, row: ReviewRow, cr?: ChangeRequestRow): Promise<void> {
  cr ??= (await getChangeRequestRow(ctx, row.change_request_id))!;
  await requestRefresh(ctx, cr.id, {
    rematch: false,
    events: [{ event: 'review_submitted', before: null, after: cr }],
  });
  await ctx.flushBeforeCommit();
}

/**
 * Creates the caller's review. The reviewer is always the caller (a `reviewer` in the body is
 * ignored); self-review, a second review and `reject` without a comment are refused with 400.
 * Answers the review as presented.
 */
async function createReview(ctx: Ctx, input: CreateInput): Promise<ReviewOut> {
  const caller = ctx.user!;
  const cr = await changeRequestNamedInBody(ctx, input.change_request);
  refuse(null, closedRequestRefusal(cr.status));
  refuse(null, selfReviewRefusal(caller.id, cr.requester_id));
  refuse(null, secondReviewRefusal(await reviewIdOf(ctx, cr.id, caller.id)));
  const comment = input.comment ?? '';
  refuse('comment', rejectNeedsComment(input.decision, comment));
  await refuseContributorApproval(ctx, input.decision, cr.branch_id);
  const now = nowIso(ctx);
  let row: ReviewRow;
  try {
    row = await reviewTable.insertRow(ctx, {
      change_request_id: cr.id,
      reviewer_id: caller.id,
      decision: input.decision,
      comment,
      stale: 0,
      digest: await requestDigest(ctx, cr),
      custom_fields: JSON.stringify(input.custom_fields ?? {}),
      created: now,
      last_updated: now,
    });
  } catch (err) {
    if (constraintViolation(err)?.kind === 'unique')
      throw new ValidationError(secondReviewRefusal(0)!.replace(' (review 0)', ''));
    throw err;
  }
  if (input.tags !== undefined) await setTags(ctx, REVIEW_TYPE, row.id, input.tags);
  const presented = (await presentReviewRows(ctx, [row]))[0]!;
  // The add permission's constraints decide which reviews the caller may create (403 when they exclude this one).
  await requireWriteAccess(ctx, [PERMISSIONS.addReview], presented);
  await recordChange(ctx, {
    action: 'create',
    objectType: REVIEW_TYPE,
    objectId: row.id,
    repr: presented.display,
    prechange: null,
    postchange: snapshotReview(ctx, row),
  });
  await afterReviewWrite(ctx, row, cr);
  return presented;
}

/** Who may edit a review: its author, holding add_review or change_review on it. */
const EDIT_PERMISSIONS = [PERMISSIONS.addReview, `${APP_LABEL}.change_review`] as const;
/** Who may delete a review: its author alone (withdrawing it), with add_review, change_review or delete_review on it. */
const WITHDRAW_PERMISSIONS = [...EDIT_PERMISSIONS, `${APP_LABEL}.delete_review`] as const;

/**
 * Only the author edits a review; an edit is a fresh decision, so it is no longer stale (the
 * author re-affirming a stale review makes it count again). PUT replaces decision, comment and
 * custom_fields (an omitted comment or custom_fields is cleared); PATCH changes what it names.
 * Answers the review as presented after the edit.
 */
async function updateReview(
  ctx: Ctx,
  rawId: string | undefined,
  input: UpdateInput,
  replace: boolean,
): Promise<ReviewOut> {
  const caller = ctx.user!;
  // The row the presented review was made from: read once.
  let before!: ReviewRow;
  const existing = await getViewable(
    ctx,
    { objectType: REVIEW_TYPE, get: (tx, id) => getReview(tx, id, (row) => (before = row)) },
    parseId(rawId),
  );
  await requireWriteAccess(
    ctx,
    EDIT_PERMISSIONS,
    existing,
    'Editing a review needs change_control.change_review (or add_review).',
  );
  const editor = editorRefusal(caller.id, before.reviewer_id);
  if (editor) throw new PermissionDenied(editor);
  const cr = (await getChangeRequestRow(ctx, before.change_request_id))!;
  refuse(null, closedRequestRefusal(cr.status));
  const decision = input.decision ?? before.decision;
  const comment = input.comment ?? (replace ? '' : before.comment);
  refuse('comment', rejectNeedsComment(decision, comment));
  await refuseContributorApproval(ctx, decision, cr.branch_id);
  const digest = await requestDigest(ctx, cr);
  if (input.tags !== undefined) await setTags(ctx, REVIEW_TYPE, before.id, input.tags);
  const customFields =
    input.custom_fields !== undefined ? JSON.stringify(input.custom_fields) : replace ? '{}' : before.custom_fields;
  if (
    decision === before.decision &&
    comment === before.comment &&
    customFields === before.custom_fields &&
    before.stale === 0 &&
    before.digest === digest
  ) {
    // Nothing but (perhaps) its tags changed: as presented before, unless the tags moved.
    return input.tags === undefined ? existing : (await presentReviewRows(ctx, [before]))[0]!;
  }
  const now = nowIso(ctx);
  // An edit is given on the branch as it is now.
  await updateReviewRow(ctx, before, {
    decision,
    comment,
    custom_fields: customFields,
    stale: 0,
    digest,
    last_updated: now,
  });
  const after = (await reviewTable.byId(ctx, before.id))!;
  const presented = (await presentReviewRows(ctx, [after]))[0]!;
  await requireStillAdmitted(ctx, EDIT_PERMISSIONS, presented);
  await recordChange(ctx, {
    action: 'update',
    objectType: REVIEW_TYPE,
    objectId: before.id,
    repr: presented.display,
    prechange: snapshotReview(ctx, before),
    postchange: snapshotReview(ctx, after),
  });
  await afterReviewWrite(ctx, after, cr);
  return presented;
}

/**
 * Deleting a review: its author withdraws it (with add_review, change_review or delete_review on
 * it). Nobody else may delete someone's review, superusers included: a review is a record (the
 * accountable override exists to merge past one). A completed or abandoned request keeps its reviews.
 */
async function deleteReview(ctx: Ctx, rawId: string | undefined): Promise<void> {
  const caller = ctx.user!;
  const existing = await getViewable(ctx, { objectType: REVIEW_TYPE, get: getReview }, parseId(rawId));
  const row = (await reviewTable.byId(ctx, existing.id))!;
  const refusal = withdrawRefusal(caller.id, row.reviewer_id);
  if (refusal) throw new PermissionDenied(refusal);
  await requireWriteAccess(
    ctx,
    WITHDRAW_PERMISSIONS,
    existing,
    'Withdrawing your review needs change_control.add_review, change_review or delete_review on it.',
  );
  const cr = (await getChangeRequestRow(ctx, row.change_request_id))!;
  refuse(null, closedRequestRefusal(cr.status));
  await deleteReviewRow(ctx, row);
  await recordChange(ctx, {
    action: 'delete',
    objectType: REVIEW_TYPE,
    objectId: row.id,
    repr: existing.display,
    prechange: snapshotReview(ctx, row),
    postchange: null,
  });
  await requestRefresh(ctx, row.change_request_id, { rematch: false });
}

export function registerReviewRoutes(host: Host): void {
  const routes = registerResource(host.routes, {
    tag: 'change-control',
    objectType: REVIEW_TYPE,
    path: MODELS.review.path,
    output: reviewOutput,
    list: reviewList,
    get: getReview,
    ownChangelog: true,
  });
  routes.create({
    access: { permission: 'change_control.add_review' },
    summary: 'Review a change request (the reviewer is always the caller)',
    body: reviewCreate,
    run: ({ ctx, body }) => createReview(ctx, body),
  });

  routes.patchAndPut({
    path: ':id/',
    // Only the author edits a review, with add_review or change_review on it (checked in the handler).
    access: { authenticated: true },
    summary: {
      PATCH: "Edit one's own review (decision, comment)",
      PUT: "Replace one's own review (decision, comment)",
    },
    body: { PATCH: reviewUpdate, PUT: reviewCreate.omit({ change_request: true }) },
    handler: async ({ ctx, params, body }, method) => updateReview(ctx, params.id, body, method === 'PUT'),
  });

  // Only the author withdraws their review (checked in the handler): a review is a record.
  routes.remove({
    path: ':id/',
    access: { authenticated: true },
    summary: "Withdraw one's own review (nobody may delete someone else's)",
    run: ({ ctx, params }) => deleteReview(ctx, params.id),
  });
}
