import type { CheckObject, CheckStatus } from '../../../../contract/api/change-control';
import { CHECK_STATUSES } from '../../../../contract/api/change-control';

/**
 * The in-process check registry (specification "Registering checks in process", contract 6).
 * Checks register once, at start, from a plugin's ready hook; registering afterwards throws.
 */
export const CheckScope = {
  /** Applies to every change request (the default). */
  ALWAYS: 'always',
  /** Opt-in: runs only on change requests carrying a policy that names it. */
  POLICY: 'policy',
} as const;
export type CheckScopeValue = (typeof CheckScope)[keyof typeof CheckScope];

export class CheckResult {
  readonly status: CheckStatus;
  readonly summary: string;
  readonly detailsUrl: string;
  /** The objects the result names (the built-in `mergeable` lists what would conflict or fail to apply). */
  readonly objects: readonly CheckObject[];

  constructor(status: CheckStatus, summary = '', detailsUrl = '', objects: readonly CheckObject[] = []) {
    if (!(CHECK_STATUSES as readonly string[]).includes(status)) {
      throw new TypeError(
        `CheckResult: unknown status "${String(status)}" (expected one of: ${CHECK_STATUSES.join(', ')})`,
      );
    }
    this.status = status;
    this.summary = String(summary ?? '');
    this.detailsUrl = String(detailsUrl ?? '');
    this.objects = Array.isArray(objects) ? objects : [];
  }

  static passed(summary = ''): CheckResult {
    return new CheckResult('success', summary);
  }

  static failed(summary: string): CheckResult {
    return new CheckResult('failure', summary);
  }

  static skipped(summary = ''): CheckResult {
    return new CheckResult('skipped', summary);
  }
}

/** The read-only view of a change request a check function receives. */
export interface CheckView {
  readonly id: number;
  readonly title: string;
  readonly ref: string;
  readonly status: string;
  readonly priority: string;
  readonly requester: number | null;
  readonly scheduled_start: string | null;
  readonly scheduled_end: string | null;
  readonly branch: Readonly<{
    id: number;
    name: string;
    status: string;
    schema_id: string;
    last_sync: string | null;
    created: string;
    stale: boolean;
  }> | null;
  readonly branch_name: string;
  readonly branch_deleted: boolean;
  readonly changes: ReadonlyArray<
    Readonly<{
      id: number;
      object_type: string;
      object_id: number;
      object_repr: string;
      action: string;
      original: Readonly<Record<string, unknown>> | null;
      modified: Readonly<Record<string, unknown>> | null;
      current: Readonly<Record<string, unknown>> | null;
      conflicts: readonly string[] | null;
    }>
  >;
  readonly reviews: ReadonlyArray<Readonly<{ id: number; reviewer: number; decision: string; stale: boolean }>>;
  /** Comment threads (root comments) and whether each is resolved. */
  readonly threads: ReadonlyArray<Readonly<{ id: number; change_diff: number | null; resolved: boolean }>>;
}

export type CheckFunction = (changeRequest: CheckView) => CheckResult | Promise<CheckResult>;

export interface CheckRegistration {
  name: string;
  label?: string;
  fn: CheckFunction;
  required?: boolean;
  scope?: CheckScopeValue;
}

export interface RegisteredCheck {
  name: string;
  label: string;
  fn: CheckFunction;
  required: boolean;
  scope: CheckScopeValue;
  builtin: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}$/;

export class CheckRegistry {
  private readonly checks = new Map<string, RegisteredCheck>();
  private sealed = false;

  /** Registers a check; only before the service has started. */
  registerCheck(def: CheckRegistration, options: { builtin?: boolean } = {}): void {
    if (this.sealed)
      throw new Error(
        `registerCheck("${def?.name}"): checks can only be registered at start, from a plugin's ready hook`,
      );
    if (typeof def?.name !== 'string' || !NAME.test(def.name)) {
      throw new TypeError(
        `registerCheck: name must be 1-100 characters of letters, digits and _ . : / - (got ${JSON.stringify(def?.name)})`,
      );
    }
    if (typeof def.fn !== 'function') throw new TypeError(`registerCheck("${def.name}"): fn must be a function`);
    const scope = def.scope ?? CheckScope.ALWAYS;
    if (scope !== CheckScope.ALWAYS && scope !== CheckScope.POLICY)
      throw new TypeError(`registerCheck("${def.name}"): unknown scope "${String(scope)}"`);
    if (this.checks.has(def.name)) throw new Error(`registerCheck: a check named "${def.name}" is already registered`);
    this.checks.set(def.name, {
      name: def.name,
      label: def.label?.trim() || def.name,
      fn: def.fn,
      required: def.required ?? true,
      scope,
      builtin: options.builtin ?? false,
    });
  }

  /** Ends registration (the service has started). */
  seal(): void {
    this.sealed = true;
  }

  get isSealed(): boolean {
    return this.sealed;
  }

  get(name: string): RegisteredCheck | undefined {
    return this.checks.get(name);
  }

  all(): RegisteredCheck[] {
    return [...this.checks.values()];
  }
}

/** What a check plugin's `ready(registry)` receives. */
export interface CheckPluginApi {
  registerCheck(def: CheckRegistration): void;
  CheckResult: typeof CheckResult;
  CheckScope: typeof CheckScope;
}
