import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { PluginError, HOST_VERSION, inRange, type VersionRange } from '../../../host';
import { CheckResult, CheckScope, type CheckPluginApi, type CheckRegistry } from './registry';

/**
 * In-process check plugins (`check_plugins`, contract 6): module paths relative to the
 * configuration file, or package names, loaded once at start. Each exports `ready(registry)`
 * and may export `hostVersion: {min, max}`; a plugin whose range excludes the running host,
 * that cannot be loaded, or whose `ready` fails, refuses the start.
 */
interface CheckPluginModule {
  ready?: (registry: CheckPluginApi) => unknown;
  hostVersion?: VersionRange;
  default?: CheckPluginModule;
}

function locate(spec: string, configDir: string): string {
  const looksLikePath =
    spec.startsWith('.') || isAbsolute(spec) || spec.endsWith('.js') || spec.endsWith('.cjs') || spec.endsWith('.mjs');
  if (!looksLikePath) return spec;
  return isAbsolute(spec) ? spec : resolve(configDir, spec);
}

function isRange(value: unknown): value is VersionRange {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as VersionRange).min === 'string' &&
    typeof (value as VersionRange).max === 'string'
  );
}

export async function loadCheckPlugins(
  specs: readonly string[],
  configDir: string,
  registry: CheckRegistry,
): Promise<string[]> {
  const loaded: string[] = [];
  const requireFrom = createRequire(resolve(configDir, 'check-plugins.cjs'));
  for (const spec of specs) {
    const target = locate(spec, configDir);
    if (target !== spec && !existsSync(target))
      throw new PluginError(`check plugin "${spec}": file ${target} does not exist`);
    let mod: CheckPluginModule;
    try {
      mod = requireFrom(target) as CheckPluginModule;
    } catch (err) {
      throw new PluginError(`check plugin "${spec}" cannot be loaded: ${(err as Error).message.split('\n')[0]}`);
    }
    if (typeof mod.ready !== 'function' && mod.default) mod = mod.default;
    if (mod.hostVersion !== undefined) {
      if (!isRange(mod.hostVersion))
        throw new PluginError(`check plugin "${spec}": hostVersion must be {min, max} version strings`);
      if (!inRange(HOST_VERSION, mod.hostVersion)) {
        throw new PluginError(
          `check plugin "${spec}" supports host ${mod.hostVersion.min}-${mod.hostVersion.max}, not ${HOST_VERSION}`,
        );
      }
    }
    if (typeof mod.ready !== 'function')
      throw new PluginError(`check plugin "${spec}" does not export ready(registry)`);
    const api: CheckPluginApi = { registerCheck: (def) => registry.registerCheck(def), CheckResult, CheckScope };
    try {
      await mod.ready(api);
    } catch (err) {
      throw new PluginError(`check plugin "${spec}" failed in ready(): ${(err as Error).message}`);
    }
    loaded.push(spec);
  }
  return loaded;
}
