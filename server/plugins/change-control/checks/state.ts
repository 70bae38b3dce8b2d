import type { Ctx } from '../../../host';
import { branchDigest } from '../../branching';
import { ccDb } from '../db/database';
import type { MergeCheckRow } from '../db/tables';
import type { GoverningPolicy } from '../evaluation/load';
import { runtime } from '../runtime';
import { clearsGate, declaredChecks, type DeclaredCheck } from './declared';

/** What the gate reads of a stored check: its key, how it is written, its result and the digest it ran on. */
export type CheckFacts = Pick<MergeCheckRow, 'name' | 'label' | 'kind' | 'status' | 'summary' | 'digest'>;

/** A declared check with its stored result (if any) and whether it blocks the merge. */
export interface CheckState extends DeclaredCheck {
  row: CheckFacts | undefined;
  /** A reported result for another digest than the branch's now. */
  outdated: boolean;
  blocks: boolean;
}

/** Whether a stored result ran on another digest than `current` (registered results carry none: refreshes keep them current). */
export function isOutdated(row: Pick<MergeCheckRow, 'digest'> | undefined, current: string | null): boolean {
  return row !== undefined && row.digest !== null && current !== null && row.digest !== current;
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
      governing.map((g) => ({ checks: g.policy.checks, enforcement: g.policy.enforcement, checkSettings: g.policy.checkSettings })),
    );
    declaredByGoverning.set(governing, declared);
  }
  return declared;
}

export async function checkRowsOf(ctx: Ctx, changeRequestId: number): Promise<MergeCheckRow[]> {
  return ccDb(ctx).selectFrom('cc_merge_checks').selectAll().where('change_request_id', '=', changeRequestId).orderBy('id').execute();
}

/**
 * The checks a request carries under the given policies, each with its stored row. A required
 * check blocks unless its row says success or skipped; one with no row is treated as not run
 * and blocks; an advisory check never blocks.
 */
/** The gate's view of a request's stored checks (only the columns it reads). */
export async function checkFactsOf(ctx: Ctx, changeRequestId: number): Promise<CheckFacts[]> {
  return ccDb(ctx).selectFrom('cc_merge_checks').select(['name', 'label', 'kind', 'status', 'summary', 'digest']).where('change_request_id', '=', changeRequestId).execute();
}

/** The digest of a request's branch now (the last one cached once the branch is gone). */
async function currentDigestOf(ctx: Ctx, changeRequestId: number): Promise<string | null> {
  const cr = await ccDb(ctx).selectFrom('cc_change_requests').select(['branch_id', 'digest']).where('id', '=', changeRequestId).executeTakeFirst();
  if (!cr) return null;
  return cr.branch_id === null ? cr.digest : branchDigest(ctx, cr.branch_id);
}

/**
 * The checks a request carries, each with its stored row. A required check blocks unless its
 * row says success or skipped for the branch's current digest: a result for an older digest is
 * outdated and blocks.
 */
export async function checkStates(ctx: Ctx, changeRequestId: number, governing: readonly GoverningPolicy[], stored?: readonly CheckFacts[], digest?: string | null): Promise<CheckState[]> {
  const rows = new Map((stored ?? (await checkFactsOf(ctx, changeRequestId))).map((r) => [r.name, r]));
  const current = digest !== undefined ? digest : await currentDigestOf(ctx, changeRequestId);
  return declaredFor(ctx, governing).map((d) => {
    const row = rows.get(d.name);
    const outdated = isOutdated(row, current);
    return { ...d, row, outdated, blocks: d.required && (!clearsGate(row?.status) || outdated) };
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
  if (state.outdated && clearsGate(state.row.status)) return `Required check "${state.label}" ${STATUS_WORDS[state.row.status]} on an earlier version of the branch; it must report on the current one.`;
  const summary = state.row.summary.trim().replace(/[.\s]+$/, '');
  return `Required check "${state.label}" ${STATUS_WORDS[state.row.status]}${summary ? ` (${summary})` : ''}.`;
}

/**
 * Whether the stored rows lag what the request is declared to carry: a declared check without
 * a row (a policy newly naming a check, a configuration declaring one), a row of the other kind
 * (a check registered or unregistered since), or the row of a registered check the request no longer carries. A
 * refresh then runs the checks, so a pipeline always finds the row of a check it must report.
 */
export function checkRowsOutOfDate(ctx: Ctx, stored: readonly Pick<MergeCheckRow, 'name' | 'kind'>[], governing: readonly GoverningPolicy[]): boolean {
  const rows = new Map(stored.map((r) => [r.name, r]));
  const declared = declaredFor(ctx, governing);
  for (const d of declared) {
    const row = rows.get(d.name);
    if (!row || (d.registered ? row.kind !== 'registered' : row.kind !== 'reported')) return true;
  }
  const names = new Set(declared.map((d) => d.name));
  return [...rows.values()].some((r) => r.kind === 'registered' && !names.has(r.name));
}
