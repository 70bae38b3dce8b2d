import { type ApiObject, type Ctx, groupsByIds, type Identity, objectUrl } from '../../../host';
import { loadUsers } from '../evaluation/load';
import type { MergeCheck } from '../../../../contract/api/change-control';
import type { MergeCheckRow } from '../db/tables';
import { parseJson, toBool } from '../db/database';
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
): Omit<MergeCheck, 'required' | 'blocks_merge' | 'outdated' | 'reporter' | 'objects'> {
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
    deadline: row.deadline,
    timed_out: toBool(row.timed_out),
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
  names: ReporterNames = EMPTY_NAMES,
): MergeCheck {
  const required = declared?.required ?? false;
  const outdated = isOutdated(row, currentDigest) || fromAnotherReporter(declared, row, reporters);
  return {
    ...snapshotCheck(ctx, row),
    objects: parseJson<MergeCheck['objects']>(row.objects, []),
    required,
    outdated,
    blocks_merge: required && (!clearsGate(row.status) || outdated),
    reporter: reporterNamed(declared, names),
  };
}

/** Users and groups by id, for naming the reporters that policies declare by id. */
export interface ReporterNames {
  users: ReadonlyMap<number, string>;
  groups: ReadonlyMap<number, string>;
}
const EMPTY_NAMES: ReporterNames = { users: new Map(), groups: new Map() };

/** A declared reporter by name: policies name users and groups by id, the configuration by name. */
function reporterNamed(declared: DeclaredCheck | undefined, names: ReporterNames): MergeCheck['reporter'] {
  if (!declared?.reporters?.length) return null;
  const users = new Set<string>();
  const groups = new Set<string>();
  for (const r of declared.reporters) {
    for (const u of r.users) users.add(typeof u === 'number' ? (names.users.get(u) ?? `user ${u}`) : u);
    for (const g of r.groups) groups.add(typeof g === 'number' ? (names.groups.get(g) ?? `group ${g}`) : g);
  }
  return { users: [...users], groups: [...groups] };
}

/** The names of the users and groups these declarations name by id (nothing read when none does). */
async function reporterNames(ctx: Ctx, declared: Iterable<DeclaredCheck>): Promise<ReporterNames> {
  const userIds = new Set<number>();
  const groupIds = new Set<number>();
  for (const d of declared)
    for (const r of d.reporters ?? []) {
      for (const u of r.users) if (typeof u === 'number') userIds.add(u);
      for (const g of r.groups) if (typeof g === 'number') groupIds.add(g);
    }
  if (userIds.size === 0 && groupIds.size === 0) return EMPTY_NAMES;
  return {
    users: new Map([...(await loadUsers(ctx, userIds)).values()].map((u) => [u.id, u.username])),
    groups: new Map((await groupsByIds(ctx, groupIds)).map((g) => [g.id, g.name])),
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
  const names = await reporterNames(
    ctx,
    [...declaredByRequest.values()].flatMap((m) => [...m.values()]),
  );
  const presented = rows.map(
    (row) =>
      presentCheck(
        ctx,
        row,
        declaredByRequest.get(row.change_request_id)?.get(row.name),
        digests.get(row.change_request_id) ?? null,
        reporters,
        names,
      ) as CheckOut,
  );
  return visibleCheckObjects(ctx, presented);
}
