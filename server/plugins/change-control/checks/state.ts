import { identitiesOf, type Ctx, type Identity } from '../../../host';
import { DIGEST_TABLES } from '../../branching';
import { requestDigest } from '../change-requests/content';
import { getChangeRequestRow } from '../change-requests/repository';
import type { ChangeRequestRow, MergeCheckRow } from '../db/tables';
import type { GoverningPolicy } from '../evaluation/load';
import { runtime } from '../runtime';
import { clearsGate, declaredChecks, reporterAdmitted, type DeclaredCheck } from './declared';
import { checkFactsOf, type CheckFacts } from './repository';

export { checkFactsOf, checkRowsOf, type CheckFacts } from './repository';

/** A declared check with its stored result (if any) and whether it blocks the merge. */
export interface CheckState extends DeclaredCheck {
  row: CheckFacts | undefined;
  /** A reported result for another digest than the branch's now, or from someone the declared reporter does not admit. */
  outdated: boolean;
  /** The passing result came from someone the declared reporter does not admit. */
  byAnotherReporter: boolean;
  blocks: boolean;
}

/** Whether a stored result ran on another digest than `current` (registered results carry none: refreshes keep them current). */
export function isOutdated(row: Pick<MergeCheckRow, 'digest'> | undefined, current: string | null): boolean {
  return row !== undefined && row.digest !== null && current !== null && row.digest !== current;
}

/**
 * Whether a passing result came from someone the check's declared reporter does not admit: a
 * reporter declared (or changed) after the result was reported makes it outdated, so it no
 * longer clears the gate. `reporters`: the identities of those who reported (`reportersOf`).
 */
export function fromAnotherReporter(
  declared: Pick<DeclaredCheck, 'reporters'> | undefined,
  row: Pick<MergeCheckRow, 'status' | 'reported_by'> | undefined,
  reporters: ReadonlyMap<number, Identity>,
): boolean {
  if (!row || !declared?.reporters?.length || !clearsGate(row.status)) return false;
  const who = row.reported_by === null ? undefined : reporters.get(row.reported_by);
  return who === undefined || !reporterAdmitted(declared.reporters, who);
}

/** Who reported the results of the checks that declare their reporter (none read when no check declares one). */
export async function reportersOf(
  ctx: Ctx,
  declared: readonly DeclaredCheck[],
  rows: Iterable<Pick<MergeCheckRow, 'name' | 'reported_by'>>,
): Promise<Map<number, Identity>> {
  const restricted = new Set(declared.filter((d) => d.reporters?.length).map((d) => d.name));
  if (restricted.size === 0) return new Map();
  const ids = [...rows].flatMap((r) => (restricted.has(r.name) && r.reported_by !== null ? [r.reported_by] : []));
  return identitiesOf(ctx, ids);
}

export function policyCheckNames(governing: readonly GoverningPolicy[]): string[] {
  return governing.flatMap((g) => g.policy.checks);
}

const declaredByGoverning = new WeakMap<readonly GoverningPolicy[], DeclaredCheck[]>();

/** The checks a request carries under these governing policies (reused for the same list). */
export function declaredFor(ctx: Ctx, governing: readonly GoverningPolicy[]): DeclaredCheck[] {
  let declared = declaredByGoverning.get(governing);
  if (!declared) {
    declared = declaredChecks(
      runtime(ctx.host).registry,
      ctx.host.config,
      governing.map((g) => ({
        checks: g.policy.checks,
        enforcement: g.policy.enforcement,
        checkSettings: g.policy.checkSettings,
      })),
    );
    declaredByGoverning.set(governing, declared);
  }
  return declared;
}

/** A request's row and the digest of its branch now (the last one cached once the branch is gone). */
export interface CheckedRequest {
  cr: ChangeRequestRow;
  digest: string | null;
}

/** What a checked request is read from besides its own row: its branch's data and digest, and the users its row names (a delete clears them by cascade). */
const CHECKED_REQUEST_TABLES: readonly string[] = ['users', ...DIGEST_TABLES];

/**
 * The request whose checks are read or written, with its current digest: kept in the read memo
 * while neither the request nor its branch's changes are written, so one report (finding the
 * check, binding the result, refreshing the gate, answering) reads them once. Shared: never change it.
 */
