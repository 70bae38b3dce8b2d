import { recordChange, type Ctx } from '../../../host';
import { isHttpUrl } from '../../../../contract/api/common';
import type { CheckStatus } from '../../../../contract/api/change-control';
import { nowIso } from '../db/database';
import type { ChangeRequestRow, MergeCheckRow } from '../db/tables';
import type { GoverningPolicy } from '../evaluation/load';
import { MERGE_CHECK_TYPE } from '../names';
import type { DeclaredCheck } from './declared';
import { snapshotCheck } from './present';
import { CheckResult, type CheckView, type RegisteredCheck } from './registry';
import { checkRowsOf, declaredFor } from './state';
import { deleteCheck as deleteCheckRow, insertCheck as insertCheckRow, updateCheckFields } from './repository';
import { BUILTIN_RESULTS, isBuiltin, type BuiltinFacts } from './builtins';
import { buildBuiltinFacts, buildCheckView } from './view';

/** How long one registered check may take before it is recorded as `error`. */
/** A registered check's link is kept only when it is an absolute http(s) URL: clients open it as a link. */
function safeDetailsUrl(url: string): string {
  // Most checks give none (every built-in): no parse, and no exception thrown and caught at each refresh.
  if (url === '') return '';
  return url.length <= 2000 && isHttpUrl(url) ? url : '';
}

export const CHECK_TIMEOUT_MS = 10_000;

/** The objects a registered check names, as stored: well-formed entries only, at most 200. */
function safeObjects(result: CheckResult): CheckResult['objects'] {
  return result.objects
    .filter(
      (o) =>
        o &&
        typeof o.object_type === 'string' &&
        Number.isInteger(o.object_id) &&
        typeof o.object_repr === 'string' &&
        typeof o.problem === 'string',
    )
    .slice(0, 200)
    .map((o) => ({
      object_type: o.object_type.slice(0, 200),
      object_id: o.object_id,
      object_repr: o.object_repr.slice(0, 500),
      problem: o.problem.slice(0, 1000),
    }));
}

