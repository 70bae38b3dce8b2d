import { type ApiObject, type Ctx, type Identity, objectUrl } from '../../../host';
import type { MergeCheck } from '../../../../contract/api/change-control';
import type { MergeCheckRow } from '../db/tables';
import { parseJson } from '../db/database';
import { attachedPolicies } from '../policies/governing';
import { checkedRequest, declaredFor, fromAnotherReporter, isOutdated, reportersOf } from './state';
import { MODELS } from '../names';
import { clearsGate, type DeclaredCheck } from './declared';
import { visibleCheckObjects } from './visible-objects';

/**
 * What the changelog (and search) keeps of a check: its stored fields but the objects it names,
 * which are shown only to a caller who may view each (`visible-objects.ts`).
 */
export function snapshotCheck(
  ctx: Ctx,
  row: MergeCheckRow,
): Omit<MergeCheck, 'required' | 'blocks_merge' | 'outdated' | 'objects'> {
  // One literal (no spreads of objects built for it): a check report snapshots and presents its check several times.
  return {
    id: row.id,
    url: objectUrl(ctx, MODELS.mergeCheck.path, row.id),
    display: row.label || row.name,
    change_request: row.change_request_id,
    name: row.name,
    label: row.label,
    status: row.status,
    summary: row.summary,
    details_url: row.details_url,
    completed: row.completed,
    digest: row.digest,
    reported_by: row.reported_by,
    source: parseJson<MergeCheck['source']>(row.source, null),
    created: row.created,
    last_updated: row.last_updated,
  };
}

/**
 * A check as the API shows it. `required` and `blocks_merge` come from what the request is
 * declared to carry (registry, configuration, policies), never from the row: a row nothing
 * declares is advisory.
 */
export function presentCheck(
  ctx: Ctx,
  row: MergeCheckRow,
  declared: DeclaredCheck | undefined,
  currentDigest: string | null,
  reporters: ReadonlyMap<number, Identity> = new Map(),
): MergeCheck {
  const required = declared?.required ?? false;
  const outdated = isOutdated(row, currentDigest) || fromAnotherReporter(declared, row, reporters);
  return {
    ...snapshotCheck(ctx, row),
    objects: parseJson<MergeCheck['objects']>(row.objects, []),
    required,
    outdated,
    blocks_merge: required && (!clearsGate(row.status) || outdated),
  };
}

export type CheckOut = MergeCheck & ApiObject;

/** Checks as the API shows them, with `required` and `blocks_merge` from each request's declarations. */
export async function presentCheckRows(ctx: Ctx, rows: readonly MergeCheckRow[]): Promise<CheckOut[]> {
  const declaredByRequest = new Map<number, Map<string, ReturnType<typeof declaredFor>[number]>>();
  const digests = new Map<number, string | null>();
  const reporters = new Map<number, Identity>();
  for (const crId of new Set(rows.map((r) => r.change_request_id))) {
    const declared = declaredFor(ctx, await attachedPolicies(ctx, crId));
    declaredByRequest.set(crId, new Map(declared.map((d) => [d.name, d])));
    digests.set(crId, (await checkedRequest(ctx, crId))?.digest ?? null);
    const ofRequest = rows.filter((r) => r.change_request_id === crId);
    for (const [id, who] of await reportersOf(ctx, declared, ofRequest)) reporters.set(id, who);
  }
  const presented = rows.map(
    (row) =>
      presentCheck(
        ctx,
        row,
        declaredByRequest.get(row.change_request_id)?.get(row.name),
        digests.get(row.change_request_id) ?? null,
        reporters,
      ) as CheckOut,
  );
  return visibleCheckObjects(ctx, presented);
}
