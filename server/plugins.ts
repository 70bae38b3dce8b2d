import type { Config } from './host/core/config';
import type { HostPlugin } from './host/host';
import { branchingPlugin } from './plugins/branching/plugin';
import { changeControlPlugin } from './plugins/change-control/plugin';

/**
 * The plugins the service runs with: branching, and change control on top of it.
 * `configDir` is where relative paths of the configuration (check plugins) are resolved from.
 */
export function defaultPlugins(_config: Config, configDir: string): HostPlugin[] {
  return [branchingPlugin(), changeControlPlugin({ configDir })];
}