/** Runs one registered check; a raise, a wrong answer or a timeout is an `error` result carrying the reason. */
export async function runOneCheck(check: RegisteredCheck, view: CheckView): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = await Promise.race([
      Promise.resolve().then(() => check.fn(view)),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`did not finish within ${CHECK_TIMEOUT_MS / 1000} s`)),
          CHECK_TIMEOUT_MS,
        );
      }),
    ]);
    if (!(answer instanceof CheckResult)) {
      return new CheckResult(
        'error',
        `Check "${check.name}" returned ${answer === null ? 'null' : typeof answer} instead of a CheckResult.`,
      );
    }
    return answer;
  } catch (err) {
    const text = err instanceof Error ? err.message || err.name : String(err);
    return new CheckResult('error', text.slice(0, 4000));
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** Runs a built-in over the kept facts; a raise is an `error` result carrying the reason, as for any check. */
function runBuiltin(name: keyof typeof BUILTIN_RESULTS, facts: BuiltinFacts): CheckResult {
  try {
    return BUILTIN_RESULTS[name](facts);
  } catch (err) {
    return new CheckResult('error', (err instanceof Error ? err.message || err.name : String(err)).slice(0, 4000));
  }
}

interface Wanted {
  kind: MergeCheckRow['kind'];
  label: string;
  status: CheckStatus;
  summary: string;
  details_url: string;
  /** JSON of the objects the result names; a reported check names none. */
  objects?: string;
}

async function insertCheck(
  ctx: Ctx,
  cr: ChangeRequestRow,
  name: string,
  wanted: Wanted,
  completed: string | null,
): Promise<void> {
  const now = nowIso(ctx);
  const row = await insertCheckRow(ctx, {
    change_request_id: cr.id,
    name,
    ...wanted,
    completed,
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
}

async function updateCheck(
  ctx: Ctx,
  row: MergeCheckRow,
  wanted: Wanted,
  options: { neverReported?: boolean } = {},
): Promise<void> {
  const objects = wanted.objects ?? '[]';
  const resultMoved =
    row.status !== wanted.status ||
    row.summary !== wanted.summary ||
    row.details_url !== wanted.details_url ||
    row.objects !== objects;
  if (!resultMoved && row.label === wanted.label && row.kind === wanted.kind) return;
  const now = nowIso(ctx);
  const completed = options.neverReported ? null : resultMoved ? now : row.completed;
  const after: MergeCheckRow = { ...row, ...wanted, objects, completed, last_updated: now };
  await updateCheckFields(ctx, row, {
    kind: after.kind,
    label: after.label,
    status: after.status,
    summary: after.summary,
    details_url: after.details_url,
    objects,
    completed: after.completed,
    last_updated: now,
    ...(row.status !== after.status ? { timed_out: 0 } : {}),
  });
  await recordChange(ctx, {
    action: 'update',
    objectType: MERGE_CHECK_TYPE,
    objectId: row.id,
    repr: row.name,
    prechange: snapshotCheck(ctx, row),
    postchange: snapshotCheck(ctx, after),
  });
}

async function deleteCheck(ctx: Ctx, row: MergeCheckRow): Promise<void> {
  await deleteCheckRow(ctx, row);
  await recordChange(ctx, {
    action: 'delete',
    objectType: MERGE_CHECK_TYPE,
    objectId: row.id,
    repr: row.name,
    prechange: snapshotCheck(ctx, row),
    postchange: null,
  });
}

/**
 * A refresh of a request's checks: every registered check it carries runs and its result is
 * stored; a reported (external) check is created `pending` when missing and its result is
 * never overwritten or removed by a refresh; the rows of registered checks the request no
 * longer carries are removed (a renamed check starts afresh, without the old one's history).
 * Only a changed result is written, and recorded in the changelog.
 */
export async function runChecks(
  ctx: Ctx,
  cr: ChangeRequestRow,
  governing: readonly GoverningPolicy[],
  options: { registeredOnly?: boolean } = {},
): Promise<void> {
  const declared: DeclaredCheck[] = declaredFor(ctx, governing).filter((d) => !options.registeredOnly || d.registered);
  const rows = new Map((await checkRowsOf(ctx, cr.id)).map((r) => [r.name, r]));
  // The built-ins read counts and the first problems kept per branch; the full list of
  // changes is built only for a check a plugin registered.
  const builtins = new Set(
    declared.flatMap((d) => (d.registered && isBuiltin(d.registered) ? [d.registered.name] : [])),
  );
  const facts: BuiltinFacts | null = builtins.size > 0 ? await buildBuiltinFacts(ctx, cr, builtins) : null;
  const needsView = declared.some((d) => d.registered && !isBuiltin(d.registered));
  const view = needsView ? await buildCheckView(ctx, cr) : null;
  for (const d of declared) {
    const row = rows.get(d.name);
    rows.delete(d.name);
    if (d.registered) {
      const result = isBuiltin(d.registered)
        ? runBuiltin(d.registered.name, facts!)
        : await runOneCheck(d.registered, view!);
      const wanted: Wanted = {
        kind: 'registered',
        label: d.label,
        status: result.status,
        summary: result.summary.slice(0, 4000),
        details_url: safeDetailsUrl(result.detailsUrl),
        objects: JSON.stringify(safeObjects(result)),
      };
      if (row) await updateCheck(ctx, row, wanted);
      else await insertCheck(ctx, cr, d.name, wanted, nowIso(ctx));
    } else if (!row) {
      await insertCheck(
        ctx,
        cr,
        d.name,
        { kind: 'reported', label: d.label, status: 'pending', summary: '', details_url: '' },
        null,
      );
    } else if (row.kind !== 'reported') {
      // Once computed, now nothing computes it (its check is no longer registered): a result
      // the service computed is no report, so it waits for one.
      await updateCheck(
        ctx,
        row,
        { kind: 'reported', label: d.label, status: 'pending', summary: '', details_url: '' },
        { neverReported: true },
      );
    } else if (row.label !== d.label) {
      await updateCheck(ctx, row, {
        kind: 'reported',
        label: d.label,
        status: row.status,
        summary: row.summary,
        details_url: row.details_url,
      });
    }
  }
  if (options.registeredOnly) return;
  for (const leftover of rows.values()) if (leftover.kind === 'registered') await deleteCheck(ctx, leftover);
}
