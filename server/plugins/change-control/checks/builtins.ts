import type { Config, Logger } from '../../../host';
import type { CheckObject } from '../../../../contract/api/change-control';
import { BUILTIN_CHECKS, type BuiltinCheck } from '../../../../contract/api/change-control';
import { CheckResult, CheckScope, type CheckRegistry, type CheckView, type RegisteredCheck } from './registry';

/** What the `mergeable` check knows of the catalogue: whether an object type can still be written on main. */
export interface KnownTypes {
  has(name: string): boolean;
}

/** How many objects a result names at most (what a registered check's result keeps). */
export const OBJECTS_KEPT = 200;

/**
 * What the built-in checks read: counts and the first few problems, from the state the service
 * keeps per branch (`view.ts`: `buildBuiltinFacts`), never the whole list of changes. The same
 * facts come from a full view (`factsOfView`), which is what a built-in run as a plain check
 * function reads.
 */
export interface BuiltinFacts {
  readonly branch: CheckView['branch'];
  /** How many changes the branch holds. */
  readonly changes: number;
  /** The changes conflicting with main (none unless the branch is ready): how many, and the first `OBJECTS_KEPT`. */
  readonly conflicts: { readonly count: number; readonly first: readonly CheckObject[] };
  /** The objects the merge could not apply now (none unless the branch is ready): how many, and the first `OBJECTS_KEPT`. */
  readonly problems: { readonly count: number; readonly first: readonly CheckObject[] };
  /** Comment threads (root comments): how many, and how many are open. */
  readonly threads: { readonly total: number; readonly open: number };
}

/** The facts of a full view (the view's changes carry `conflicts` only while the branch is ready). */
export function factsOfView(cr: CheckView, types: KnownTypes): BuiltinFacts {
  const ready = cr.branch?.status === 'ready';
  const conflicting = cr.changes.filter((c) => c.conflicts !== null);
  const problems: CheckObject[] = [];
  if (ready) {
    for (const c of cr.changes) {
      const ref = { object_type: c.object_type, object_id: c.object_id, object_repr: c.object_repr };
      if (!types.has(c.object_type))
        problems.push({ ...ref, problem: `Its object type ${c.object_type} is no longer in the catalogue.` });
      else if (c.action === 'create' && c.current !== null)
        problems.push({ ...ref, problem: 'Main already holds an object with this id.' });
      else if (c.action === 'update' && c.current === null)
        problems.push({ ...ref, problem: 'Main deleted it since the branch changed it.' });
      else if (c.conflicts) problems.push({ ...ref, problem: `Conflicts with main on ${c.conflicts.join(', ')}.` });
    }
  }
  return {
    branch: cr.branch,
    changes: cr.changes.length,
    conflicts: {
      count: conflicting.length,
      first: conflicting.slice(0, OBJECTS_KEPT).map((c) => ({
        object_type: c.object_type,
        object_id: c.object_id,
        object_repr: c.object_repr,
        problem: conflictProblem(c.action, c.conflicts ?? []),
      })),
    },
    problems: { count: problems.length, first: problems.slice(0, OBJECTS_KEPT) },
    threads: { total: cr.threads.length, open: cr.threads.filter((t) => !t.resolved).length },
  };
}

/** How a conflicting change reads in a check's objects. */
export function conflictProblem(action: string, attributes: readonly string[]): string {
  return attributes.length > 0
    ? `Conflicts with main on ${attributes.join(', ')}.`
    : `Its ${action} conflicts with main.`;
}

/**
 * `mergeable`: the branch's merge as a dry run. Each change is taken against main's object as
 * it stands now, as the merge would apply it, and nothing is written. It fails listing every
 * object that would conflict (attributes main and the branch both changed, to different
 * values; an object main deleted that the branch updates, or updated that the branch deletes)
 * or fail to apply (a created object whose id main already holds; an object type the
 * catalogue no longer knows), or when the branch is not ready to merge.
 */
