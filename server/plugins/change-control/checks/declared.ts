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
  /**
   * Who alone may report it: every restriction listed must admit the reporter (users and groups
   * by id from policies, by name from the configuration). Empty: anyone holding change_mergecheck.
   */
  reporters?: ReporterRestriction[];
  /** A required reported check still pending after this many minutes fails as never reported. */
  timeoutMinutes?: number | null;
}

export interface ReporterRestriction {
  users: Array<number | string>;
  groups: Array<number | string>;
}

/** A governing policy as the declarations read it. */
export interface CheckSource {
  checks: readonly string[];
  enforcement?: 'active' | 'evaluate';
  checkSettings?: Readonly<
    Record<string, { reporter: { users: number[]; groups: number[] } | null; timeout_minutes: number | null }>
  >;
}

/** Whether a user (id, name, groups by id and name) is admitted by every restriction. */
export function reporterAdmitted(
  restrictions: readonly ReporterRestriction[],
  user: { id: number; username: string; groupIds: readonly number[]; groupNames: readonly string[] },
): boolean {
  return restrictions.every(
    (r) =>
      r.users.some((u) => u === user.id || u === user.username) ||
      r.groups.some((g) => user.groupIds.includes(g as number) || user.groupNames.includes(g as string)),
  );
}

function minTimeout(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null) return b ?? null;
  if (b == null) return a;
  return Math.min(a, b);
}

/** `required_external_checks` as `{name, label}` pairs. */
export function configuredExternalChecks(config: Config): Array<{ name: string; label: string }> {
  return configuredExternalCheckEntries(config).map(({ name, label }) => ({ name, label }));
}

/** A check declared in `required_external_checks`, with its reporter restriction and timeout. */
export interface ConfiguredExternalCheck {
  name: string;
  label: string;
  /** Who alone may report it (usernames and group names); null: anyone holding change_mergecheck. */
  reporter: { users: string[]; groups: string[] } | null;
  timeoutMinutes: number | null;
}

export function configuredExternalCheckEntries(config: Config): ConfiguredExternalCheck[] {
  return config.change_control.required_external_checks.map((entry) => {
    if (typeof entry === 'string') return { name: entry, label: entry, reporter: null, timeoutMinutes: null };
    if (Array.isArray(entry))
      return { name: entry[0], label: entry[1] || entry[0], reporter: null, timeoutMinutes: null };
    return {
      name: entry.name,
      label: entry.label || entry.name,
      reporter: entry.reporter ?? null,
      timeoutMinutes: entry.timeout_minutes ?? null,
    };
  });
}

/**
 * The checks declared for a request. `sources` are its governing policies (or bare lists of
 * names). A check named only by policies in `evaluate` enforcement is declared but advisory:
 * evaluating policies never block.
 */
export function declaredChecks(
  registry: CheckRegistry,
  config: Config,
  sources: readonly (CheckSource | string)[],
): DeclaredCheck[] {
  const out = new Map<string, DeclaredCheck>();
  for (const check of registry.all()) {
    if (check.scope === CheckScope.ALWAYS)
      out.set(check.name, { name: check.name, label: check.label, required: check.required, registered: check });
  }
  const policies: CheckSource[] = sources.map((s) => (typeof s === 'string' ? { checks: [s] } : s));
  // Active policies first: a check an active policy names is required even if an evaluating one names it too.
  const ordered = [
    ...policies.filter((p) => p.enforcement !== 'evaluate'),
    ...policies.filter((p) => p.enforcement === 'evaluate'),
  ];
  for (const source of ordered) {
    const evaluating = source.enforcement === 'evaluate';
    for (const name of source.checks) {
      const settings = source.checkSettings?.[name];
      let d = out.get(name);
      if (!d) {
        const check = registry.get(name);
        d = check
          ? { name, label: check.label, required: check.required && !evaluating, registered: check }
          : { name, label: name, required: !evaluating };
        out.set(name, d);
      }
      if (settings?.reporter && !d.registered) d.reporters = [...(d.reporters ?? []), settings.reporter];
      if (settings?.timeout_minutes && !d.registered && !evaluating)
        d.timeoutMinutes = minTimeout(d.timeoutMinutes, settings.timeout_minutes);
    }
  }
  for (const entry of configuredExternalCheckEntries(config)) {
    let d = out.get(entry.name);
    if (!d) {
      d = { name: entry.name, label: entry.label, required: true };
      out.set(entry.name, d);
    } else if (!d.registered) d.required = true;
    if (d.registered) continue;
    if (entry.reporter) d.reporters = [...(d.reporters ?? []), entry.reporter];
    if (entry.timeoutMinutes) d.timeoutMinutes = minTimeout(d.timeoutMinutes, entry.timeoutMinutes);
  }
  return [...out.values()];
}

export const PASSING = ['success', 'skipped'] as const;

/** Whether a check in this status clears the gate. */
export function clearsGate(status: string | null | undefined): boolean {
  return status === 'success' || status === 'skipped';
}
