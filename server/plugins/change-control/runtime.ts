import type { HostServices } from '../../host';
import { CheckRegistry } from './checks/registry';
import { stateSlot } from './state';

/** Per-host parts of the plugin: the check registry (filled at start, then sealed). */
export interface ChangeControlRuntime {
  registry: CheckRegistry;
}

export function runtime(host: HostServices): ChangeControlRuntime {
  return stateSlot(host, 'runtime', () => ({ registry: new CheckRegistry() }));
}