export function checkedRequest(ctx: Ctx, changeRequestId: number): Promise<CheckedRequest | undefined> {
  return ctx.host.readMemo.get(
    ctx,
    `cc-checked-request|${changeRequestId}`,
    async () => {
      const cr = await getChangeRequestRow(ctx, changeRequestId);
      return cr && { cr, digest: await requestDigest(ctx, cr) };
    },
    ['cc_change_requests', ...CHECKED_REQUEST_TABLES],
  );
}

/**
 * The checks a request carries, each with its stored row. A required check blocks unless its
 * row says success or skipped for the branch's current digest: a result for an older digest is
 * outdated and blocks.
 */
export async function checkStates(
  ctx: Ctx,
  changeRequestId: number,
  governing: readonly GoverningPolicy[],
  stored?: readonly CheckFacts[],
  digest?: string | null,
): Promise<CheckState[]> {
  const rows = new Map((stored ?? (await checkFactsOf(ctx, changeRequestId))).map((r) => [r.name, r]));
  const current = digest !== undefined ? digest : ((await checkedRequest(ctx, changeRequestId))?.digest ?? null);
  const declared = declaredFor(ctx, governing);
  const reporters = await reportersOf(ctx, declared, rows.values());
  return declared.map((d) => {
    const row = rows.get(d.name);
    const byAnotherReporter = fromAnotherReporter(d, row, reporters);
    const outdated = isOutdated(row, current) || byAnotherReporter;
    return { ...d, row, outdated, byAnotherReporter, blocks: d.required && (!clearsGate(row?.status) || outdated) };
  });
}

/** The words for one blocking check. */
const STATUS_WORDS: Record<MergeCheckRow['status'], string> = {
  pending: 'is pending',
  running: 'is still running',
  failure: 'failed',
  error: 'errored',
  success: 'passed',
  skipped: 'was skipped',
};

export function blockingReason(state: CheckState): string {
  if (!state.row) return `Required check "${state.label}" has not run.`;
  if (state.byAnotherReporter)
    return `Required check "${state.label}" ${STATUS_WORDS[state.row.status]} by someone other than its declared reporter; the reporter must report it.`;
  if (state.outdated && clearsGate(state.row.status))
    return `Required check "${state.label}" ${STATUS_WORDS[state.row.status]} on an earlier version of the branch; it must report on the current one.`;
  const summary = state.row.summary.trim().replace(/[.\s]+$/, '');
  return `Required check "${state.label}" ${STATUS_WORDS[state.row.status]}${summary ? ` (${summary})` : ''}.`;
}

/**
 * Whether the stored rows lag what the request is declared to carry: a declared check without
 * a row (a policy newly naming a check, a configuration declaring one), a row of the other kind
 * (a check registered or unregistered since), or the row of a registered check the request no longer carries. A
 * refresh then runs the checks, so a pipeline always finds the row of a check it must report.
 */
export function checkRowsOutOfDate(
  ctx: Ctx,
  stored: readonly Pick<MergeCheckRow, 'name' | 'kind'>[],
  governing: readonly GoverningPolicy[],
): boolean {
  const rows = new Map(stored.map((r) => [r.name, r]));
  const declared = declaredFor(ctx, governing);
  for (const d of declared) {
    const row = rows.get(d.name);
    if (!row || (d.registered ? row.kind !== 'registered' : row.kind !== 'reported')) return true;
  }
  const names = new Set(declared.map((d) => d.name));
  return [...rows.values()].some((r) => r.kind === 'registered' && !names.has(r.name));
}

/** A required check whose result does not count: reported on an earlier version (or by another reporter), or never reported in time. */
export interface StaleCheck {
  name: string;
  label: string;
  reason: 'outdated' | 'timed_out';
}

/** The required checks that block because their result is outdated or the timeout's (what a request's row says). */
export function staleChecksOf(states: readonly CheckState[]): StaleCheck[] {
  const out: StaleCheck[] = [];
  for (const c of states) {
    if (!c.blocks || !c.row) continue;
    if (c.row.timed_out === 1) out.push({ name: c.name, label: c.label, reason: 'timed_out' });
    else if (c.outdated) out.push({ name: c.name, label: c.label, reason: 'outdated' });
  }
  return out;
}
