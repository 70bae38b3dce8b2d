import type { Config } from '../../../host';
import { CheckScope, type CheckRegistry, type RegisteredCheck } from './registry';

/**
 * Which checks a change request carries and whether each is required (pure). Required-ness
 * comes from the registry, the configuration and the governing policies, never from a stored row:
 *
 * - a registered check of scope ALWAYS applies to every request;
 * - a registered check of scope POLICY (the built-ins among them) applies only when a governing
 *   policy names it;
 * - a name in a governing policy's `checks` that nothing registers is a reported (external) check;
 * - `required_external_checks` declares reported checks for every request.
 *
 * A registered check is required unless registered with `required: false` (advisory); a
 * reported check is always required: it blocks until something outside reports a result.
 */
export interface DeclaredCheck {
  name: string;
  label: string;
  required: boolean;
  /** The registered check, or undefined for a reported (external) one. */
  registered?: RegisteredCheck;
}

/** `required_external_checks` as `{name, label}` pairs. */
export function configuredExternalChecks(config: Config): Array<{ name: string; label: string }> {
  return config.change_control.required_external_checks.map((entry) =>
    typeof entry === 'string' ? { name: entry, label: entry } : { name: entry[0], label: entry[1] || entry[0] },
  );
}

export function declaredChecks(registry: CheckRegistry, config: Config, policyCheckNames: readonly string[]): DeclaredCheck[] {
  const out = new Map<string, DeclaredCheck>();
  for (const check of registry.all()) {
    if (check.scope === CheckScope.ALWAYS) out.set(check.name, { name: check.name, label: check.label, required: check.required, registered: check });
  }
  for (const name of policyCheckNames) {
    if (out.has(name)) continue;
    const check = registry.get(name);
    if (check) out.set(name, { name, label: check.label, required: check.required, registered: check });
    else out.set(name, { name, label: name, required: true });
  }
  for (const { name, label } of configuredExternalChecks(config)) {
    if (!out.has(name)) out.set(name, { name, label, required: true });
  }
  return [...out.values()];
}

export const PASSING = ['success', 'skipped'] as const;

/** Whether a check in this status clears the gate. */
export function clearsGate(status: string | null | undefined): boolean {
  return status === 'success' || status === 'skipped';
}
