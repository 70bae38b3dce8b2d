import type { Config } from './core/config';
import type { HostPlugin } from './core/host';
import { branchingPlugin } from './branching/plugin';

/** The plugins the service runs with. */
export function defaultPlugins(_config: Config): HostPlugin[] {
  return [branchingPlugin()];
}