function mergeable(cr: BuiltinFacts): CheckResult {
  if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
  if (cr.branch.status !== 'ready')
    return CheckResult.failed(`Branch "${cr.branch.name}" is ${cr.branch.status}; only a ready branch can merge.`);
  const { count: n, first: objects } = cr.problems;
  if (n === 0)
    return new CheckResult('success', `The merge applies cleanly (${count(cr.changes, 'change', 'changes')}).`);
  // The summary counts; the objects are named in `objects`, which each caller sees filtered.
  return new CheckResult('failure', `${count(n, 'object', 'objects')} would conflict or fail to apply.`, '', [
    ...objects,
  ]);
}

/** `mergeable` as a plain check function over a full view. */
export function mergeableCheck(types: KnownTypes): (cr: CheckView) => CheckResult {
  return (cr) => mergeable(factsOfView(cr, types));
}

/**
 * The built-in checks. They are registered with scope POLICY (they apply only when a
 * policy names them), as far as `enable_builtin_checks` makes them available; each reports
 * `skipped` on a change request whose branch is gone.
 */
const BRANCH_GONE = 'The branch is gone.';

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

export const MERGEABLE_LABEL = 'Merges cleanly';

/** Each built-in over the facts. */
export const BUILTIN_RESULTS: Record<BuiltinCheck, (cr: BuiltinFacts) => CheckResult> = {
  'has-changes': (cr) => {
    if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
    if (cr.changes === 0) return CheckResult.failed('The branch has nothing to merge.');
    return CheckResult.passed(`${count(cr.changes, 'change', 'changes')} to merge.`);
  },
  'no-conflicts': (cr) => {
    if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
    const { count: n, first } = cr.conflicts;
    if (n === 0) return CheckResult.passed('No conflicts with main.');
    return new CheckResult('failure', `${count(n, 'change conflicts', 'changes conflict')} with main.`, '', [...first]);
  },
  'not-stale': (cr) => {
    if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
    if (cr.branch.stale) {
      const since = cr.branch.last_sync
        ? `last synced ${cr.branch.last_sync}`
        : `created ${cr.branch.created} and never synced`;
      return CheckResult.failed(`The branch is too far behind main to sync safely (${since}).`);
    }
    return CheckResult.passed('The branch is recent enough to sync safely.');
  },
  'threads-resolved': (cr) => {
    if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
    if (cr.threads.open > 0)
      return CheckResult.failed(`${count(cr.threads.open, 'comment thread is', 'comment threads are')} still open.`);
    return CheckResult.passed(cr.threads.total === 0 ? 'No comment threads.' : 'Every comment thread is resolved.');
  },
  mergeable,
};

const LABELS: Record<BuiltinCheck, string> = {
  'has-changes': 'Branch has changes',
  'no-conflicts': 'No conflicts with main',
  'not-stale': 'Branch not stale',
  'threads-resolved': 'Comment threads resolved',
  mergeable: MERGEABLE_LABEL,
};

/** Whether a registered check is one of the built-ins (run over the facts, not a full view). */
export function isBuiltin(check: RegisteredCheck): check is RegisteredCheck & { name: BuiltinCheck } {
  return check.builtin && Object.hasOwn(BUILTIN_RESULTS, check.name);
}

/** The built-ins `enable_builtin_checks` makes available; unknown names are logged and skipped. */
export function availableBuiltins(config: Config, log: Logger): BuiltinCheck[] {
  const setting = config.change_control.enable_builtin_checks;
  if (setting === true) return [...BUILTIN_CHECKS];
  if (setting === false) return [];
  const out: BuiltinCheck[] = [];
  for (const name of setting) {
    if ((BUILTIN_CHECKS as readonly string[]).includes(name)) {
      if (!out.includes(name as BuiltinCheck)) out.push(name as BuiltinCheck);
    } else {
      log.warn(`enable_builtin_checks: unknown built-in check "${name}" skipped (known: ${BUILTIN_CHECKS.join(', ')})`);
    }
  }
  return out;
}

export function registerBuiltins(registry: CheckRegistry, config: Config, log: Logger, types: KnownTypes): void {
  for (const name of availableBuiltins(config, log)) {
    const result = BUILTIN_RESULTS[name];
    // As a plain check function it reads a full view; the service runs it over the kept facts (run.ts).
    registry.registerCheck(
      {
        name,
        label: LABELS[name],
        fn: (view) => result(factsOfView(view, types)),
        required: true,
        scope: CheckScope.POLICY,
      },
      { builtin: true },
    );
  }
}
