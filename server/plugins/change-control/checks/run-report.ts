import { BUILTIN_CHECKS, type CheckRunEntry, type CheckStatus } from '../../../../contract/api/change-control';
import type { Config } from '../../../host';
import { configuredExternalChecks, type DeclaredCheck } from './declared';
import { CheckScope, type RegisteredCheck } from './registry';

/**
 * What a re-run did with each check (pure): a registered check the request carries ran; every
 * other one says why it did not, so "Re-run Checks" can tell the user:
 *
 * - a reported (external) check is never run by the service: it waits for a report;
 * - a built-in named by a policy but left out by `enable_builtin_checks` is treated as a
 *   reported check (and so waits for a report too);
 * - a registered check of scope POLICY that no governing policy names does not apply.
 */
export interface RunReportInput {
  declared: readonly DeclaredCheck[];
  registered: readonly RegisteredCheck[];
  /** Stored results by check name. */
  results: ReadonlyMap<string, CheckStatus>;
  /** The governing policies' names and the check names each carries. */
  policies: ReadonlyArray<{ name: string; checks: readonly string[] }>;
  config: Config;
}

function quoted(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(', ');
}

function declaredBy(name: string, input: RunReportInput): string {
  const sources: string[] = [];
  const naming = input.policies.filter((p) => p.checks.includes(name)).map((p) => p.name);
  if (naming.length > 0) sources.push(`${naming.length === 1 ? 'policy' : 'policies'} ${quoted(naming)}`);
  if (configuredExternalChecks(input.config).some((c) => c.name === name)) sources.push('required_external_checks');
  return sources.join(' and ') || 'its declaration';
}

export function checkRunReport(input: RunReportInput): CheckRunEntry[] {
  const entries: CheckRunEntry[] = input.declared.map((d) => {
    const status = input.results.get(d.name) ?? null;
    if (d.registered) return { name: d.name, label: d.label, ran: true, status, reason: null };
    const builtin = (BUILTIN_CHECKS as readonly string[]).includes(d.name);
    const reason = builtin
      ? `"${d.name}" is a built-in check that enable_builtin_checks leaves out, so the service does not run it; named by ${declaredBy(d.name, input)}, it waits for a reported result like an external check.`
      : `A reported check (declared by ${declaredBy(d.name, input)}): the service never runs it; it waits for a result reported from outside (PATCH checks/{id}/).`;
    return { name: d.name, label: d.label, ran: false, status, reason };
  });
  const carried = new Set(input.declared.map((d) => d.name));
  for (const check of input.registered) {
    if (carried.has(check.name) || check.scope !== CheckScope.POLICY) continue;
    const governing = input.policies.map((p) => p.name);
    const reason =
      governing.length === 0
        ? 'Runs only when a policy governing the change request names it; no policy governs this one.'
        : `Runs only when a policy governing the change request names it; none of its policies (${quoted(governing)}) does.`;
    entries.push({
      name: check.name,
      label: check.label,
      ran: false,
      status: input.results.get(check.name) ?? null,
      reason,
    });
  }
  return entries;
}
