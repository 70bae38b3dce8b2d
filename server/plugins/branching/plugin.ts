import type { HostPlugin } from '../../host';
import { registerBranchActions } from './actions-routes';
import { registerBranches } from './branches-routes';
import { registerChanges } from './changes-routes';
import { registerBranchObjectRoutes } from './objects-routes';
import { branchingMigrations } from './db/migrations';
import { digestKeeper } from './digest';

export const BRANCHING_VERSION = '1.2.0';

/** The branching plugin: branches, their changes, and the sync, merge and revert actions (contract 3.4). */
export function branchingPlugin(): HostPlugin {
  return {
    name: 'branching',
    version: BRANCHING_VERSION,
    hostVersion: { min: '4.7.0', max: '4.7.99' },
    migrations: branchingMigrations,
    register(host) {
      host.branchState.register(digestKeeper);
      host.objectTypes.register({ appLabel: 'branching', model: 'branch', display: 'Branch' });
      host.objectTypes.register({ appLabel: 'branching', model: 'changediff', display: 'Change diff' });
      registerBranches(host);
      registerBranchActions(host);
      registerChanges(host);
      registerBranchObjectRoutes(host);
    },
  };
}
