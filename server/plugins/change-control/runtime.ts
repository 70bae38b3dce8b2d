import type { Ctx } from '../../host/core/context';
import type { Host } from '../../host/core/host';
import type { ChangeRequestRow } from './db/tables';
import { CheckRegistry } from './checks/registry';
import type { GateState } from './gate/merge-gate';
import { stateSlot } from './state';

/** Work that follows every refresh of a change request, inside its transaction (automatic merge). */
export type AfterRefresh = (ctx: Ctx, cr: ChangeRequestRow, gate: GateState) => Promise<void>;

/** Per-host parts of the plugin: the check registry and the hooks that follow a refresh. */
export interface ChangeControlRuntime {
  registry: CheckRegistry;
  afterRefresh: AfterRefresh[];
}

export function runtime(host: Host): ChangeControlRuntime {
  return stateSlot(host, 'runtime', () => ({ registry: new CheckRegistry(), afterRefresh: [] }));
}
