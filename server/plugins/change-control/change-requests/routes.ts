import { timeMoved } from '../gate/clock-signal';
import { z } from 'zod';
import {
  changeRequest as changeRequestOutput,
  changeRequestCreate,
  changeRequestOverride,
  changeRequestUpdate,
  changeRequestReplace,
  evaluation as evaluationOutput,
  runChecksResult,
  LIFECYCLE_ACTIONS,
  type LifecycleAction,
} from '../../../../contract/api/change-control';
import {
  branchAccess,
  findBranch,
  recordChange,
  requireBranchWrite,
  setTags,
  type Ctx,
  Conflict,
  NotFound,
  ValidationError,
  type Host,
} from '../../../host';
import { parseId, presentedById, registerResource, requireObjectPermission } from '../../../host/http';
import { changeRequestList } from './list';
import { windowProblem } from '../gate/change-window';
import { overrideGate } from '../gate/override';
import { BRANCH_TYPE, branchDigest, presentBranch } from '../../branching';
import { fromBool, nowIso } from '../db/database';
import type { ChangeRequestRow } from '../db/tables';
import { presentEvaluation } from '../evaluation/present';
import { computeGate } from '../gate/merge-gate';
import { actionOf, CHANGE_REQUEST_TYPE, MODELS, PERMISSIONS } from '../names';
import { requireRunChecks } from '../checks/access';
import { checkRunReport } from '../checks/run-report';
import { checkRowsOf, declaredFor } from '../checks/state';
import { attachedPolicies } from '../policies/governing';
import { runtime } from '../runtime';
import { LIFECYCLE } from './lifecycle';
import { applyLifecycleAction } from './moves';
import { presentChangeRequest } from './present';
import { requestRefresh } from './refresh';
import {
  deleteChangeRequestRow,
  findChangeRequestForBranch,
  getChangeRequestRow,
  insertChangeRequest,
  keptChangeRequestRow,
  updateChangeRequest,
} from './repository';
import { displayOfChangeRequest, snapshotChangeRequest } from './snapshot';
import { reviewsByOthers } from '../reviews/repository';
import { isOpen } from './status';
import { mayViewRequest } from './visibility-repository';

type CreateInput = z.infer<typeof changeRequestCreate>;
type UpdateInput = z.infer<typeof changeRequestUpdate>;

/** Fields the API shows but computes: a body naming them is accepted and they are ignored. */
const READ_ONLY = [
  'id',
  'url',
  'display',
  'status',
  'requester',
  'branch',
  'branch_name',
  'branch_deleted',
  'approved',
  'ready_to_merge',
  'merge_blocked_reason',
  'has_conflicts',
  'window_warning',
  'gates_cleared',
  'policies',
  'override',
  'merge_acknowledged_conflicts',
  'digest',
  'actions',
  'created',
  'last_updated',
] as const;

/** `schema` applied to the body without the read-only fields (but those in `writable`). */
function withoutReadOnly<T extends z.ZodType>(schema: T, writable: readonly string[] = []): z.ZodType<z.infer<T>> {
  return z.preprocess((body) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
    const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
    for (const key of READ_ONLY) if (!writable.includes(key)) delete copy[key];
    return copy;
  }, schema) as unknown as z.ZodType<z.infer<T>>;
}

/** On create, `branch` names the request's branch; afterwards it is read-only. */
const createBody = withoutReadOnly(changeRequestCreate, ['branch']);
const updateBody = withoutReadOnly(changeRequestUpdate);
const putBody = withoutReadOnly(changeRequestReplace);

/** Loads a request the caller may view (404 otherwise), checked against its stored fields. */
async function viewableRow(ctx: Ctx, rawId: string | undefined): Promise<ChangeRequestRow> {
  const row = await getChangeRequestRow(ctx, parseId(rawId));
  if (!row || !(await mayViewRequest(ctx, row))) throw new NotFound();
  return row;
}

async function requireAction(ctx: Ctx, permission: string, row: ChangeRequestRow): Promise<void> {
  await requireObjectPermission(ctx, CHANGE_REQUEST_TYPE, actionOf(permission), snapshotChangeRequest(ctx, row));
}

