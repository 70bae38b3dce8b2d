import type { Config, Logger } from '../../../host';
import type { CheckObject } from '../../../../contract/api/change-control';
import { BUILTIN_CHECKS, type BuiltinCheck } from '../../../../contract/api/change-control';
import { CheckResult, CheckScope, type CheckRegistry, type CheckView } from './registry';

/** What the `mergeable` check knows of the catalogue: whether an object type can still be written on main. */
export interface KnownTypes {
  has(name: string): boolean;
}

/**
 * `mergeable`: the branch's merge as a dry run. Each change is taken against main's object as
 * it stands now, as the merge would apply it, and nothing is written. It fails listing every
 * object that would conflict (attributes main and the branch both changed, to different
 * values; an object main deleted that the branch updates, or updated that the branch deletes)
 * or fail to apply (a created object whose id main already holds; an object type the
 * catalogue no longer knows), or when the branch is not ready to merge.
 */
export function mergeableCheck(types: KnownTypes): (cr: CheckView) => CheckResult {
  return (cr) => {
    if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
    if (cr.branch.status !== 'ready') return CheckResult.failed(`Branch "${cr.branch.name}" is ${cr.branch.status}; only a ready branch can merge.`);
    const objects: CheckObject[] = [];
    for (const c of cr.changes) {
      const ref = { object_type: c.object_type, object_id: c.object_id, object_repr: c.object_repr };
      if (!types.has(c.object_type)) objects.push({ ...ref, problem: `Its object type ${c.object_type} is no longer in the catalogue.` });
      else if (c.action === 'create' && c.current !== null) objects.push({ ...ref, problem: 'Main already holds an object with this id.' });
      else if (c.action === 'update' && c.current === null) objects.push({ ...ref, problem: 'Main deleted it since the branch changed it.' });
      else if (c.conflicts) objects.push({ ...ref, problem: `Conflicts with main on ${c.conflicts.join(', ')}.` });
    }
    if (objects.length === 0) return new CheckResult('success', `The merge applies cleanly (${count(cr.changes.length, 'change', 'changes')}).`);
    const shown = objects.slice(0, 5).map((o) => o.object_repr);
    const more = objects.length > shown.length ? ` and ${objects.length - shown.length} more` : '';
    return new CheckResult('failure', `${count(objects.length, 'object', 'objects')} would conflict or fail to apply: ${shown.join('; ')}${more}.`, '', objects);
  };
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

export const BUILTINS: Record<Exclude<BuiltinCheck, 'mergeable'>, { label: string; fn: (cr: CheckView) => CheckResult }> = {
  'has-changes': {
    label: 'Branch has changes',
    fn: (cr) => {
      if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
      if (cr.changes.length === 0) return CheckResult.failed('The branch has nothing to merge.');
      return CheckResult.passed(`${count(cr.changes.length, 'change', 'changes')} to merge.`);
    },
  },
  'no-conflicts': {
    label: 'No conflicts with main',
    fn: (cr) => {
      if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
      const conflicting = cr.changes.filter((c) => c.conflicts !== null);
      if (conflicting.length === 0) return CheckResult.passed('No conflicts with main.');
      const shown = conflicting.slice(0, 5).map((c) => `${c.object_repr} (${(c.conflicts ?? []).join(', ') || c.action})`);
      const more = conflicting.length > shown.length ? ` and ${conflicting.length - shown.length} more` : '';
      return CheckResult.failed(`${count(conflicting.length, 'change conflicts', 'changes conflict')} with main: ${shown.join('; ')}${more}.`);
    },
  },
  'not-stale': {
    label: 'Branch not stale',
    fn: (cr) => {
      if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
      if (cr.branch.stale) {
        const since = cr.branch.last_sync ? `last synced ${cr.branch.last_sync}` : `created ${cr.branch.created} and never synced`;
        return CheckResult.failed(`The branch is too far behind main to sync safely (${since}).`);
      }
      return CheckResult.passed('The branch is recent enough to sync safely.');
    },
  },
  'threads-resolved': {
    label: 'Comment threads resolved',
    fn: (cr) => {
      if (!cr.branch) return CheckResult.skipped(BRANCH_GONE);
      const open = cr.threads.filter((t) => !t.resolved).length;
      if (open > 0) return CheckResult.failed(`${count(open, 'comment thread is', 'comment threads are')} still open.`);
      return CheckResult.passed(cr.threads.length === 0 ? 'No comment threads.' : 'Every comment thread is resolved.');
    },
  },
};

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
    const def = name === 'mergeable' ? { label: MERGEABLE_LABEL, fn: mergeableCheck(types) } : BUILTINS[name];
    registry.registerCheck({ name, label: def.label, fn: def.fn, required: true, scope: CheckScope.POLICY }, { builtin: true });
  }
}
