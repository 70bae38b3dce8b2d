import {
  BUILTIN_CHECKS,
  pluginSettings,
  type BuiltinCheck,
  type PluginSettings,
} from '../../../contract/api/change-control';
import type { Config, Host, HostServices } from '../../host';
import { configuredExternalChecks } from './checks/declared';
import { API_ROOT } from './names';
import { runtime } from './runtime';

/** The placement as a list: the configuration also accepts a single string. */
export function branchPagePlacement(config: Config): PluginSettings['branch_page_placement'] {
  const value = config.change_control.branch_page_placement;
  return typeof value === 'string' ? [value] : [...new Set(value)];
}

/** The settings the service applies, for clients (the extension places its panel from them). */
export function effectiveSettings(host: HostServices): PluginSettings {
  const cc = host.config.change_control;
  const available = new Set(
    runtime(host)
      .registry.all()
      .filter((c) => c.builtin)
      .map((c) => c.name),
  );
  return {
    enable_builtin_checks: BUILTIN_CHECKS.filter((name): name is BuiltinCheck => available.has(name)),
    required_external_checks: configuredExternalChecks(host.config),
    branch_page_placement: branchPagePlacement(host.config),
    protect_main: cc.protect_main,
    protect_main_scope: [...cc.protect_main_scope],
    enforce_merge_gate: cc.enforce_merge_gate,
    notify_reviewers: cc.notify_reviewers,
    enable_auto_merge: cc.enable_auto_merge,
    auto_merge_interval: cc.auto_merge_interval,
    contributors_can_approve: cc.contributors_can_approve,
  };
}

/** GET `settings/`: the effective plugin settings, for any signed-in user. */
export function registerSettingsRoute(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: `${API_ROOT}settings/`,
    access: { authenticated: true },
    summary:
      'The effective plugin settings (built-ins available, declared external checks, branch page placement, protect_main, merge gate and automatic merge)',
    tag: 'change-control',
    response: pluginSettings,
    handler: async ({ ctx }) => effectiveSettings(ctx.host),
  });
}