async function createChangeRequest(ctx: Ctx, input: CreateInput): Promise<number> {
  const branch = await findBranch(ctx, input.branch);
  // A branch the caller cannot view is answered as one that does not exist.
  if (!branch || !(await branchAccess(ctx)).mayView(branch))
    throw ValidationError.field('branch', `Branch ${input.branch} does not exist.`);
  // Asking for an automatic merge is asking for a merge: it needs the right to write the branch.
  if (input.auto_merge) await requireBranchWrite(ctx, branch);
  if (branch.status !== 'ready')
    throw ValidationError.field(
      'branch',
      `Branch "${branch.name}" is ${branch.status}; a change request needs a ready branch.`,
    );
  const existing = await findChangeRequestForBranch(ctx, branch.id);
  if (existing)
    throw ValidationError.field('branch', `Branch "${branch.name}" already has a change request (#${existing.id}).`);
  const problem = windowProblem(input.scheduled_start ?? null, input.scheduled_end ?? null);
  if (problem) throw ValidationError.field('scheduled_end', problem);
  const now = nowIso(ctx);
  const row = await insertChangeRequest(ctx, {
    branch_id: branch.id,
    branch_name: branch.name,
    branch_deleted: 0,
    title: input.title?.trim() || branch.name,
    description: input.description ?? '',
    ref: input.ref ?? '',
    status: 'draft',
    priority: input.priority ?? 'medium',
    requester_id: ctx.user?.id ?? null,
    scheduled_start: input.scheduled_start ? new Date(input.scheduled_start).toISOString() : null,
    scheduled_end: input.scheduled_end ? new Date(input.scheduled_end).toISOString() : null,
    auto_merge: fromBool(input.auto_merge ?? false),
    comments: input.comments ?? '',
    custom_fields: JSON.stringify(input.custom_fields ?? {}),
    approved: 0,
    gates_cleared: 0,
    has_conflicts: 0,
    digest: await branchDigest(ctx, branch.id),
    created: now,
    last_updated: now,
  });
  if (input.tags !== undefined) await setTags(ctx, CHANGE_REQUEST_TYPE, row.id, input.tags);
  // A change window is an instant at which time moves the gate: the gate's clock reads its next one again.
  if (row.scheduled_start !== null || row.scheduled_end !== null) timeMoved(ctx);
  await recordChange(ctx, {
    action: 'create',
    objectType: CHANGE_REQUEST_TYPE,
    objectId: row.id,
    repr: displayOfChangeRequest(row),
    prechange: null,
    postchange: snapshotChangeRequest(ctx, row),
  });
  // Trigger 1: the request is created.
  await requestRefresh(ctx, row.id, { rematch: true, checks: true });
  await ctx.flushBeforeCommit();
  return row.id;
}

async function updateFields(ctx: Ctx, id: number, input: UpdateInput): Promise<void> {
  const before = (await getChangeRequestRow(ctx, id))!;
  const iso = (v: string | null | undefined) =>
    v === undefined ? undefined : v === null ? null : new Date(v).toISOString();
  const start = iso(input.scheduled_start);
  const end = iso(input.scheduled_end);
  const problem = windowProblem(
    start === undefined ? before.scheduled_start : start,
    end === undefined ? before.scheduled_end : end,
  );
  if (problem) throw ValidationError.field('scheduled_end', problem);
  if (input.auto_merge && before.auto_merge !== 1 && before.branch_id !== null) {
    const branch = await findBranch(ctx, before.branch_id);
    if (branch) await requireBranchWrite(ctx, branch);
  }
  await updateChangeRequest(ctx, before, {
    title: input.title === undefined ? undefined : input.title.trim() || before.branch_name,
    description: input.description,
    ref: input.ref,
    priority: input.priority,
    scheduled_start: start,
    scheduled_end: end,
    auto_merge: input.auto_merge === undefined ? undefined : fromBool(input.auto_merge),
    comments: input.comments,
    custom_fields: input.custom_fields === undefined ? undefined : JSON.stringify(input.custom_fields),
  });
  if (input.tags !== undefined) await setTags(ctx, CHANGE_REQUEST_TYPE, id, input.tags);
  if (start !== undefined || end !== undefined) timeMoved(ctx);
  // Policies are matched from the branch as a reader matches them (kept between writes of the
  // branch, so this reads nothing more), which lets the answer reuse the gate the refresh computed.
  await requestRefresh(ctx, id);
  await ctx.flushBeforeCommit();
}

const ACTION_SUMMARIES: Record<LifecycleAction, string> = {
  submit: 'Submit a draft for review: policies are matched, outstanding reviewers notified, checks run',
  'return-to-draft': 'Pull a request under review back to draft (reviews are kept)',
  abandon: 'Abandon an open change request',
  reopen: 'Reopen an abandoned change request (it lands on draft)',
};

