import type { Config } from './core/config';
import type { HostPlugin } from './core/host';
import { branchingPlugin } from './branching/plugin';
import { changeControlPlugin } from './change-control/plugin';

/**
 * The plugins the service runs with: branching, and change control on top of it.
 * `configDir` is where relative paths of the configuration (check plugins) are resolved from.
 */
export function defaultPlugins(_config: Config, configDir: string): HostPlugin[] {
  return [branchingPlugin(), changeControlPlugin({ configDir })];
}
