import type { Config } from './core/config';
import type { HostPlugin } from './core/host';

/** The plugins the service runs with. */
export function defaultPlugins(_config: Config): HostPlugin[] {
  return [];
}