export function registerChangeRequestRoutes(host: Host): void {
  const path = MODELS.changeRequest.path;
  registerResource(host.routes, {
    tag: 'change-control',
    objectType: CHANGE_REQUEST_TYPE,
    path,
    output: changeRequestOutput,
    list: changeRequestList,
    // Who may view a request is judged on its stored fields (`snapshotChangeRequest`): in SQL for
    // the list, in code for one request, the same answer.
    appliesViewGrant: true,
    get: presentedById(async (ctx, id) => {
      const row = await keptChangeRequestRow(ctx, id);
      return (await mayViewRequest(ctx, row)) ? row : undefined;
    }, presentChangeRequest),
    ownChangelog: true,
    create: { body: createBody, run: createChangeRequest },
    update: {
      body: updateBody,
      put: putBody,
      run: async (ctx, existing, input: UpdateInput) => updateFields(ctx, existing.id, input),
    },
    remove: async (ctx, existing) => {
      const row = (await getChangeRequestRow(ctx, existing.id))!;
      // Its reviews go with it: someone else's review is a record nobody but its reviewer removes.
      const others = await reviewsByOthers(ctx, row.id, ctx.user?.id ?? null);
      if (others > 0)
        throw new Conflict(
          `Change request #${row.id} carries ${others} review${others === 1 ? '' : 's'} by others, and a review is a record only its reviewer removes; abandon the request instead.`,
        );
      await deleteChangeRequestRow(ctx, row.id);
      await recordChange(ctx, {
        action: 'delete',
        objectType: CHANGE_REQUEST_TYPE,
        objectId: row.id,
        repr: displayOfChangeRequest(row),
        prechange: snapshotChangeRequest(ctx, row),
        postchange: null,
      });
    },
  });

  const emptyBody = z.union([z.looseObject({}), z.undefined()]);
  for (const action of LIFECYCLE_ACTIONS) {
    const permission = LIFECYCLE[action].permission;
    host.routes.add({
      method: 'POST',
      path: `${path}:id/${action}/`,
      access: { permission },
      summary: ACTION_SUMMARIES[action],
      tag: 'change-control',
      body: emptyBody,
      response: changeRequestOutput,
      handler: async ({ ctx, params }) => {
        const row = await viewableRow(ctx, params.id);
        await requireAction(ctx, permission, row);
        const after = await applyLifecycleAction(ctx, action, row);
        await ctx.flushBeforeCommit();
        return presentChangeRequest(ctx, (await getChangeRequestRow(ctx, after.id))!);
      },
    });
  }

  host.routes.add({
    method: 'POST',
    path: `${path}:id/run-checks/`,
    access: { permission: PERMISSIONS.reportCheck },
    summary:
      'Re-run checks: run the registered checks of the request now (refresh trigger 8); check_run says, per check, whether it ran or why not',
    tag: 'change-control',
    body: emptyBody,
    response: runChecksResult,
    handler: async ({ ctx, params }) => {
      const row = await viewableRow(ctx, params.id);
      await requireRunChecks(ctx, row);
      if (!isOpen(row.status)) throw new Conflict(`Cannot re-run checks of a change request that is ${row.status}.`);
      await requestRefresh(ctx, row.id, { rematch: true, checks: true });
      await ctx.flushBeforeCommit();
      const governing = await attachedPolicies(ctx, row.id);
      const check_run = checkRunReport({
        declared: declaredFor(ctx, governing),
        registered: runtime(ctx.host).registry.all(),
        results: new Map((await checkRowsOf(ctx, row.id)).map((c) => [c.name, c.status])),
        policies: governing.map((g) => ({ name: g.policy.name, checks: g.policy.checks })),
        config: ctx.host.config,
      });
      return { ...(await presentChangeRequest(ctx, (await getChangeRequestRow(ctx, row.id))!)), check_run };
    },
  });

  host.routes.add({
    method: 'POST',
    path: `${path}:id/override/`,
    access: { permission: PERMISSIONS.mergeBranch },
    summary:
      'Accountable override: merge a request the gate refuses, giving a reason (needs change_control.override_gate on the request, or the window override when only the window blocks, and branching.merge_branch); the reason, the person and the overridden blocking reason are recorded and change_request_overridden fires',
    tag: 'change-control',
    body: changeRequestOverride,
    response: changeRequestOutput,
    handler: async ({ ctx, params, body }) => {
      const row = await viewableRow(ctx, params.id);
      const branch = row.branch_id === null ? undefined : await findBranch(ctx, row.branch_id);
      // A merge: branching.merge_branch for the branch (owning it is not asked).
      if (branch) await requireObjectPermission(ctx, BRANCH_TYPE, 'merge', presentBranch(ctx, branch));
      const after = await overrideGate(ctx, row, body.reason, body.acknowledge_conflicts === true);
      await ctx.flushBeforeCommit();
      return presentChangeRequest(ctx, after);
    },
  });

  host.routes.add({
    method: 'GET',
    path: `${path}:id/evaluation/`,
    access: { permission: `${CHANGE_REQUEST_TYPE.split('.')[0]}.view_changerequest` },
    summary:
      'The approval panel as data: per policy and rule, counted approvals, who may approve, stale reviews, rejections and reasons',
    tag: 'change-control',
    response: evaluationOutput,
    handler: async ({ ctx, params }) => {
      const row = await viewableRow(ctx, params.id);
      return presentEvaluation(ctx, row, await computeGate(ctx, row, { rematch: true }));
    },
  });
}
