import type { z } from 'zod';
import { mergeCheck as checkOutput, mergeCheckCreate, mergeCheckReport } from '../../../../contract/api/change-control';
import { recordChange, type Ctx, PermissionDenied, ValidationError, type Host } from '../../../host';
import { registerResource } from '../../../host/http';
import { checkList } from './list';
import { requestRefresh } from '../change-requests/refresh';
import { changeRequestNamedInBody } from '../change-requests/repository';
import { mayViewRequestId } from '../change-requests/visibility-repository';
import { requestDigest } from '../change-requests/content';
import { attachedPolicies } from '../policies/governing';
import { reporterRefusal } from './reporter';
import { reportCheckResult } from './report-result';
import { checkRow, checkRowNamed, deleteCheck, insertCheck } from './repository';
import { declaredFor } from './state';
import { nowIso } from '../db/database';
import { MERGE_CHECK_TYPE, MODELS } from '../names';
import { presentCheckRows, snapshotCheck, type CheckOut } from './present';

type ReportInput = z.infer<typeof mergeCheckReport>;
type CreateInput = z.infer<typeof mergeCheckCreate>;

/** A check, presented, when the caller may view its change request (otherwise it does not exist for them). */
async function getCheck(ctx: Ctx, id: number): Promise<CheckOut | undefined> {
  const row = await checkRow(ctx, id);
  if (!row || !(await mayViewRequestId(ctx, row.change_request_id))) return undefined;
  return (await presentCheckRows(ctx, [row]))[0];
}

/** A reporter's write (status, summary, details_url; `required` and `change_request` are read-only and ignored when sent). */
async function reportResult(ctx: Ctx, existing: CheckOut, input: ReportInput): Promise<void> {
  const outcome = await reportCheckResult(ctx, (await checkRow(ctx, existing.id))!, input);
  if (outcome.refused) throw new PermissionDenied(outcome.refused);
}

async function createCheck(ctx: Ctx, input: CreateInput): Promise<number> {
  const cr = await changeRequestNamedInBody(ctx, input.change_request);
  const refusal = await reporterRefusal(
    ctx,
    declaredFor(ctx, await attachedPolicies(ctx, cr.id)).find((d) => d.name === input.name),
  );
  if (refusal) throw new PermissionDenied(refusal);
  const clash = await checkRowNamed(ctx, cr.id, input.name);
  if (clash)
    throw ValidationError.field(
      'name',
      `This change request already has a check named "${input.name}" (check ${clash.id}).`,
    );
  const now = nowIso(ctx);
  const status = input.status ?? 'pending';
  const row = await insertCheck(ctx, {
    change_request_id: cr.id,
    name: input.name,
    label: input.label || input.name,
    kind: 'reported',
    status,
    summary: input.summary ?? '',
    details_url: input.details_url ?? '',
    completed: status === 'pending' ? null : now,
    digest: status === 'pending' ? null : await requestDigest(ctx, cr),
    reported_by: status === 'pending' ? null : (ctx.user?.id ?? null),
    created: now,
    last_updated: now,
  });
  await recordChange(ctx, {
    action: 'create',
    objectType: MERGE_CHECK_TYPE,
    objectId: row.id,
    repr: row.name,
    prechange: null,
    postchange: snapshotCheck(ctx, row),
  });
  await requestRefresh(ctx, cr.id, { rematch: false });
  await ctx.flushBeforeCommit();
  return row.id;
}

/** `checks/`: list and read checks; pipelines report results with PATCH (change_mergecheck). */
export function registerCheckRoutes(host: Host): void {
  registerResource(host.routes, {
    tag: 'change-control',
    objectType: MERGE_CHECK_TYPE,
    path: MODELS.mergeCheck.path,
    output: checkOutput,
    list: checkList,
    get: getCheck,
    ownChangelog: true,
    create: { body: mergeCheckCreate, run: createCheck },
    update: { body: mergeCheckReport, put: mergeCheckReport, run: reportResult },
    remove: async (ctx, existing) => {
      // Removing a row never opens the gate: a required check with no row blocks as not run.
      const row = (await checkRow(ctx, existing.id))!;
      await deleteCheck(ctx, row);
      await recordChange(ctx, {
        action: 'delete',
        objectType: MERGE_CHECK_TYPE,
        objectId: row.id,
        repr: row.name,
        prechange: snapshotCheck(ctx, row),
        postchange: null,
      });
      await requestRefresh(ctx, row.change_request_id, { rematch: false });
    },
  });
}
